// The chess adapter of the generic proof-number engine (src/solve/pn_engine.hpp,
// src/solve/engine_solver.hpp), for positions beyond the tables (6-7 pieces) with the tables as
// exact leaves. One goal per search: "the side to move at the root (OR) wins" (need 1) or "OR does
// not lose" (need 0), the 50-move rule ignored (a cursed win counts as a win, as the tables'
// WDL without the rule). Exact leaves: mate (a loss), stalemate (a draw), a position whose table
// the database holds (its WDL, at most max_pieces pieces), the bare kings (a draw), and a position
// repeating one on the current path: a draw (endless play; in chess a threefold repetition).
// Thread safety: one search per adapter.
#pragma once

#include <algorithm>
#include <bit>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <xxhash.h>

#include "src/games/chess/board.hpp"
#include "src/solve/engine_solver.hpp"

namespace retra::chess {

// The bitboards of a board, for the probing library's chess entry points.
probe::ChessBoard bitboards_of(const Board& b);

struct SolverAdapter {
  using Outcome = solve::Outcome;
  struct State {
    Board b;
    std::uint8_t pieces = 0;
    bool or_turn = true;
    std::int8_t need = 1;  // 1: OR must win; 0: OR must not lose
  };

  const probe::Prober& db;
  int max_pieces;
  std::optional<Error> error;
  int t = 100;

  SolverAdapter(const probe::Prober& prober, int leaf_max, const solve::Options& opt)
      : db(prober), max_pieces(leaf_max), t(opt.t) {}

  using Root = Board;
  static Result<Board> parse(std::string_view text) { return parse_fen(text); }
  static std::pair<int, int> range(const Board&) { return {-1, 1}; }
  State root(const Board& b, int threshold) const {
    State s;
    s.b = b;
    s.b.halfmove = 0;
    s.b.fullmove = 1;
    s.pieces = static_cast<std::uint8_t>(std::popcount(b.occupied()));
    s.need = static_cast<std::int8_t>(std::clamp(threshold, 0, 1));
    return s;
  }

  static Outcome decide(const State& s, int v) {
    return (s.or_turn ? v : -v) >= s.need ? Outcome::proven : Outcome::disproven;
  }

  Outcome exact(const State& s) {
    if (s.pieces == 2) return decide(s, 0);
    if (s.pieces <= max_pieces) {
      const probe::Value v = db.chess_wdl(bitboards_of(s.b));
      if (v) return decide(s, v.value > 0 ? 1 : v.value < 0 ? -1 : 0);
      if (v.status != probe::Status::not_found) {  // a damaged file: stop and report
        if (!error) error = Error(Errc::corrupt, v.message);
        return Outcome::disproven;
      }
    }
    if (legal_move_count(s.b) == 0) return decide(s, in_check(s.b, s.b.side) ? -1 : 0);
    return Outcome::unknown;
  }

  void children(const State& s, std::vector<State>& out) const {
    out.clear();
    for_each_legal_move(s.b, [&](const Move& m) {
      State c;
      c.b = play(s.b, m);
      c.b.halfmove = 0;
      c.b.fullmove = 1;
      c.pieces = static_cast<std::uint8_t>(s.pieces - (m.capture ? 1 : 0));
      c.or_turn = !s.or_turn;
      c.need = s.need;
      out.push_back(c);
    });
  }

  // From OR's view: material (pawns 100, knights and bishops 300, rooks 500, queens 900) and
  // 10 per legal move more than the opponent's; the draw goal (need 0) is shifted up by t.
  int eval(const State& s) const {
    static constexpr int kValue[kTypes] = {0, 900, 500, 300, 300, 100};
    int material = 0;
    for (std::uint8_t pc : s.b.piece)
      if (pc) material += (color_of(pc) == s.b.side ? 1 : -1) * kValue[type_of(pc)];
    Board other = s.b;
    other.side = opposite(s.b.side);
    other.ep = -1;
    const int mob = 10 * (legal_move_count(s.b) - legal_move_count(other));
    const int mover = material + mob;
    return (s.or_turn ? mover : -mover) + (s.need == 0 ? t : 0);
  }

  static Outcome repetition(const State& s) { return decide(s, 0); }
  static std::uint64_t key(const State& s) {
    const std::uint64_t seed =
        (std::uint64_t{s.b.side} << 10) | (static_cast<std::uint64_t>(s.b.ep + 1) << 2) |
        (std::uint64_t{s.or_turn} << 1) | static_cast<std::uint64_t>(s.need & 1);
    return XXH3_64bits_withSeed(s.b.piece.data(), s.b.piece.size(), seed);
  }
  static int era(const State& s) { return s.pieces; }
  static bool same(const State& a, const State& b) {
    return a.or_turn == b.or_turn && a.need == b.need && a.b.side == b.b.side && a.b.ep == b.b.ep &&
           a.b.piece == b.b.piece;
  }
  bool failed() const { return error.has_value(); }
};
static_assert(solve::SolverAdapter<SolverAdapter>);

}  // namespace retra::chess
