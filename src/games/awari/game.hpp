// Awari as a retra::Game: segments are stone counts, the index is the colex bijection of
// index.hpp, captures convert into the segment with fewer stones.
// Thread safety: stateless; share freely.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "retra/game.hpp"
#include "src/games/awari/board.hpp"
#include "src/games/awari/index.hpp"

namespace retra::awari {

// The largest capture: five opponent pits of three (capturing all six would starve the opponent).
inline constexpr int kMaxCapture = 15;

struct Game {
  using Position = Board;
  using SegmentId = int;  // stones on the board
  static constexpr std::string_view kName = "awari";
  static constexpr std::string_view kVariant = "olympiad";
  static constexpr std::string_view kIndexer = "awari-colex-v1";
  static constexpr std::string_view kValueEncoding = "score-i8";
  static constexpr ValueKind kValueKind = ValueKind::score;
  static constexpr int kMaxMoves = kSidePits;

  int segments() const noexcept { return kMaxStones + 1; }
  std::uint64_t segment_size(int stones) const noexcept { return positions(stones); }
  Board unrank(int stones, std::uint64_t i) const noexcept { return awari::unrank(stones, i); }
  std::uint64_t rank(int, const Board& b) const noexcept { return awari::rank(b); }
  bool next(int, Board& b) const noexcept { return awari::next(b); }
  int no_move_value(int, const Board& b) const noexcept { return awari::no_move_value(b); }
  int score_bound(int stones) const noexcept { return stones; }
  // Captures take 2..15 stones (a sixth pit would starve the opponent).
  std::vector<int> dependencies(int stones) const {
    std::vector<int> d;
    for (int m = std::max(0, stones - kMaxCapture); m <= stones - 2; ++m) d.push_back(m);
    return d;
  }

  template <class F>
  int for_each_move(int stones, const Board& b, F&& f) const {
    return for_each_legal_move(b, [&](int, const MoveResult& m) {
      f(Child<int>{stones - m.captured, awari::rank(m.child), m.captured,
                   m.kind == MoveKind::capture});
    });
  }

  // Captures only (ranked), quiet moves only counted.
  template <class F>
  MoveCount for_each_conversion(int stones, const Board& b, F&& f) const {
    MoveCount mc;
    for (int i = 0; i < kSidePits; ++i) {
      const MoveResult m = make_move(b, i);
      if (!m.legal()) continue;
      ++mc.legal;
      if (m.kind == MoveKind::quiet)
        ++mc.quiet;
      else
        f(Child<int>{stones - m.captured, awari::rank(m.child), m.captured, true});
    }
    return mc;
  }

  // Predecessors by quiet moves (the optional unmove member of the concept).
  template <class F>
  void for_each_unmove(int, const Board& q, F&& f) const {
    for_each_quiet_predecessor(q, [&](const Board& p) { f(awari::rank(p), p); });
  }

  // Up to 31 stones every pit fits in 5 bits: 12 pits in 60 bits.
  bool packable(int stones) const noexcept { return stones <= 31; }
  std::uint64_t pack(int, const Board& b) const noexcept {
    std::uint64_t lo, hi;
    std::memcpy(&lo, &b.pit[0], 8);
    std::memcpy(&hi, &b.pit[8], 8);
#ifdef __BMI2__
    return __builtin_ia32_pext_di(lo, 0x1f1f1f1f1f1f1f1full) |
           __builtin_ia32_pext_di(hi, 0x1f1f1f1full) << 40;
#else
    std::uint64_t r = 0;
    for (int i = 0; i < kPits; ++i) r |= std::uint64_t{b.pit[i]} << (5 * i);
    return r;
#endif
  }
  Board unpack(int, std::uint64_t bits) const noexcept {
    Board b;
#ifdef __BMI2__
    const std::uint64_t lo = __builtin_ia32_pdep_di(bits, 0x1f1f1f1f1f1f1f1full);
    const std::uint64_t hi = __builtin_ia32_pdep_di(bits >> 40, 0x1f1f1f1full);
    std::memcpy(&b.pit[0], &lo, 8);
    std::memcpy(&b.pit[8], &hi, 8);
#else
    for (int i = 0; i < kPits; ++i) b.pit[i] = static_cast<std::uint8_t>((bits >> (5 * i)) & 31);
#endif
    return b;
  }

  // The non-capturing legal moves only, without building MoveResult: sow, reject captures and
  // starving moves, flip, rank.
  template <class F>
  void for_each_quiet_child(int, const Board& b, F&& f) const {
    const detail::V16 v0 = detail::load(b);
    for (int i = 0; i < kSidePits; ++i) {
      const int s = b.pit[i];
      if (s == 0) continue;
      detail::V16 d;
      std::memcpy(&d, detail::kSow.delta[i][s], 16);
      const detail::V16 v = v0 + d;
      const int last = detail::kSow.last[i][s];
      if (last >= kSidePits && (v[last] == 2 || v[last] == 3)) continue;  // a capture
      if (!detail::opponent_has_stones(v)) continue;                      // starves: illegal
      f(awari::rank(detail::store(detail::flip(v))));
    }
  }
};

static_assert(retra::Game<Game>);
static_assert(retra::BuildableGame<Game>);
static_assert(retra::HasQuietChildren<Game>);
static_assert(retra::HasUnmoves<Game>);
static_assert(retra::HasConversions<Game>);
static_assert(retra::HasPacking<Game>);

}  // namespace retra::awari
