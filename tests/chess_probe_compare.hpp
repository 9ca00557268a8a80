// Two chess databases' answers compared (the same tables stored two ways: class halves, don't-care
// entries): a position's values, and every move at its root with its values.
// Thread safety: none (gtest assertions).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "retra/probe.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/solver.hpp"
#include "src/games/chess/values.hpp"

namespace retra::chess::check {

inline bool same(const probe::ChessValue& a, const probe::ChessValue& b) {
  return a.status == b.status && a.wdl == b.wdl && a.dtz == b.dtz && a.has_dtm == b.has_dtm &&
         (!a.has_dtm || a.dtm == b.dtm) && a.outcome == b.outcome;
}

inline std::string text(const probe::ChessValue& v) {
  return fmt::format("{} dtz {} dtm {} outcome {} {}", wdl_name(v.wdl), v.dtz,
                     v.has_dtm ? std::to_string(v.dtm) : "-", v.outcome, v.message);
}

// Both rank the same legal moves of b in the same order with the same values, and give b the
// same values.
inline void expect_same_root(const probe::Prober& a, const probe::Prober& c, const Board& b) {
  const probe::ChessBoard cb = bitboards_of(b);
  std::vector<probe::ChessMove> x(256), y(256);
  probe::ChessValue px, py;
  const int n = a.chess_root(cb, x, &px);
  ASSERT_EQ(c.chess_root(cb, y, &py), n) << to_fen(b);
  EXPECT_TRUE(same(px, py)) << to_fen(b) << ": " << text(px) << "; " << text(py);
  for (int i = 0; i < n; ++i) {
    const auto& u = x[static_cast<std::size_t>(i)];
    const auto& v = y[static_cast<std::size_t>(i)];
    EXPECT_TRUE(u.from == v.from && u.to == v.to && u.promotion == v.promotion &&
                same(u.value, v.value))
        << to_fen(b) << " move " << i << ": " << text(u.value) << "; " << text(v.value);
  }
}

}  // namespace retra::chess::check
