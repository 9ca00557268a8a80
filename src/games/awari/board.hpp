// Awari positions, rules and move generation (rules: ../shared/spec/awari.md, Olympiad rules).
// Thread safety: pure functions over value types; the lookup tables are constexpr.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "retra/error.hpp"

namespace retra::awari {

inline constexpr int kPits = 12;
inline constexpr int kSidePits = 6;
inline constexpr int kMaxStones = 48;

// A position seen from the side to move: pit[0..5] are the mover's pits, pit[6..11] the
// opponent's, in sowing order. Bytes 12..15 are padding that stays zero so that a Board is one
// 16-byte vector register.
//
//   byte:  0  1  2  3  4  5 | 6  7  8  9 10 11 | 12 13 14 15
//          mover p0 .. p5   | opponent p6..p11 | always 0
struct alignas(16) Board {
  std::array<std::uint8_t, 16> pit{};

  int stones() const noexcept {
    int s = 0;
    for (int i = 0; i < kPits; ++i) s += pit[i];
    return s;
  }
  int mover_stones() const noexcept {
    int s = 0;
    for (int i = 0; i < kSidePits; ++i) s += pit[i];
    return s;
  }
  friend bool operator==(const Board&, const Board&) = default;
};
static_assert(sizeof(Board) == 16 && alignof(Board) == 16);

// Parses "p0,...,p11" (commas and/or spaces). Errors name the offending field.
Result<Board> parse_board(std::string_view text);
// "p0,p1,...,p11"
std::string format_board(const Board& b);

enum class MoveKind : std::uint8_t {
  empty_pit,  // the pit holds no stones: not a move
  starves,    // legal-looking but leaves the opponent without stones (rule 3): illegal
  quiet,      // legal, captures nothing
  capture,    // legal, captures `captured` stones
};

struct MoveResult {
  MoveKind kind = MoveKind::empty_pit;
  int captured = 0;
  Board child;  // the position after the move, seen from the opponent (the new side to move)
  bool legal() const noexcept { return kind == MoveKind::quiet || kind == MoveKind::capture; }
};

namespace detail {

using V16 = std::uint8_t __attribute__((vector_size(16)));

// delta[i][s]: what sowing s stones from pit i adds to each pit (mod 256: the origin gets -s,
// i.e. becomes empty). last[i][s]: the pit receiving the last stone. Sowing is then one vector add.
struct SowTables {
  std::uint8_t delta[kSidePits][kMaxStones + 1][16];
  std::uint8_t sown[kSidePits][kMaxStones + 1][16];  // delta without the origin lane
  std::uint8_t last[kSidePits][kMaxStones + 1];
};

constexpr SowTables make_sow_tables() {
  SowTables t{};
  for (int i = 0; i < kSidePits; ++i) {
    for (int s = 1; s <= kMaxStones; ++s) {
      int pos = i;
      for (int k = 0; k < s; ++k) {
        pos = (pos + 1) % kPits;
        if (pos == i) pos = (pos + 1) % kPits;  // rule 1: the origin is skipped
        ++t.delta[i][s][pos];
      }
      for (int j = 0; j < 16; ++j) t.sown[i][s][j] = t.delta[i][s][j];
      t.delta[i][s][i] = static_cast<std::uint8_t>(256 - s);
      t.last[i][s] = static_cast<std::uint8_t>(pos);
    }
  }
  return t;
}

inline constexpr SowTables kSow = make_sow_tables();

inline V16 load(const Board& b) noexcept {
  V16 v;
  std::memcpy(&v, b.pit.data(), 16);
  return v;
}
inline Board store(V16 v) noexcept {
  Board b;
  std::memcpy(b.pit.data(), &v, 16);
  return b;
}
// The position seen from the other side: pits 6..11 become 0..5 and vice versa.
inline V16 flip(V16 v) noexcept {
  return __builtin_shufflevector(v, v, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
}
// True when any of bytes 6..11 is non-zero, i.e. the opponent still has a stone.
inline bool opponent_has_stones(V16 v) noexcept {
  std::uint64_t w;
  std::memcpy(&w, reinterpret_cast<const unsigned char*>(&v) + 6, 8);  // bytes 6..13; 12,13 = 0
  return w != 0;
}

}  // namespace detail

// Plays the move from pit `origin` (0..5). Implements rules 1-3 of the spec exactly:
// sowing skips the origin, captures walk back from the last pit while it is an opponent pit
// holding 2 or 3, and a move that leaves the opponent no stone is illegal (`starves`).
inline MoveResult make_move(const Board& b, int origin) noexcept {
  MoveResult r;
  const int s = b.pit[origin];
  if (s == 0) return r;
  detail::V16 v = detail::load(b);
  detail::V16 d;
  std::memcpy(&d, detail::kSow.delta[origin][s], 16);
  v += d;
  int last = detail::kSow.last[origin][s];
  int captured = 0;
  while (last >= kSidePits && (v[last] == 2 || v[last] == 3)) {
    captured += v[last];
    v[last] = 0;
    --last;
  }
  if (!detail::opponent_has_stones(v)) {
    r.kind = MoveKind::starves;
    return r;
  }
  r.kind = captured ? MoveKind::capture : MoveKind::quiet;
  r.captured = captured;
  r.child = detail::store(detail::flip(v));
  return r;
}

// Calls f(origin, result) for every legal move; returns how many there were. A position with
// stones on the mover's side and no legal move ends the game under rule 3.
template <class F>
inline int for_each_legal_move(const Board& b, F&& f) {
  int legal = 0;
  for (int i = 0; i < kSidePits; ++i) {
    MoveResult m = make_move(b, i);
    if (m.legal()) {
      ++legal;
      f(i, m);
    }
  }
  return legal;
}

// Calls f(parent) for every (parent, move) pair in which `parent` plays a quiet (non-capturing)
// legal move that leads to q; parent is seen from its own mover, q from the opponent. This undoes
// rule 1 with all its exceptions: the origin is the only empty pit the sowing cannot refill (for
// 12+ stones it is skipped), the last stone must not make a capture, and the move must leave q's
// mover a stone (must-feed), so a q whose mover has no stone has no predecessor. Each pair is
// reported once, so the number of calls over all q equals the number of quiet moves.
template <class F>
inline void for_each_quiet_predecessor(const Board& q, F&& f) {
  // After the move, from the parent's view: B = flip(q). The parent moved from an empty pit i of
  // its own side (B[i] == 0) with s stones: parent = B - sown[i][s], parent[i] = s.
  const detail::V16 b = detail::flip(detail::load(q));
  if (!detail::opponent_has_stones(b)) return;  // q's mover would have been starved
  for (int i = 0; i < kSidePits; ++i) {
    if (b[i] != 0) continue;
    for (int s = 1; s <= kMaxStones; ++s) {
      detail::V16 sown;
      std::memcpy(&sown, detail::kSow.sown[i][s], 16);
      // Every pit must hold at least the stones this sowing put there. The sown amounts only grow
      // with s, so the first s that does not fit ends the search.
      const auto short_of = sown > b;  // lanes of -1 where a pit holds too few stones
      std::uint64_t w[2];
      static_assert(sizeof short_of == sizeof w);
      std::memcpy(w, &short_of, sizeof w);
      if (w[0] | w[1]) break;
      const int last = detail::kSow.last[i][s];
      if (last >= kSidePits && (b[last] == 2 || b[last] == 3)) continue;  // would have captured
      detail::V16 parent = b - sown;
      parent[i] = static_cast<std::uint8_t>(s);
      f(detail::store(parent));
    }
  }
}

// Value of a position without legal moves, from the mover's view: rule 4 (the mover has no stone)
// gives the opponent everything, rule 3 (no move feeds the opponent) gives the mover everything.
inline int no_move_value(const Board& b) noexcept {
  const int n = b.stones();
  return b.mover_stones() == 0 ? -n : n;
}

}  // namespace retra::awari
