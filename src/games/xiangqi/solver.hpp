// The xiangqi adapter of the generic proof-number engine (src/solve/pn_engine.hpp,
// src/solve/engine_solver.hpp). One goal per search: "the side to move at the root (OR) wins"
// (need 1) or "OR does not lose" (need 0). Exact leaves: a mover that can capture the king now
// wins; a mover whose every move leaves its own king capturable loses (checkmate or stalemate,
// spec); a position of an endgame in the database (at most max_pieces pieces) has its stored
// value; an armless position is a draw (only the flying general decides anything there, and that
// is the first rule). A position repeating one on the current path is a draw: the databases score
// endless play as a draw (the spec models no repetition rule), and in a game whose only decisive
// outcome is reaching a capture of the king, ending the game at the first repetition keeps every
// win (a winning side never needs to repeat) and every non-loss.
// Thread safety: one search per adapter.
#pragma once

#include <algorithm>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xxhash.h>

#include "src/games/xiangqi/board.hpp"
#include "src/solve/engine_solver.hpp"

namespace retra::xiangqi {

namespace xq = retra::xiangqi;

// Material values for the evaluation (a common xiangqi scale, rook = 600): defenders count too,
// since guards and ministers are what stands between an attacker and a forced mate.
constexpr int kPieceValue[xq::kTypes] = {0, 600, 270, 285, 60, 120, 120};
// Mobility: a little per legal move, much per legal king move (the defending king's escape squares
// are what a mate takes away). Chosen on KNKG / KRKG positions searched down to 3 pieces
// (docs/SOLVER.md): total mobility alone misled the leaf-evaluating variants.
constexpr int kMobility = 5, kKingMobility = 50;

struct SolverAdapter {
  using Outcome = solve::Outcome;
  struct State {
    xq::Board b{};
    xq::Color side = xq::red;  // the mover
    std::uint8_t pieces = 0;   // pieces on the board (falls only by captures)
    bool or_turn = true;
    std::int8_t need = 1;  // 1: OR must win; 0: OR must not lose
  };

  const probe::Prober& db;
  int max_pieces;  // positions with at most this many pieces are read from the database
  std::optional<Error> error;
  int t = 100;  // Options::t: the draw goal's shift of the evaluation

  SolverAdapter(const probe::Prober& prober, int leaf_max, const solve::Options& opt)
      : db(prober), max_pieces(leaf_max), t(opt.t) {}

  // A validated position (FEN).
  struct Root {
    xq::Board board;
    xq::Color side;
  };
  static Result<Root> parse(std::string_view text) {
    auto fp = xq::parse_fen(text);
    if (!fp) return std::move(fp).error();
    return Root{fp->board, fp->side};
  }
  // +1 the mover wins, 0 draw, -1 it loses.
  static std::pair<int, int> range(const Root&) { return {-1, 1}; }
  State root(const Root& r, int threshold) const {
    State s;
    s.b = r.board;
    s.side = r.side;
    s.pieces = static_cast<std::uint8_t>(
        std::count_if(s.b.begin(), s.b.end(), [](std::uint8_t pc) { return pc != 0; }));
    s.need = static_cast<std::int8_t>(std::clamp(threshold, 0, 1));
    s.or_turn = true;
    return s;
  }

  // The goal's outcome when the mover's result is v (+1 win, 0 draw, -1 loss).
  static Outcome decide(const State& s, int v) {
    return (s.or_turn ? v : -v) >= s.need ? Outcome::proven : Outcome::disproven;
  }

  static bool armless(const xq::Board& b) {
    for (std::uint8_t pc : b)
      if (pc && xq::attacking(xq::type_of(pc))) return false;
    return true;
  }

  // Plays m for `mover` into `out`; false when it leaves the mover's king capturable (such a
  // move loses at once, so it is no move of the search).
  static bool play(const xq::Board& b, const xq::Move& m, xq::Color mover, xq::Board& out) {
    out = b;
    out[m.to] = out[m.from];
    out[m.from] = 0;
    return !xq::can_capture_king(out, xq::opposite(mover));
  }

  // Whether the mover has a move that does not leave its king capturable.
  static bool has_legal_move(const State& s) {
    bool any = false;
    xq::Board c;
    xq::for_each_move(s.b, s.side, [&](const xq::Move& m) {
      if (!any) any = play(s.b, m, s.side, c);
    });
    return any;
  }

  Outcome exact(const State& s) {
    if (xq::can_capture_king(s.b, s.side)) return decide(s, 1);
    if (armless(s.b)) return decide(s, 0);
    if (s.pieces <= max_pieces) {
      const probe::Value v = db.xiangqi_board(s.b, s.side);
      if (v) return decide(s, v.value == 0 ? 0 : (v.value & 1) ? 1 : -1);
      if (v.status != probe::Status::not_found) {  // a damaged file: stop and report
        if (!error) error = Error(Errc::corrupt, v.message);
        return Outcome::disproven;
      }
    }
    if (!has_legal_move(s)) return decide(s, -1);
    return Outcome::unknown;
  }

  // Moves that do not leave the mover's king capturable, in generation order.
  static void children(const State& s, std::vector<State>& out) {
    out.clear();
    xq::for_each_move(s.b, s.side, [&](const xq::Move& m) {
      State c;
      if (!play(s.b, m, s.side, c.b)) return;
      c.side = xq::opposite(s.side);
      c.pieces = static_cast<std::uint8_t>(s.pieces - (m.captured != 0));
      c.or_turn = !s.or_turn;
      c.need = s.need;
      out.push_back(c);
    });
  }

  // A uniformly random legal child (MC-PNS): pseudo-legal moves are listed without the king
  // test, then tried in random order until one keeps the mover's king safe.
  static bool random_child(const State& s, std::mt19937_64& rng, State& out) {
    xq::Move moves[160];
    int n = 0;
    xq::for_each_move(s.b, s.side, [&](const xq::Move& m) { moves[n++] = m; });
    while (n > 0) {
      const int k = static_cast<int>(rng() % static_cast<unsigned>(n));
      const xq::Move m = moves[k];
      xq::Board c;
      if (play(s.b, m, s.side, c)) {
        const State from = s;  // out may alias s
        out.b = c;
        out.side = xq::opposite(from.side);
        out.pieces = static_cast<std::uint8_t>(from.pieces - (m.captured != 0));
        out.or_turn = !from.or_turn;
        out.need = from.need;
        return true;
      }
      moves[k] = moves[--n];
    }
    return false;
  }

  // Legal moves of `side` (moves that do not leave its king capturable): all, and the king's.
  static std::pair<int, int> legal_moves(const xq::Board& b, xq::Color side) {
    int all = 0, king = 0;
    xq::Board c;
    xq::for_each_move(b, side, [&](const xq::Move& m) {
      if (!play(b, m, side, c)) return;
      ++all;
      king += xq::type_of(b[m.from]) == xq::king;
    });
    return {all, king};
  }

  // From OR's view: material (kPieceValue), plus kMobility per legal move and kKingMobility per
  // legal king move of OR beyond AND's (a king short of moves is near mate). The draw goal
  // (need 0) is shifted up by t: a level position meets it.
  int eval(const State& s) const {
    int material = 0;
    for (std::uint8_t pc : s.b)
      if (pc) material += (xq::color_of(pc) == s.side ? 1 : -1) * kPieceValue[xq::type_of(pc)];
    const auto [mine, my_king] = legal_moves(s.b, s.side);
    const auto [theirs, their_king] = legal_moves(s.b, xq::opposite(s.side));
    const int mover =
        material + kMobility * (mine - theirs) + kKingMobility * (my_king - their_king);
    return (s.or_turn ? mover : -mover) + (s.need == 0 ? t : 0);
  }

  // Endless play is a draw.
  static Outcome repetition(const State& s) { return decide(s, 0); }

  static std::uint64_t key(const State& s) {
    const std::uint64_t seed = (std::uint64_t{s.side} << 2) | (std::uint64_t{s.or_turn} << 1) |
                               static_cast<std::uint64_t>(s.need & 1);
    return XXH3_64bits_withSeed(s.b.data(), s.b.size(), seed);
  }
  static int era(const State& s) { return s.pieces; }
  static bool same(const State& a, const State& b) {
    return a.side == b.side && a.or_turn == b.or_turn && a.need == b.need && a.b == b.b;
  }
  bool failed() const { return error.has_value(); }
};
static_assert(solve::SolverAdapter<SolverAdapter>);

}  // namespace retra::xiangqi
