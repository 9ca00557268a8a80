// Xiangqi move tables and generators (included by board.hpp). Thread safety: constexpr tables,
// pure functions.
#pragma once

namespace retra::xiangqi {

namespace detail {

// Up to 8 targets per square, each with the square that must be empty for the move (a knight's
// leg, a minister's eye) or kNoSquare.
struct Steps {
  std::uint8_t n = 0;
  std::uint8_t to[8] = {};
  std::uint8_t via[8] = {};
  constexpr void add(int t, int v) {
    to[n] = static_cast<std::uint8_t>(t);
    via[n] = static_cast<std::uint8_t>(v);
    ++n;
  }
};

constexpr bool on_board(int f, int r) { return f >= 0 && f < kFiles && r >= 0 && r < kRanks; }

constexpr bool allowed_c(PieceType t, Color c, int sq) {
  const int f = file_of(sq), r = rank_of(sq);
  const int rr = c == red ? r : kRanks - 1 - r;  // rank from the piece's own side
  switch (t) {
    case king: return f >= 3 && f <= 5 && rr <= 2;
    case guard:
      return (rr == 0 && (f == 3 || f == 5)) || (rr == 1 && f == 4) || (rr == 2 && (f == 3 || f == 5));
    case minister:
      return (rr == 0 && (f == 2 || f == 6)) || (rr == 2 && (f == 0 || f == 4 || f == 8)) ||
             (rr == 4 && (f == 2 || f == 6));
    case pawn: return rr >= 5 || ((rr == 3 || rr == 4) && f % 2 == 0);
    default: return true;
  }
}

struct Tables {
  bool allowed[kTypes][2][kSquares] = {};
  Steps king[2][kSquares], guard[2][kSquares], minister[2][kSquares], pawn[2][kSquares];
  Steps knight[kSquares];
  Steps knight_from[kSquares];   // origins of knight moves to a square, with the origin's leg
  Steps pawn_from[2][kSquares];  // origins of pawn moves to a square
};

constexpr Tables make_tables() {
  Tables t{};
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < kTypes; ++k)
      for (int s = 0; s < kSquares; ++s)
        t.allowed[k][c][s] = allowed_c(PieceType(k), Color(c), s);
  for (int s = 0; s < kSquares; ++s) {
    const int f = file_of(s), r = rank_of(s);
    for (int c = 0; c < 2; ++c) {
      const Color col = Color(c);
      if (t.allowed[king][c][s]) {
        const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        for (auto& v : d)
          if (on_board(f + v[0], r + v[1]) && t.allowed[king][c][square(f + v[0], r + v[1])])
            t.king[c][s].add(square(f + v[0], r + v[1]), kNoSquare);
      }
      if (t.allowed[guard][c][s]) {
        const int d[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
        for (auto& v : d)
          if (on_board(f + v[0], r + v[1]) && t.allowed[guard][c][square(f + v[0], r + v[1])])
            t.guard[c][s].add(square(f + v[0], r + v[1]), kNoSquare);
      }
      if (t.allowed[minister][c][s]) {
        const int d[4][2] = {{2, 2}, {2, -2}, {-2, 2}, {-2, -2}};
        for (auto& v : d)
          if (on_board(f + v[0], r + v[1]) && t.allowed[minister][c][square(f + v[0], r + v[1])])
            t.minister[c][s].add(square(f + v[0], r + v[1]), square(f + v[0] / 2, r + v[1] / 2));
      }
      if (t.allowed[pawn][c][s]) {
        const int fwd = col == red ? 1 : -1;
        const bool crossed = col == red ? r >= 5 : r <= 4;
        if (on_board(f, r + fwd)) t.pawn[c][s].add(square(f, r + fwd), kNoSquare);
        if (crossed) {
          if (f > 0) t.pawn[c][s].add(square(f - 1, r), kNoSquare);
          if (f < kFiles - 1) t.pawn[c][s].add(square(f + 1, r), kNoSquare);
        }
      }
    }
    const int d[8][4] = {{1, 2, 0, 1},  {-1, 2, 0, 1},  {1, -2, 0, -1}, {-1, -2, 0, -1},
                         {2, 1, 1, 0},  {2, -1, 1, 0},  {-2, 1, -1, 0}, {-2, -1, -1, 0}};
    for (auto& v : d)
      if (on_board(f + v[0], r + v[1]))
        t.knight[s].add(square(f + v[0], r + v[1]), square(f + v[2], r + v[3]));
  }
  for (int s = 0; s < kSquares; ++s) {
    for (int i = 0; i < t.knight[s].n; ++i) t.knight_from[t.knight[s].to[i]].add(s, t.knight[s].via[i]);
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < t.pawn[c][s].n; ++i) t.pawn_from[c][t.pawn[c][s].to[i]].add(s, kNoSquare);
  }
  return t;
}

inline constexpr Tables kTables = make_tables();

// Walks from sq in direction (df, dr) and calls f(square) until it returns false or the edge.
template <class F>
inline void ray(int sq, int df, int dr, F&& f) {
  int fl = file_of(sq) + df, rk = rank_of(sq) + dr;
  while (fl >= 0 && fl < kFiles && rk >= 0 && rk < kRanks) {
    if (!f(square(fl, rk))) return;
    fl += df;
    rk += dr;
  }
}

inline constexpr int kDirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};

template <class F>
inline void steps(const Board& b, const Steps& s, Color side, int from, F& f) {
  for (int i = 0; i < s.n; ++i) {
    const int to = s.to[i];
    if (s.via[i] != kNoSquare && b[s.via[i]]) continue;  // blocked leg or eye
    const std::uint8_t c = b[to];
    if (c && color_of(c) == side) continue;
    if (c && type_of(c) == king) continue;  // capturing the king is not a move
    f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), c});
  }
}

template <class F>
inline void piece_moves(const Board& b, int from, F& f) {
  const std::uint8_t pc = b[from];
  const PieceType t = type_of(pc);
  const Color side = color_of(pc);
  switch (t) {
    case king: steps(b, kTables.king[side][from], side, from, f); break;
    case guard: steps(b, kTables.guard[side][from], side, from, f); break;
    case minister: steps(b, kTables.minister[side][from], side, from, f); break;
    case knight: steps(b, kTables.knight[from], side, from, f); break;
    case pawn: steps(b, kTables.pawn[side][from], side, from, f); break;
    case rook:
      for (auto& d : kDirs)
        ray(from, d[0], d[1], [&](int to) {
          const std::uint8_t c = b[to];
          if (!c) {
            f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), 0});
            return true;
          }
          if (color_of(c) != side && type_of(c) != king)
            f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), c});
          return false;
        });
      break;
    case cannon:
      for (auto& d : kDirs) {
        bool screen = false;
        ray(from, d[0], d[1], [&](int to) {
          const std::uint8_t c = b[to];
          if (!screen) {
            if (!c) {
              f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), 0});
              return true;
            }
            screen = true;
            return true;
          }
          if (!c) return true;
          if (color_of(c) != side && type_of(c) != king)
            f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), c});
          return false;
        });
      }
      break;
    default: break;
  }
}

}  // namespace detail

template <class F>
void for_each_move(const Board& b, Color side, F&& f) {
  for (int s = 0; s < kSquares; ++s)
    if (b[s] && color_of(b[s]) == side) detail::piece_moves(b, s, f);
}

// Moves of the pieces standing on the given squares only (all of the side to move).
template <class F>
void for_each_move_from(const Board& b, const std::uint8_t* squares, int count, F&& f) {
  for (int i = 0; i < count; ++i) detail::piece_moves(b, squares[i], f);
}

template <class F>
void for_each_unmove_origin(const Board& b, PieceType t, Color side, int to, F&& f) {
  using detail::kTables;
  // Symmetric steppers: the move back is a move of the same kind (its leg or eye is the same
  // square, which must be empty).
  auto back = [&](const detail::Steps& s) {
    for (int i = 0; i < s.n; ++i)
      if (!b[s.to[i]] && (s.via[i] == kNoSquare || !b[s.via[i]])) f(static_cast<int>(s.to[i]));
  };
  switch (t) {
    case king: back(kTables.king[side][to]); break;
    case guard: back(kTables.guard[side][to]); break;
    case minister: back(kTables.minister[side][to]); break;
    case knight: {
      // The leg is next to the origin, not to the target, so use the reverse table.
      const auto& s = kTables.knight_from[to];
      for (int i = 0; i < s.n; ++i)
        if (!b[s.to[i]] && !b[s.via[i]]) f(static_cast<int>(s.to[i]));
      break;
    }
    case pawn: {
      const auto& s = kTables.pawn_from[side][to];
      for (int i = 0; i < s.n; ++i)
        if (!b[s.to[i]]) f(static_cast<int>(s.to[i]));
      break;
    }
    case rook:
    case cannon:
      // A non-capturing slide: every empty square back along a line up to the first piece.
      for (auto& d : detail::kDirs)
        detail::ray(to, d[0], d[1], [&](int from) {
          if (b[from]) return false;
          f(from);
          return true;
        });
      break;
    default: break;
  }
}

}  // namespace retra::xiangqi
