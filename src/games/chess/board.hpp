// Western chess: squares, bitboards, attack tables, positions as boards, FEN and UCI notation, and
// legal move generation with every rule the endgame tables need (FIDE rules; spec chess.md):
// promotions to Q, R, B and N, en passant, check, mate and stalemate. No castling: a position
// with a castling right is outside every table.
// Thread safety: pure functions over value types; the tables are constant (built at compile time).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "retra/error.hpp"

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace retra::chess {

using Bitboard = std::uint64_t;

enum Color : std::uint8_t { white = 0, black = 1 };
inline constexpr Color opposite(Color c) { return c == white ? black : white; }

// Piece types in the order endgame names list them (K Q R B N P).
enum PieceType : std::uint8_t { king = 0, queen, rook, bishop, knight, pawn, kTypes };
inline constexpr PieceType kNoPromotion = kTypes;

// A square is rank * 8 + file; file 0..7 = a..h, rank 0..7 = 1..8 (white's back rank 0).
inline constexpr int kSquares = 64;
inline constexpr int file_of(int sq) { return sq & 7; }
inline constexpr int rank_of(int sq) { return sq >> 3; }
inline constexpr int square(int file, int rank) { return rank * 8 + file; }
inline constexpr Bitboard bit(int sq) { return Bitboard{1} << sq; }
inline constexpr Bitboard kRank1 = 0xffull, kRank8 = 0xffull << 56;
inline constexpr Bitboard kPawnSquares = ~(kRank1 | kRank8);
std::string square_name(int sq);  // "e4"

// Board contents: 0 = empty, else 1 + type + 8 * colour.
inline constexpr std::uint8_t code(PieceType t, Color c) {
  return static_cast<std::uint8_t>(1 + t + 8 * c);
}
inline constexpr PieceType type_of(std::uint8_t code) { return PieceType((code - 1) & 7); }
inline constexpr Color color_of(std::uint8_t code) { return Color((code - 1) >> 3); }
char piece_letter(PieceType t, Color c);              // K Q R B N P, lower case for black
std::optional<PieceType> piece_type_of(char letter);  // either case

// ---- attack tables ----------------------------------------------------------------------------

namespace detail {

struct Tables {
  Bitboard knight[64], king[64], pawn[2][64];
  Bitboard ray[8][64];  // N, NE, E, NW (increasing squares), S, SW, W, SE (decreasing)
};

constexpr Tables make_tables() {
  Tables t{};
  constexpr int df[8] = {0, 1, 1, -1, 0, -1, -1, 1};
  constexpr int dr[8] = {1, 1, 0, 1, -1, -1, 0, -1};
  for (int sq = 0; sq < 64; ++sq) {
    const int f = file_of(sq), r = rank_of(sq);
    auto on = [](int x, int y) { return x >= 0 && x < 8 && y >= 0 && y < 8; };
    constexpr int nf[8] = {1, 2, 2, 1, -1, -2, -2, -1}, nr[8] = {2, 1, -1, -2, -2, -1, 1, 2};
    for (int k = 0; k < 8; ++k) {
      if (on(f + nf[k], r + nr[k])) t.knight[sq] |= bit(square(f + nf[k], r + nr[k]));
      if (on(f + df[k], r + dr[k])) t.king[sq] |= bit(square(f + df[k], r + dr[k]));
      for (int x = f + df[k], y = r + dr[k]; on(x, y); x += df[k], y += dr[k])
        t.ray[k][sq] |= bit(square(x, y));
    }
    for (int c = 0; c < 2; ++c) {
      const int y = r + (c == 0 ? 1 : -1);
      for (int x : {f - 1, f + 1})
        if (on(x, y)) t.pawn[c][sq] |= bit(square(x, y));
    }
  }
  return t;
}
inline constexpr Tables kTables = make_tables();

// The ray from sq in direction Dir up to and including the first blocker. Branch-free: the blocker
// search always finds a square, because a sentinel is added at the end the ray runs towards (h8
// for the directions that increase the square, a1 for the others), whose own ray in Dir is empty.
// A branch on "is there a blocker" was mispredicted often enough to matter in move and unmove
// generation (bench/bench_chess.cpp).
template <int Dir>
constexpr Bitboard ray_attacks(int sq, Bitboard occ) {
  static_assert(Dir >= 0 && Dir < 8);
  const Bitboard a = kTables.ray[Dir][sq];
  const int s =
      Dir < 4 ? std::countr_zero((a & occ) | bit(63)) : 63 - std::countl_zero((a & occ) | bit(0));
  return a ^ kTables.ray[Dir][s];
}
static_assert(kTables.ray[0][63] == 0 && kTables.ray[1][63] == 0 && kTables.ray[2][63] == 0 &&
              kTables.ray[3][63] == 0 && kTables.ray[4][0] == 0 && kTables.ray[5][0] == 0 &&
              kTables.ray[6][0] == 0 && kTables.ray[7][0] == 0);

// The squares strictly between two squares on one line (rank, file or diagonal); 0 when they do
// not share a line or are adjacent. Move and unmove generation use it for checks and pins.
struct BetweenTable {
  Bitboard b[64][64];
};
constexpr BetweenTable make_between() {
  BetweenTable t{};
  for (int a = 0; a < 64; ++a)
    for (int k = 0; k < 8; ++k)
      for (Bitboard r = kTables.ray[k][a]; r; r &= r - 1) {
        const int s = std::countr_zero(r);
        t.b[a][s] = kTables.ray[k][a] & ~kTables.ray[k][s] & ~bit(s);
      }
  return t;
}
inline constexpr BetweenTable kBetween = make_between();

}  // namespace detail

inline Bitboard between(int a, int b) { return detail::kBetween.b[a][b]; }
constexpr bool slider(PieceType t) { return t == queen || t == rook || t == bishop; }
constexpr Bitboard knight_attacks(int sq) { return detail::kTables.knight[sq]; }
constexpr Bitboard king_attacks(int sq) { return detail::kTables.king[sq]; }
// Squares a pawn of colour c on sq attacks.
inline Bitboard pawn_attacks(Color c, int sq) { return detail::kTables.pawn[c][sq]; }
namespace detail {
// Slider attacks ray by ray: what the magic tables below are built from and tested against.
constexpr Bitboard rook_rays(int sq, Bitboard occ) {
  return ray_attacks<0>(sq, occ) | ray_attacks<2>(sq, occ) | ray_attacks<4>(sq, occ) |
         ray_attacks<6>(sq, occ);
}
constexpr Bitboard bishop_rays(int sq, Bitboard occ) {
  return ray_attacks<1>(sq, occ) | ray_attacks<3>(sq, occ) | ray_attacks<5>(sq, occ) |
         ray_attacks<7>(sq, occ);
}

// Magic bitboards: a slider's attacks are one table load. The occupancy of the squares that can
// block it (its rays without their last squares, `mask`) times a multiplier (`magic`), shifted,
// names a slot of its square's table, and every occupancy that reaches a slot has the same
// attacks. Four (rook, bishop) or eight (queen) ray walks per piece were most of the time of
// move and unmove generation's attack sets (bench/bench_chess.cpp). The multipliers were found by
// a random search; the tables are built and every multiplier checked at compile time
// (board.cpp), so a wrong one cannot build.
//
//   Magic (32 bytes): mask (8) | magic (8) | table (8: its square's slots) | shift (4: 64 - bits)
//   slots: 102,400 for the rooks and 5,248 for the bishops over all squares (841 KiB)
struct Magic {
  Bitboard mask = 0, magic = 0;
  const Bitboard* table = nullptr;
  std::uint32_t shift = 0;
};
static_assert(sizeof(Magic) == 32);
struct MagicTables {
  std::array<Magic, 64> rook, bishop;
};
extern const MagicTables kMagics;  // constant-initialized (board.cpp): usable from any static
}  // namespace detail

inline Bitboard rook_attacks(int sq, Bitboard occ) {
  const detail::Magic& m = detail::kMagics.rook[sq];
  return m.table[((occ & m.mask) * m.magic) >> m.shift];
}
inline Bitboard bishop_attacks(int sq, Bitboard occ) {
  const detail::Magic& m = detail::kMagics.bishop[sq];
  return m.table[((occ & m.mask) * m.magic) >> m.shift];
}
// Squares a piece of type t (not a pawn) on sq attacks, given the occupancy. Always inlined:
// the sweep's move loops call it with a type the loop knows, and GCC outlined it once a few more
// callers appeared (3.6% of KRPvKR's build in the call alone).
[[gnu::always_inline]] inline Bitboard attacks(PieceType t, int sq, Bitboard occ) {
  switch (t) {
    case king:
      return king_attacks(sq);
    case queen:
      return rook_attacks(sq, occ) | bishop_attacks(sq, occ);
    case rook:
      return rook_attacks(sq, occ);
    case bishop:
      return bishop_attacks(sq, occ);
    case knight:
      return knight_attacks(sq);
    default:
      return 0;
  }
}

namespace detail {
// Squares a piece of each type (not a pawn) attacks on an empty board.
struct PseudoTable {
  Bitboard a[kTypes][64];
};
constexpr PseudoTable make_pseudo() {
  PseudoTable t{};
  for (int s = 0; s < 64; ++s) {
    const Bitboard r =
        kTables.ray[0][s] | kTables.ray[2][s] | kTables.ray[4][s] | kTables.ray[6][s];
    const Bitboard b =
        kTables.ray[1][s] | kTables.ray[3][s] | kTables.ray[5][s] | kTables.ray[7][s];
    t.a[king][s] = kTables.king[s];
    t.a[queen][s] = r | b;
    t.a[rook][s] = r;
    t.a[bishop][s] = b;
    t.a[knight][s] = kTables.knight[s];
  }
  return t;
}
inline constexpr PseudoTable kPseudo = make_pseudo();
}  // namespace detail

// Whether a piece of type t and colour c on s attacks `target`, given the occupancy: two table
// lookups, cheaper than building the attack set when one square is asked about.
inline bool attacks_square(PieceType t, Color c, int s, int target, Bitboard occ) {
  if (t == pawn) return (pawn_attacks(c, s) & bit(target)) != 0;
  if (!(detail::kPseudo.a[t][s] & bit(target))) return false;
  return !slider(t) || !(between(s, target) & occ);
}
// The same test without a branch on its outcome, for loops whose outcome the branch predictor
// cannot learn (every position of a table): between() is empty for a king's, knight's or pawn's
// one-step attack, so one formula serves every type.
inline bool attacks_square_branchless(PieceType t, Color c, int s, int target, Bitboard occ) {
  const Bitboard pseudo = t == pawn ? pawn_attacks(c, s) : detail::kPseudo.a[t][s];
  return ((pseudo >> target) & 1) & ((between(s, target) & occ) == 0);
}

// ---- boards ------------------------------------------------------------------------------------

namespace detail {
// The squares whose byte satisfies a test, 32 at a time (the boards' occupancy, computed from the
// piece array when asked for, so that boards stay plain arrays anyone can fill). The test writes
// its lanes through a reference: a 32-byte vector passed or returned by value would change the
// calling convention with AVX and without it, which GCC rejects (-Wpsabi) in a build whose
// -march lacks AVX.
template <class Test>
inline Bitboard squares_where(const std::array<std::uint8_t, kSquares>& a, Test&& test) {
  using V32 = std::uint8_t __attribute__((vector_size(32)));
  using Lanes = decltype(std::declval<V32>() != std::declval<V32>());  // signed lanes
  Bitboard m = 0;
  for (int half = 0; half < 2; ++half) {
    V32 v;
    std::memcpy(&v, a.data() + 32 * half, 32);
    Lanes hit;
    test(v, hit);  // lanes of 0 or -1
    std::uint8_t bytes[32];
    std::memcpy(bytes, &hit, 32);
    std::uint32_t bits = 0;
#ifdef __AVX2__
    __m256i x;
    std::memcpy(&x, bytes, 32);
    bits = static_cast<std::uint32_t>(_mm256_movemask_epi8(x));
#else
    for (int i = 0; i < 32; ++i) bits |= static_cast<std::uint32_t>(bytes[i] >> 7) << i;
#endif
    m |= Bitboard{bits} << (32 * half);
  }
  return m;
}
}  // namespace detail

// A full position: pieces, side to move, en-passant square, clocks.
struct Board {
  std::array<std::uint8_t, kSquares> piece{};
  Color side = white;
  int ep = -1;  // the square a pawn that just moved two squares passed, -1 if none
  int halfmove = 0, fullmove = 1;

  Bitboard occupied() const {
    return detail::squares_where(piece, [](const auto& v, auto& hit) { hit = v != 0; });
  }
  // Colour c's pieces: codes 1..6 (white) or 9..14 (black).
  Bitboard by(Color c) const {
    const std::uint8_t want = c == black ? 8 : 0;
    return detail::squares_where(
        piece, [&](const auto& v, auto& hit) { hit = (v != 0) & ((v & 8) == want); });
  }
  Bitboard by(Color c, PieceType t) const {
    const std::uint8_t want = code(t, c);
    return detail::squares_where(piece, [&](const auto& v, auto& hit) { hit = v == want; });
  }
  int king_square(Color c) const {  // -1 if none
    const Bitboard k = by(c, king);
    return k ? std::countr_zero(k) : -1;
  }
  friend bool operator==(const Board&, const Board&) = default;
};

// Whether a piece of colour `by` attacks sq.
bool attacked(const Board& b, int sq, Color by);
bool in_check(const Board& b, Color c);

struct Move {
  std::uint8_t from = 0, to = 0;
  PieceType promotion = kNoPromotion;
  bool capture = false;
  bool en_passant = false;
  friend bool operator==(const Move&, const Move&) = default;
};
// "e7e8q"
std::string uci(const Move& m);

// The position after m (which must be legal); resets the en-passant square and the clocks the
// way the rules do.
Board play(const Board& b, const Move& m);
// Calls f(const Move&) for every legal move of the side to move; returns how many there are.
int for_each_legal_move(const Board& b, auto&& f);
int legal_move_count(const Board& b);
// Nodes of the move tree of depth d (perft), for testing against another move generator.
std::uint64_t perft(const Board& b, int depth);

// FEN: six fields (the clocks may be left out). Errors name what is wrong; a castling right, too
// many or too few kings, a pawn on rank 1 or 8, the side not to move in check are errors. An
// en-passant square that names an impossible capture is dropped (spec).
Result<Board> parse_fen(std::string_view fen);
std::string to_fen(const Board& b);
// What makes a board impossible (a code that is no piece, kings, pawns on rank 1 or 8, the side
// not to move in check, adjacent kings), or nullopt.
std::optional<std::string> board_error(const Board& b);

// ---- move generation --------------------------------------------------------------------------

namespace detail {
// Pseudo-legal moves of the side to move (legal but for leaving the own king in check).
template <class F>
void pseudo_moves(const Board& b, F&& f) {
  const Color us = b.side, them = opposite(us);
  const Bitboard occ = b.occupied(), own = b.by(us), enemy = b.by(them);
  for (Bitboard pieces = own; pieces; pieces &= pieces - 1) {
    const int from = std::countr_zero(pieces);
    const PieceType t = type_of(b.piece[from]);
    if (t != pawn) {
      Bitboard to = attacks(t, from, occ) & ~own;
      while (to) {
        const int s = std::countr_zero(to);
        to &= to - 1;
        f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(s), kNoPromotion,
               (enemy & bit(s)) != 0, false});
      }
      continue;
    }
    const int dir = us == white ? 8 : -8;
    const int last = us == white ? 7 : 0;
    auto emit = [&](int to, bool capture, bool ep) {
      if (rank_of(to) == last) {
        for (PieceType p : {queen, rook, bishop, knight})
          f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), p, capture,
                 false});
      } else {
        f(Move{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), kNoPromotion,
               capture, ep});
      }
    };
    const int one = from + dir;
    if (!(occ & bit(one))) {
      emit(one, false, false);
      const int start = us == white ? 1 : 6;
      if (rank_of(from) == start && !(occ & bit(one + dir))) emit(one + dir, false, false);
    }
    Bitboard caps = pawn_attacks(us, from) & enemy;
    while (caps) {
      const int s = std::countr_zero(caps);
      caps &= caps - 1;
      emit(s, true, false);
    }
    if (b.ep >= 0 && (pawn_attacks(us, from) & bit(b.ep))) emit(b.ep, true, true);
  }
}
}  // namespace detail

int for_each_legal_move(const Board& b, auto&& f) {
  int n = 0;
  detail::pseudo_moves(b, [&](const Move& m) {
    const Board c = play(b, m);
    if (in_check(c, b.side)) return;
    ++n;
    f(m);
  });
  return n;
}

}  // namespace retra::chess
