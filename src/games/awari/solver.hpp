// The Awari adapter of the generic proof-number engine (src/solve/pn_engine.hpp,
// src/solve/engine_solver.hpp). One goal per search: "the side to move at the root (OR) ends with
// a final difference >= T". A state carries its board (seen from its mover), whose turn it is and
// `need`, the difference OR still needs from here on (captures along the path move it). Exact
// leaves: positions inside the databases, positions without moves (rules 3 and 4), goals out of
// reach (|need| > stones), and a position repeating one on the current path: endless play adds 0
// (spec rule 5), and because cycles capture nothing, ending the game at the first repetition gives
// the same value as the infinite game (Ehrenfeucht-Mycielski). The PN-family trees merge no
// transpositions, so they have no graph-history interaction; df-pn's table never stores a result
// that rests on a repetition (docs/SOLVER.md).
// Thread safety: one search per adapter.
#pragma once

#include <array>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "src/games/awari/board.hpp"
#include "src/solve/engine_solver.hpp"

namespace retra::awari {

struct SolverAdapter {
  using Outcome = solve::Outcome;
  struct State {
    Board b;       // seen from its mover
    int need = 0;  // OR's required final difference from here on
    bool or_turn = true;
  };
  using Root = Board;

  const probe::Prober& db;
  int db_max;  // positions with at most this many stones are read from the database
  std::optional<Error> error;

  SolverAdapter(const probe::Prober& prober, int leaf_max, const solve::Options&)
      : db(prober), db_max(leaf_max) {}

  static Result<Board> parse(std::string_view text) { return parse_board(text); }
  // The final difference lies in [-n, n].
  static std::pair<int, int> range(const Board& b) { return {-b.stones(), b.stones()}; }
  State root(const Board& b, int threshold) const { return {b, threshold, true}; }

  static std::array<int, 12> pits_of(const Board& b) {
    std::array<int, 12> p;
    for (int i = 0; i < 12; ++i) p[i] = b.pit[i];
    return p;
  }

  Outcome exact(const State& s) {
    const int n = s.b.stones();
    if (s.need <= -n) return Outcome::proven;  // OR cannot end below -n
    if (s.need > n) return Outcome::disproven;
    int v;
    if (n <= db_max) {
      const probe::Value pv = db.awari(pits_of(s.b));
      if (!pv) {
        if (!error) error = Error(Errc::corrupt, pv.message);
        return Outcome::disproven;  // the search stops at the error
      }
      v = pv.value;
    } else {
      bool any = false;
      for (int i = 0; i < kSidePits && !any; ++i) any = make_move(s.b, i).legal();
      if (any) return Outcome::unknown;
      v = no_move_value(s.b);
    }
    return (s.or_turn ? v : -v) >= s.need ? Outcome::proven : Outcome::disproven;
  }

  // Legal moves in pit order.
  static void children(const State& s, std::vector<State>& out) {
    out.clear();
    for_each_legal_move(s.b, [&](int, const MoveResult& m) {
      State c;
      c.b = m.child;
      c.or_turn = !s.or_turn;
      c.need = s.or_turn ? s.need - m.captured : s.need + m.captured;
      out.push_back(c);
    });
  }

  // From OR's view: the store difference relative to the goal (100 per stone) first, then
  // mobility (legal moves of OR minus those of AND, 10 each).
  int eval(const State& s) {
    const auto moves = [](const Board& b) {
      int k = 0;
      for (int i = 0; i < kSidePits; ++i) k += make_move(b, i).legal();
      return k;
    };
    const int mine = moves(s.b);
    const int theirs = moves(detail::store(detail::flip(detail::load(s.b))));
    const int mob = s.or_turn ? mine - theirs : theirs - mine;
    return -100 * s.need + 10 * mob;
  }

  // Endless play adds 0 to the difference.
  static Outcome repetition(const State& s) {
    return s.need <= 0 ? Outcome::proven : Outcome::disproven;
  }

  static std::uint64_t key(const State& s) {
    std::uint64_t lo, hi;
    std::memcpy(&lo, s.b.pit.data(), 8);
    std::memcpy(&hi, s.b.pit.data() + 8, 8);
    std::uint64_t h =
        lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (static_cast<std::uint64_t>(s.need + 128) << 1 | s.or_turn) * 0x165667B19E3779F9ull;
    return h ^ (h >> 29);
  }
  static int era(const State& s) { return s.b.stones(); }
  static bool same(const State& a, const State& b) {
    return a.or_turn == b.or_turn && a.need == b.need && a.b == b.b;
  }
  bool failed() const { return error.has_value(); }
};
static_assert(solve::SolverAdapter<SolverAdapter>);

}  // namespace retra::awari
