// Xiangqi endgames as a retra::Game: one segment per endgame (material signature), both sides
// to move in one segment (index = side * size + class index), distance-to-mate values (Fang's
// Table 1). Captures convert into the supporting endgame; an endgame without attacking pieces
// is never stored: its positions are draws unless the kings face each other, so a capture into
// one reports its value directly through the virtual segment kArmless.
// Thread safety: a Game is immutable after construction; share it freely.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "retra/game.hpp"
#include "src/games/xiangqi/board.hpp"
#include "src/games/xiangqi/index.hpp"
#include "src/games/xiangqi/material.hpp"

namespace retra::xiangqi {

struct Position {
  std::array<std::uint8_t, kMaxPieces> sq{};  // square of each slot of the endgame's layout
  std::uint64_t index = 0;                    // where unrank() found it (for next())
  Color side = red;
  bool valid = true;
};

struct Endgame {
  Material material;
  std::string name;
  std::unique_ptr<Indexer> indexer;
  std::vector<Slot> slots;
  std::vector<std::uint8_t> codes;  // board code of each slot
  std::vector<int> capture_target;  // per slot: the endgame capturing it leads to
  std::vector<int> advance_target;  // per slot: a pinned pawn's next level, or -2
  // [pawn slot * n + victim slot]: a pinned pawn capturing with a forward step (victim gone, pawn
  // one level on), or -2.
  std::vector<int> capture_advance_target;
  int n = 0;
};

class Game {
 public:
  using Position = xiangqi::Position;
  using SegmentId = int;
  static constexpr std::string_view kName = "xiangqi";
  static constexpr std::string_view kVariant = "fang-cg2000";
  static constexpr std::string_view kIndexer = "xiangqi-mirror-v1";
  static constexpr std::string_view kValueEncoding = "dtm-u8";
  static constexpr ValueKind kValueKind = ValueKind::dtm;
  // Distances beyond one byte are stored as distances to conversion (Fang 3.3).
  static constexpr bool kDtcFallback = true;
  // One side's pieces at most (R R N N C C P P P P P G G M M K): 2 x 17 + 2 x 8 + 2 x 17 +
  // 5 x 3 + 2 x 4 + 2 x 4 + 4 moves.
  static constexpr int kMaxMoves = 119;
  static constexpr int kArmless = -1;  // virtual segment: index = the value (0 or 1)
  static bool virtual_segment(int s) { return s == kArmless; }

  // The given endgames and every endgame they depend on, in an order where dependencies come
  // first.
  static Result<std::shared_ptr<const Game>> closure(const std::vector<Material>& targets);

  int segments() const { return static_cast<int>(eg_.size()); }
  const Endgame& endgame(int s) const { return eg_[s]; }
  int find(const std::string& name) const;  // -1 if absent
  std::vector<int> dependencies(int s) const;

  std::uint64_t segment_size(int s) const { return 2 * eg_[s].indexer->size(); }
  // Side to move, then the indexer's digits (the writer may store them in another order).
  std::vector<std::uint64_t> index_digits(int s) const {
    std::vector<std::uint64_t> d{2};
    const auto r = eg_[s].indexer->radices();
    d.insert(d.end(), r.begin(), r.end());
    return d;
  }
  Position unrank(int s, std::uint64_t i) const;
  std::uint64_t rank(int s, const Position& p) const { return rank_mirrored(s, p, nullptr); }
  std::uint64_t rank_mirrored(int s, const Position& p, bool* mirrored,
                              bool* symmetric = nullptr) const;
  bool next(int s, Position& p) const;
  bool is_valid(int, const Position& p) const { return p.valid; }
  int no_move_value(int, const Position&) const { return 2; }  // stalemate loses
  std::optional<int> terminal_value(int s, const Position& p) const;

  Board board(int s, const Position& p) const;

  template <class F>
  int for_each_move(int s, const Position& p, F&& f) const;
  template <class F>
  void for_each_unmove(int s, const Position& q, F&& f) const;
  // Like for_each_move, but non-converting moves are only counted, not ranked.
  template <class F>
  MoveCount for_each_conversion(int s, const Position& p, F&& f) const;

  bool packable(int s) const { return eg_[s].n <= 8; }
  // Side in bit 0, then 7 bits per square. The kernel packs every parent it generates, so with
  // BMI2 the eight squares go in and out with one pext / pdep (slots past n are zero).
  std::uint64_t pack(int s, const Position& p) const {
#ifdef __BMI2__
    std::uint64_t w;
    std::memcpy(&w, p.sq.data(), 8);
    const int n = eg_[s].n;  // <= 8 (packable)
    const std::uint64_t used = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
    return p.side | __builtin_ia32_pext_di(w & used, 0x7f7f7f7f7f7f7f7full) << 1;
#else
    std::uint64_t bits = p.side;
    for (int i = 0; i < eg_[s].n; ++i) bits |= std::uint64_t{p.sq[i]} << (1 + 7 * i);
    return bits;
#endif
  }
  Position unpack(int s, std::uint64_t bits) const {
    Position p;
    p.side = Color(bits & 1);
#ifdef __BMI2__
    (void)s;
    const std::uint64_t w = __builtin_ia32_pdep_di(bits >> 1, 0x7f7f7f7f7f7f7f7full);
    std::memcpy(p.sq.data(), &w, 8);
#else
    for (int i = 0; i < eg_[s].n; ++i)
      p.sq[i] = static_cast<std::uint8_t>((bits >> (1 + 7 * i)) & 127);
#endif
    return p;
  }

  // A position of endgame s from a board (any orientation); errors if the material differs.
  Result<Position> from_board(int s, const Board& b, Color side) const;

  // The child of a converting move in `target`'s layout: pieces of p minus the captured slot,
  // with `moved` now on `to` (and a pinned pawn's level changed).
  Position relayout(int s, const Position& p, int moved, int to, int removed, int target) const;

 private:
  std::vector<Endgame> eg_;
  std::map<std::string, int, std::less<>> by_name_;
};

namespace detail {
// Moves of the side to move in slot order; `quiet_too` selects whether non-converting moves are
// ranked and reported or only counted.
template <bool quiet_too, class F>
MoveCount game_moves(const Game& g, int s, const Position& p, F&& f);
}  // namespace detail

template <class F>
int Game::for_each_move(int s, const Position& p, F&& f) const {
  return detail::game_moves<true>(*this, s, p, f).legal;
}

template <class F>
MoveCount Game::for_each_conversion(int s, const Position& p, F&& f) const {
  return detail::game_moves<false>(*this, s, p, f);
}

template <bool quiet_too, class F>
MoveCount detail::game_moves(const Game& g, int s, const Position& p, F&& f) {
  const Endgame& e = g.endgame(s);
  const Board b = g.board(s, p);
  MoveCount mc;
  for (int i = 0; i < e.n; ++i) {
    if (e.slots[i].color != p.side) continue;
    auto on_move = [&](const Move& m) {
      ++mc.legal;
      // A pinned pawn stepping forward changes its level, capturing or not.
      const bool advances = e.advance_target[i] >= 0 && rank_of(m.to) != rank_of(m.from);
      if (m.captured) {
        int victim = 0;
        while (p.sq[victim] != m.to || e.slots[victim].color == p.side) ++victim;
        const int target =
            advances ? e.capture_advance_target[static_cast<std::size_t>(i * e.n + victim)]
                     : e.capture_target[victim];
        if (target == Game::kArmless) {
          Board cb = b;
          cb[m.to] = cb[m.from];
          cb[m.from] = 0;
          f(Child<int>{Game::kArmless, kings_facing(cb) ? 1u : 0u, 0, true});
          return;
        }
        const Position c = g.relayout(s, p, i, m.to, victim, target);
        f(Child<int>{target, g.rank(target, c), 0, true});
        return;
      }
      if (advances) {
        const int target = e.advance_target[i];
        const Position c = g.relayout(s, p, i, m.to, -1, target);
        f(Child<int>{target, g.rank(target, c), 0, true});
        return;
      }
      ++mc.quiet;
      if constexpr (quiet_too) {
        Position c = p;
        c.sq[i] = m.to;
        c.side = opposite(p.side);
        f(Child<int>{s, g.rank(s, c), 0, false});
      }
    };
    xiangqi::detail::piece_moves(b, p.sq[i], on_move);
  }
  return mc;
}

template <class F>
void Game::for_each_unmove(int s, const Position& q, F&& f) const {
  const Endgame& e = eg_[s];
  const Board b = board(s, q);
  const Color mover = opposite(q.side);
  // Counters count a parent's moves from its class representative, so every (parent class, move)
  // pair must be reported exactly once per decided child class, whichever orientation of the
  // child the kernel holds:
  // - a symmetric child C is reached from P by m and from mirror(P) by mirror(m), and both rank
  //   to P's class, which counted one of them: report non-symmetric parents only in their
  //   representative orientation;
  // - a symmetric parent P reaches a non-symmetric child C by m and mirror(C) by mirror(m), two
  //   counted moves into one child class, of which one orientation of C shows one: report it
  //   twice. (tests/xiangqi_index_test.cpp checks the counts exhaustively.)
  bool sym = true;  // q is its own mirror image (board b read through the mirror)
  for (int i = 0; i < e.n && sym; ++i) sym = b[mirror(q.sq[i])] == e.codes[i];
  for (int i = 0; i < e.n; ++i) {
    if (e.slots[i].color != mover) continue;
    const PieceType t = e.slots[i].type;
    const bool pinned = e.advance_target[i] != -2;
    // Parents by this piece differ from q in its square only: rank the rest once.
    const Indexer::Partial pt = e.indexer->begin(q.sq.data(), i);
    const std::uint64_t side_base = mover == black ? e.indexer->size() : 0;
    Position p = q;
    p.side = mover;
    for_each_unmove_origin(b, t, mover, q.sq[i], [&](int from) {
      if (pinned && rank_of(from) != rank_of(q.sq[i])) return;  // a level change converts
      p.sq[i] = static_cast<std::uint8_t>(from);
      bool mirrored = false, parent_sym = false;
      const std::uint64_t r =
          side_base + e.indexer->rank_moved(pt, p.sq.data(), &mirrored, &parent_sym);
      if (sym) {
        if (mirrored && !parent_sym) return;
        f(r, p);
      } else {
        f(r, p);
        if (parent_sym) f(r, p);
      }
    });
  }
}

static_assert(retra::Game<Game>);
static_assert(retra::BuildableGame<Game>);
static_assert(retra::HasVirtualSegments<Game>);
static_assert(retra::HasUnmoves<Game>);
static_assert(retra::HasPacking<Game>);
static_assert(retra::HasTerminalValue<Game>);
static_assert(retra::HasConversions<Game>);

}  // namespace retra::xiangqi
