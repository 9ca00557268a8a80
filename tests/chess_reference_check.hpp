// The comparison of built chess tables with the independent solver of chess_reference.hpp, every
// legal position of a table in both colourings and with both sides to move (shared by the test
// of the small tables and the long test of every 4-piece table).
// Thread safety: none.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "chess_reference.hpp"
#include "retra/probe.hpp"
#include "src/games/chess/solver.hpp"
#include "src/games/chess/values.hpp"

namespace retra::chess::check {

// Every legal board with the pieces of `m` (pawns on ranks 2..7), with both sides to move; with
// `every` > 1, the legal ones among every every-th placement and side to move (a sample: the
// legality check costs more than most tests' work on a board).
template <class F>
void for_each_board(const Material& m, F&& f, std::uint64_t every = 1) {
  std::vector<std::uint8_t> codes;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t)
      for (int k = 0; k < m.count[c][t]; ++k) codes.push_back(code(PieceType(t), Color(c)));
  Board b;
  std::uint64_t seen = 0;
  std::function<void(std::size_t, int)> place = [&](std::size_t i, int min_sq) {
    if (i == codes.size()) {
      for (Color side : {white, black}) {
        if (++seen % every != 0) continue;
        b.side = side;
        if (!board_error(b)) f(b);
      }
      return;
    }
    // Identical pieces in ascending squares, so that each placement comes once.
    const int from = i > 0 && codes[i] == codes[i - 1] ? min_sq + 1 : 0;
    for (int s = from; s < 64; ++s) {
      if (b.piece[s]) continue;
      if (type_of(codes[i]) == pawn && (rank_of(s) == 0 || rank_of(s) == 7)) continue;
      b.piece[s] = codes[i];
      place(i + 1, s);
      b.piece[s] = 0;
    }
  };
  place(0, 0);
}

// The tables' values of a board in byte codes (for the conversions of the reference).
inline reference::Solver::Values tables(const probe::Prober& db, const Board& b) {
  const probe::ChessValue v = db.chess(bitboards_of(b));
  EXPECT_TRUE(v) << to_fen(b) << ": " << v.message;
  reference::Solver::Values out;
  out.dtz = v.wdl == draw ? 0 : v.wdl > 0 ? 2 * v.dtz + 1 : 2 * -v.dtz + 2;
  out.dtm = !v.has_dtm ? 0 : v.dtm > 0 ? v.dtm + 2 : -v.dtm + 2;
  return out;
}

// The reference's DTM bytes (Fang's encoding, plies + 2) as signed plies.
inline std::optional<int> reference_dtm(int b) {
  if (b == 0) return std::nullopt;
  return (b & 1) ? b - 2 : -(b - 2);
}

inline void expect_equal_to_reference(const probe::Prober& db, const std::string& name) {
  const Material m = *parse_material(name);
  reference::Solver ref(m, [&](const Board& b) { return tables(db, b); });
  std::uint64_t checked = 0, wrong = 0;
  for (const Material& coloured : {m, m.flipped()}) {
    for_each_board(coloured, [&](const Board& b) {
      const auto want = ref.value(b);
      const Dtz z = decode_dtz(want.dtz);
      const auto dtm = reference_dtm(want.dtm);
      const probe::ChessValue got = db.chess(bitboards_of(b));
      ++checked;
      if (!got || got.wdl != z.wdl || got.dtz != z.dtz || got.has_dtm != dtm.has_value() ||
          (dtm && got.dtm != *dtm)) {
        if (++wrong <= 5)
          ADD_FAILURE() << name << " " << to_fen(b) << ": tables " << wdl_name(got.wdl) << " dtz "
                        << got.dtz << " dtm " << (got.has_dtm ? std::to_string(got.dtm) : "-")
                        << " " << got.message << "; reference " << wdl_name(z.wdl) << " dtz "
                        << z.dtz << " dtm " << (dtm ? std::to_string(*dtm) : "-");
      }
    });
    if (m.symmetric()) break;
  }
  EXPECT_EQ(wrong, 0u) << checked << " positions of " << name << " checked";
  EXPECT_GT(checked, 10000u);
}

}  // namespace retra::chess::check
