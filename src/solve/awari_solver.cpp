// Proof-number solvers for Awari positions beyond the built databases (include/retra/solve.hpp):
// the Awari adapter of the generic engine (pn_engine.hpp). One goal per search: "the side to move
// at the root (OR) ends with a final difference >= T". A state carries its board (seen from its
// mover), whose turn it is and `need`, the difference OR still needs from here on (captures along
// the path move it). Exact leaves: positions inside the databases, positions without moves (rules
// 3 and 4), goals out of reach (|need| > stones), and a position repeating one on the current
// path: endless play adds 0 (spec rule 5), and because cycles capture nothing, ending the game at
// the first repetition gives the same value as the infinite game (Ehrenfeucht–Mycielski). The
// PN-family trees merge no transpositions, so they have no graph-history interaction; df-pn's
// table never stores a result that rests on a repetition (docs/SOLVER.md).
// Thread safety: one search per adapter and engine.
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "pn_engine.hpp"
#include "src/games/awari/board.hpp"

namespace retra::solve {

namespace {

using awari::Board;

struct AwariGame {
  struct State {
    Board b;       // seen from its mover
    int need = 0;  // OR's required final difference from here on
    bool or_turn = true;
  };

  const probe::Prober& db;
  int db_max;
  std::optional<Error> error;

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
      for (int i = 0; i < awari::kSidePits && !any; ++i) any = awari::make_move(s.b, i).legal();
      if (any) return Outcome::unknown;
      v = awari::no_move_value(s.b);
    }
    return (s.or_turn ? v : -v) >= s.need ? Outcome::proven : Outcome::disproven;
  }

  // Legal moves in pit order.
  static void children(const State& s, std::vector<State>& out) {
    out.clear();
    awari::for_each_legal_move(s.b, [&](int, const awari::MoveResult& m) {
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
      for (int i = 0; i < awari::kSidePits; ++i) k += awari::make_move(b, i).legal();
      return k;
    };
    const int mine = moves(s.b);
    const int theirs = moves(awari::detail::store(awari::detail::flip(awari::detail::load(s.b))));
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
static_assert(detail::SolverGame<AwariGame>);

}  // namespace

AwariSolver::AwariSolver(const probe::Prober& db, int db_max, Options opt)
    : db_(db), db_max_(db_max), opt_(opt) {}

Outcome AwariSolver::prove(const std::array<int, 12>& pits, int threshold, Stats* stats) {
  Stats local;
  Stats& st = stats ? *stats : local;
  error_.reset();
  const auto t0 = std::chrono::steady_clock::now();
  AwariGame g{db_, db_max_, {}};
  AwariGame::State root;
  for (int i = 0; i < 12; ++i) root.b.pit[i] = static_cast<std::uint8_t>(pits[i]);
  root.need = threshold;
  root.or_turn = true;
  ++st.searches;
  detail::Engine<AwariGame> engine(g, opt_, st);
  Outcome out = engine.run(root);
  if (g.error) {
    error_ = g.error;
    out = Outcome::unknown;
  }
  st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Result<AwariResult> AwariSolver::solve(const std::array<int, 12>& pits) {
  int n = 0;
  for (int p : pits) {
    if (p < 0 || p > awari::kMaxStones)
      return Error(Errc::invalid_argument, fmt::format("a pit holds {} stones", p));
    n += p;
  }
  if (n > awari::kMaxStones)
    return Error(Errc::invalid_argument, fmt::format("{} stones; at most 48", n));
  // The value lies in [-n, n]: the largest T that the side to move can reach.
  return detail::binary_search(
      -n, n, [&](int t, Stats* st) { return prove(pits, t, st); }, error_);
}

}  // namespace retra::solve
