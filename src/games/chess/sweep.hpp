// The chess game's own kernel for DTZ and DTM segments of 3-5 pieces, without pawns or with one to
// three (Game::own_kernel; Table::dtm: no 50-move horizon, a conversion acting at the ply its
// child's distance gives, Table::at_ply): a table built the way Syzygy's generator builds one (its
// public description and source read, none of it copied). Every piece sits on its own 6 bits, so a
// move is an index difference; illegal positions are marked once, so no move or unmove tests
// legality; there are no counters: the parents of a win become loss candidates, and a candidate is
// checked by reading the other side's table where its moves lead, for the 64 positions of a run
// (only the last piece on another square) at once, since a move of another piece leads all of them
// into one run of that table; every ply is one sweep of both sides' tables (of the chunks where it
// has work), and a side's wins are pulled from its open positions instead of pushed from the other
// side's losses where that reads less, as its losses are (every open position checked, no
// candidates marked from the other side's wins). It computes the distance to conversion (capture,
// pawn move or mate), the DTZ under the 50-move rule: a conversion into a value beyond the 100-ply
// horizon (a cursed win or blessed loss of the child) counts as 101 plies, as values.hpp's Best
// counts it, so a position with such a conversion wins at ply 101 unless it wins sooner, or cannot
// lose before ply 101 (two bitmaps, applied before that ply). It declines a table whose distances
// pass 254 plies (a DTM byte's), which the generic kernel then builds. A table of the kings and
// pawns alone has no runs: its captures phase and its candidates' checks go position by position. A
// pawn that keeps its place among its colour's pawns reads its pushes from what the sweep kept of
// the segment a rank (two ranks) ahead of it (Game::own_kernel, sweep.cpp); the other pawn moves
// read the finished segments through the driver (a double push that a pawn of theirs may take en
// passant, its virtual child, as the generic kernels do). docs/CHESS.md measures it;
// bench/chess_sweep.cpp runs it alone and checks it against retra's files. Thread safety: one
// solve() per Table at a time; its OpenMP threads write single bytes with relaxed atomics, and the
// writes that can meet another thread's are compare-exchanges.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "retra/error.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/index.hpp"
#include "src/games/chess/material.hpp"
#include "src/games/chess/values.hpp"
#include "src/memory.hpp"
#include "src/progress.hpp"

namespace retra::chess::sweep {

// ---- the king pair: 462 classes, as in Syzygy's pawnless tables ------------------------------
// The white king in the a1-d1-d4 triangle; on its diagonal, the black king on or below a1-h8.
// Positions with both kings on the diagonal keep their diagonal mirror image as a second index;
// both are computed, with the same value.
struct KingPairs {
  std::array<std::int16_t, 64 * 64> index{};  // -1: kings equal or adjacent
  std::array<std::uint8_t, 64 * 64> sym{};    // the transform that makes the pair canonical
  std::array<std::uint8_t, 64 * 8> image{};   // [t * 64 + sq]
  std::vector<std::pair<std::uint8_t, std::uint8_t>> pairs;
  KingPairs();
};
extern const KingPairs kKp;

// ---- values ----------------------------------------------------------------------------------
//   0 unknown | 1 illegal (or two pieces on a square) | 2 draw | 3 unknown, a capture draws
//   4, 5 loss candidates (two codes: this ply's and the next's)
//   6 won earlier | 7..130 win in base + 1..124 plies
//   131 lost earlier | 132..255 loss in base + 1..124 plies
// Distances are coded relative to the table's base (Table::base), 0 until a table outgrows the
// codes. Plies compare a child with "won (lost) by the last ply" only, so the values final by then
// can share one code ("earlier", below every other win or loss code), their distances kept aside:
// this is how the codes are rebased (solve()), as often as the distances need (twice for KPPvKP's
// 254-ply DTM). With base 0, "lost earlier" is mated.
inline constexpr std::uint8_t kUnknown = 0, kIllegal = 1, kDraw = 2, kCapDraw = 3;
inline constexpr std::uint8_t kWonEarlier = 6, kLostEarlier = 131;
inline constexpr int kMaxWin = 124;    // relative to the base
inline constexpr int kMaxPlies = 254;  // in all: solve() declines a table with longer distances
// A DTM sub-table's illegal positions (retra's DTM bytes hold 0..255, 255 for 254 plies, which
// no pawnless table reaches: load refuses it).
inline constexpr std::uint8_t kDtmIllegal = 255;
constexpr std::uint8_t candidate(int n) { return static_cast<std::uint8_t>(4 + (n & 1)); }
inline constexpr std::uint8_t kInCheck = candidate(0);  // before ply 1: the mover in check
// Codes of a win or loss in n plies beyond the base; distance() is the inverse (negative: a loss).
constexpr std::uint8_t win(int n) { return static_cast<std::uint8_t>(6 + n); }
constexpr std::uint8_t loss(int n) { return static_cast<std::uint8_t>(131 + n); }
constexpr bool is_win(std::uint8_t v) { return v >= 6 && v <= 130; }
constexpr bool is_loss(std::uint8_t v) { return v >= 131; }
constexpr int distance(std::uint8_t v) { return is_win(v) ? v - 6 : is_loss(v) ? -(v - 131) : 0; }

// The sweeps hand out work in chunks of this many indices of one side's table; a chunk is also
// the unit of the flags that let a ply skip the chunks where it has nothing to do.
inline constexpr std::uint64_t kChunk = 1 << 14;

// ---- tables ----------------------------------------------------------------------------------
struct Pos;
struct Conversions;
// Index: the head * 64^m + the other pieces' squares, 6 bits each, white's pieces first, each
// side's by type (Q R B N), the first piece in the highest bits:
//   [ head ][ piece 0: 6 bits ] .. [ piece m-1: 6 bits ]
// The head of a pawnless table is its king pair (0..461). A table with pawns holds one of
// retra's pawn segments, each pawn on one rank: no pawn move stays in the table (each converts,
// into a segment built earlier), so the pawns' files are the head's top digits, and the board is
// turned only left to right, to put the (first) pawn on the a-d files; the kings move freely:
//   [ pawn's file: 0..3 ][ second pawn's file: 0..7 ][ white king: 6 bits ][ black king: 6 bits ]
// (the second pawn's digit only in a table with two; a third pawn's file, 0..7, follows the
// second's in a table of the kings and three pawns). Two pawns of one colour on one rank are
// one position under two heads (either may be the first), and, on mirror files (c and f), a
// position and its mirror image under one; as with the pawnless kings on the a1-h8 diagonal,
// every copy is computed from the same children, so all agree, and the conversion into retra's
// order reads any one of them. Heads of kings on one square, next to each other or on a pawn's
// square, or of two pawns on one square, are illegal.
struct Table {
  std::string name;  // the material as this table orients it ("KvKR" is KRvK turned around)
  int m = 0;         // pieces besides the kings, up to 3
  std::array<PieceType, 3> type{};
  std::array<Color, 3> colour{};
  // A table with a pawn: its rank (0-based, 1..6) and colour; -1 without. With two pawns, the
  // second's in pawn2_rank, pawn2_colour (-1 with fewer); with three (and no other piece), the
  // third's in pawn3_rank, pawn3_colour.
  int pawn_rank = -1, pawn2_rank = -1, pawn3_rank = -1;
  Color pawn_colour = white, pawn2_colour = white, pawn3_colour = white;
  bool pawned() const { return pawn_rank >= 0; }
  int pawns() const { return (pawn_rank >= 0) + (pawn2_rank >= 0) + (pawn3_rank >= 0); }
  // Pawn k's rank and colour (k < pawns()).
  int rank_of_pawn(int k) const { return k == 0 ? pawn_rank : k == 1 ? pawn2_rank : pawn3_rank; }
  Color colour_of_pawn(int k) const {
    return k == 0 ? pawn_colour : k == 1 ? pawn2_colour : pawn3_colour;
  }
  // Side c's pawns here.
  int pawns_of(Color c) const {
    int n = 0;
    for (int k = 0; k < pawns(); ++k) n += colour_of_pawn(k) == c;
    return n;
  }
  bool has_pawn(Color c) const { return pawns_of(c) > 0; }
  std::uint64_t size = 0;  // per side
  int threads = 1;
  // Distance to mate instead of DTZ: no 50-move horizon, and a conversion acts at the ply its
  // child's distance gives (at_ply). A sub-table of such a table holds retra's DTM bytes (load),
  // kDtmIllegal where illegal, instead of codes, and so do the pawns' children (push_reach,
  // promote_run, pawn_moves: Conversions::dtm).
  bool dtm = false;
  bool huge_pages = true;  // madvise the arrays (Tuning::huge_pages)
  // The arrays hold whole 32-byte blocks for the sweeps' scan: KvK's 462 entries get 18 more,
  // marked illegal, so no sweep ever acts on them.
  std::uint64_t padded() const { return (size + 31) & ~std::uint64_t{31}; }
  LargeArray<std::uint8_t> v[2];  // [side to move][index], on huge pages where granted
  std::array<Table*, 3> sub{};    // the table after piece j is captured
  Table* sub_pawn = nullptr;      // the table after the (first) pawn is captured
  Table* sub_pawn2 = nullptr;     // the table after the second pawn is captured
  Table* sub_pawn3 = nullptr;     // the table after the third pawn is captured
  Table* sub_without_pawn(int k) const {
    return k == 0 ? sub_pawn : k == 1 ? sub_pawn2 : sub_pawn3;
  }
  // The pawns' own moves (pushes, captures, promotions), which leave the table: called in the
  // captures phase for positions of a pawn's side to move (but see push_reach), with the
  // position's index (set by Game::own_kernel, which reads the children through lower).
  std::function<void(Color, std::uint64_t, const Pos&, Conversions&)> pawn_moves;
  // Where Game::own_kernel kept the segment a rank ahead: each position's single push as that
  // segment's Reach (DTM: its DTM byte), at the position's own index (only where the pawn keeps
  // its place, as keeps_place says; push_reach2 is the second pawn's, push_reach3 the third's).
  // The captures phase reads it itself and calls pawn_moves only where a pawn of the side has
  // other moves (a double push, a capture, a push not kept), which then leaves the kept single
  // pushes out; null where the push promotes or nothing was kept.
  const std::uint8_t* push_reach = nullptr;
  const std::uint8_t* push_reach2 = nullptr;
  const std::uint8_t* push_reach3 = nullptr;
  const std::uint8_t* kept_push(int k) const {
    return k == 0 ? push_reach : k == 1 ? push_reach2 : push_reach3;
  }
  // Whether pawn k, moved `steps` ranks forward (back, where negative), stays on ranks 2..7 and
  // keeps its place among its colour's pawns, which retra's segments order by rank (a tie keeps
  // it: two pawns on one rank are one position under either order). Then, in the table of the
  // new ranks, the position after the move has this one's index (no digit of the head changes:
  // the files stay, and the first pawn still turns the board), so a push reads the segment
  // ahead at the position's own index (push_reach).
  bool keeps_place(int k, int steps) const {
    const Color c = colour_of_pawn(k);
    const int to = rank_of_pawn(k) + (c == white ? steps : -steps);
    if (to < 1 || to > 6) return false;
    for (int j = 0; j < pawns(); ++j)
      if (j != k && colour_of_pawn(j) == c && (j < k ? rank_of_pawn(j) > to : rank_of_pawn(j) < to))
        return false;
    return true;
  }
  // Where the single push promotes (one pawn, on its seventh rank): promotion k's child (0..3: Q,
  // R, B, N) as a Reach (DTM: its DTM byte), out[q] for each square q of the last piece in
  // `squares` of the run at p, from one call per run (set by Game::own_kernel, which reads the
  // children through lower): its lookups then run back to back and their cache misses overlap,
  // as one per call to pawn_moves did not. The captures phase asks for each promotion on the
  // squares where the push is free and safe and none before it wins; pawn_moves then leaves the
  // push out.
  std::function<void(Color, const Pos&, int k, std::uint64_t squares, std::uint8_t* out)>
      promote_run;
  // [ply parity][chunk]: whether the chunk holds a candidate or a win that ply must act on. A
  // write of a value for ply n+1 flags its chunk in active[(n+1) & 1]; ply n reads and then
  // clears active[n & 1], so ply n's writes and reads never meet in one array.
  std::vector<std::uint8_t> active[2];
  // [side to move][index / 64], bit index % 64, where a conversion reaches beyond the 50-move
  // horizon (empty where none does): `cursed`, a position that wins in 101 plies unless it wins
  // sooner (a conversion reaches the child's loss beyond the horizon); `late`, one that cannot
  // lose before ply 101 (a conversion reaches the child's win beyond it; none draws or wins).
  // Mapped (huge pages, zero), not vectors: a vector's zeroing took a fault per 4 KiB page on
  // one thread before the captures phase.
  LargeArray<std::uint64_t> cursed[2], late[2];
  // DTM: [side to move][index], the ply at which the position's conversions act, 0 where none
  // does: where its value after the captures is kCapDraw, a conversion wins in that many plies
  // (unless the position wins sooner); where unknown, every conversion loses, the longest in that
  // many plies, so the position cannot lose before that ply. `events` [side * chunks() + chunk]:
  // bit n of the 256 is set where a position of the chunk has ply n.
  LargeArray<std::uint8_t> at_ply[2];
  std::vector<std::array<std::uint64_t, 4>> events;
  int plies = 0;
  int longest = 0;  // the longest distance, in plies
  int base = 0;     // the plies the codes of wins and losses count from
  // Once rebased: the distance in plies of each win and loss coded "earlier" (a byte holds the
  // 254 plies solve() allows), written by the rebase that made it so; 0 elsewhere.
  LargeArray<std::uint8_t> before_base[2];

  // The distance of the win or loss at index idx of side s's table, in plies.
  int plies_to_go(Color s, std::uint64_t idx) const {
    const std::uint8_t x = v[s][idx];
    if (x == kWonEarlier || x == kLostEarlier) return base == 0 ? 0 : before_base[s][idx];
    return std::abs(distance(x)) + base;
  }
  // Sets `longest` once the values are final: what a table that captures into this one needs to
  // know of it.
  void find_longest();

  std::uint64_t chunks() const { return (padded() + kChunk - 1) / kChunk; }
  // Notes that index idx of side s's table now holds a value ply n must act on.
  void activate(int n, Color s, std::uint64_t idx) {
    auto& flag = active[n & 1][static_cast<std::size_t>(s * chunks() + idx / kChunk)];
    // Read first: a flag set once stays in every core's cache.
    if (!std::atomic_ref<const std::uint8_t>(flag).load(std::memory_order_relaxed))
      std::atomic_ref<std::uint8_t>(flag).store(1, std::memory_order_relaxed);
  }
  int shift(int i) const { return 6 * (m - 1 - i); }
  // The index after piece i (not a king) moves from one square to another: a difference.
  std::uint64_t moved(std::uint64_t idx, int i, int from, int to) const {
    return idx + (static_cast<std::uint64_t>(to) << shift(i)) -
           (static_cast<std::uint64_t>(from) << shift(i));
  }
  // The index of kings wk, bk and pieces sq[0..m) (in this table's order), any orientation; in a
  // table with a pawn, the pawn on `pawn` (on this table's rank), a second on `pawn2`, a third on
  // `pawn3`.
  std::uint64_t index(int wk, int bk, const int* sq, int pawn = -1, int pawn2 = -1,
                      int pawn3 = -1) const {
    if (pawned()) {
      // Turned left to right where the (first) pawn stands on the e-h files.
      const int flip = file_of(pawn) >= 4 ? 7 : 0;
      int files = file_of(pawn) ^ flip;
      if (pawn2_rank >= 0) files = files << 3 | (file_of(pawn2) ^ flip);
      if (pawn3_rank >= 0) files = files << 3 | (file_of(pawn3) ^ flip);
      std::uint64_t idx = static_cast<std::uint64_t>(files << 12 | (wk ^ flip) << 6 | (bk ^ flip));
      for (int i = 0; i < m; ++i) idx = idx << 6 | static_cast<std::uint64_t>(sq[i] ^ flip);
      return idx;
    }
    const auto p = static_cast<std::size_t>(wk * 64 + bk);
    const int t = kKp.sym[p];
    std::uint64_t idx = static_cast<std::uint64_t>(kKp.index[p]);
    for (int i = 0; i < m; ++i)
      idx = idx << 6 | kKp.image[static_cast<std::size_t>(t * 64 + sq[i])];
    return idx;
  }
  // The index after a king moves (the kings now on wk, bk) from idx, whose pieces are on sq:
  // where the new pair needs no turn of the board, as it mostly does not, the pieces' bits stay.
  std::uint64_t king_moved(std::uint64_t idx, int wk, int bk, const int* sq) const {
    if (pawned())  // the pawn keeps the orientation
      return ((idx >> (6 * m + 12)) << 12 | static_cast<std::uint64_t>(wk * 64 + bk)) << (6 * m) |
             (idx & ((std::uint64_t{1} << (6 * m)) - 1));
    const auto p = static_cast<std::size_t>(wk * 64 + bk);
    if (kKp.sym[p] != 0) return index(wk, bk, sq);
    return static_cast<std::uint64_t>(kKp.index[p]) << (6 * m) |
           (idx & ((std::uint64_t{1} << (6 * m)) - 1));
  }
};

// A material of at most 3 pieces besides the kings and the pawns, as (type, colour): the table's
// name, pieces and size, no arrays yet. Pieces in any order; with pawn_rank >= 0, the table
// holds one pawn of pawn_colour on that rank (0-based) besides them, with pawn2_rank >= 0 a
// second of pawn2_colour, and with pawn3_rank >= 0 (no piece besides the kings) a third.
Table make_table(std::vector<std::pair<PieceType, Color>> pieces, int threads, int pawn_rank = -1,
                 Color pawn_colour = white, int pawn2_rank = -1, Color pawn2_colour = white,
                 int pawn3_rank = -1, Color pawn3_colour = white);
// The table of retra's segment with these slots: its pieces besides the kings and pawns, and its
// pawns' ranks and colours, in slot order.
Table table_for(std::span<const Slot> slots, int threads);
// A material's name, white first ("KvKR").
std::string name_of(const Table& t);
// t's pieces besides the kings and the pawn without piece j: the material of sub-table j.
std::vector<std::pair<PieceType, Color>> pieces_without(const Table& t, int j);

struct Pos {
  std::uint64_t kings;  // the head: the king pair's class, or the pawns' files and the kings
  int wk, bk;
  std::array<int, 3> sq;
  int pawn = -1;   // the pawn's square, in a table with a pawn
  int pawn2 = -1;  // the second pawn's, in a table with two
  int pawn3 = -1;  // the third's, in a table with three
  Bitboard occ, side[2];
  int pawn_at(int k) const { return k == 0 ? pawn : k == 1 ? pawn2 : pawn3; }
  int& pawn_at(int k) { return k == 0 ? pawn : k == 1 ? pawn2 : pawn3; }
};
// What a position's converting moves reach: whether it has one (legal), whether one of them
// wins (reaches a loss of the other side within the 50-move horizon), draws, wins beyond the
// horizon (`cursed`: the child's mover loses in more than 100 plies) or loses beyond it (`late`:
// the child's mover wins in more than 100 plies). With dtm (Table::dtm), the children are read as
// retra's DTM bytes (add_dtm): a move into byte b takes b plies, a win where b is odd; first_win
// is the shortest winning one (256: none), last_loss the longest losing one, and `wins` says one
// mates at once (b = 1), which no other conversion betters.
struct Conversions {
  bool any = false, wins = false, draws = false, cursed = false, late = false;
  bool dtm = false;
  int first_win = 256, last_loss = 0;
};
Pos decode(const Table& t, std::uint64_t idx);
// Whether the king of `side` (the pawn's) is safe once its pawn moves from `from` (p.pawn by
// default) to `to`: no piece of the other side attacks it through the square left or past the
// one taken, and no pawn of the other side attacks it unless taken. Inline: the
// captures phase asks it of every position of the pawn's side.
inline bool pawn_move_safe(const Table& t, const Pos& p, Color side, int to, int from = -1) {
  if (from < 0) from = p.pawn;
  const Color them = opposite(side);
  const int king = side == white ? p.wk : p.bk;
  const Bitboard occ = (p.occ & ~bit(from)) | bit(to);
  for (int i = 0; i < t.m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.colour[u] == them && p.sq[u] != to && attacks_square(t.type[u], them, p.sq[u], king, occ))
      return false;
  }
  // Their pawns: a check stands unless that pawn is taken.
  for (int k = 0; k < t.pawns(); ++k) {
    const int theirs = p.pawn_at(k);
    if (t.colour_of_pawn(k) == them && theirs != to && (pawn_attacks(them, theirs) & bit(king)))
      return false;
  }
  return true;
}

// What a converting move reaches, as the child's side to move sees it: a draw, a win or a loss
// within the 50-move horizon or beyond it; `none` for an illegal child.
enum class Reach : std::uint8_t { draw, wins, wins_beyond, loses, loses_beyond, none };
// The reach of a stored DTZ byte (0 a draw, 2d + 1 a win and 2d + 2 a loss in d plies).
Reach reach_of_byte(int b);
// The stored DTZ byte (as reach_of_byte reads it) of a value coded with base 0: its distance fits,
// since such codes reach kMaxWin plies at most.
constexpr std::uint8_t stored_byte(std::uint8_t v) {
  return is_win(v)    ? static_cast<std::uint8_t>(2 * distance(v) + 1)
         : is_loss(v) ? static_cast<std::uint8_t>(2 * -distance(v) + 2)
                      : std::uint8_t{0};
}
// The reach of side s's final value at index idx of a solved table.
Reach reach_of(const Table& t, Color s, std::uint64_t idx);
// The DTM byte (distance + 1, 0 a draw) of a value coded with base 0.
constexpr std::uint8_t stored_dtm_byte(std::uint8_t v) {
  return is_win(v) || is_loss(v) ? static_cast<std::uint8_t>(std::abs(distance(v)) + 1)
                                 : std::uint8_t{0};
}
// The DTM byte of side s's final value at index idx of a solved DTM table, kDtmIllegal where
// illegal (its distances end within 254 plies, solve()'s limit, whose byte, 255, is kDtmIllegal's
// too: a kept push is read for legal pushes only, and load() refuses a sub-table holding it).
std::uint8_t dtm_byte_of(const Table& t, Color s, std::uint64_t idx);
// Notes a converting move into a child of reach r (not none).
void add(Conversions& c, Reach r);
// Notes a converting move into a child of DTM byte b (c.dtm; the child legal).
void add_dtm(Conversions& c, int b);
// Notes a converting move into a child whose stored byte (DTZ, or DTM where c.dtm) is b.
inline void add_byte(Conversions& c, int b) {
  if (c.dtm)
    add_dtm(c, b);
  else
    add(c, reach_of_byte(b));
}
// Notes a converting move into a child kept as a byte of the sweep's (Table::push_reach,
// promote_run): its Reach, or its DTM byte where c.dtm.
inline void add_kept(Conversions& c, std::uint8_t x) {
  if (c.dtm)
    add_dtm(c, x);
  else
    add(c, static_cast<Reach>(x));
}

struct SolveOptions {
  // Codes are rebased each time distances pass this many plies beyond the base (kMaxWin: as late
  // as the codes allow; less in tests, so that small tables take that path).
  int rebase_at = kMaxWin;
  // The longest distance solve() gives, in plies: a DTM byte holds distance + 1 (254 at most),
  // and before_base a distance (less in tests, so that small tables are refused).
  int max_plies = kMaxPlies;
  Progress* progress = nullptr;
  std::string label;                             // the progress bar's, e.g. "KQRvKR"
  std::function<void(const std::string&)> note;  // a line per ply, when given
};
struct SolveTimes {
  double illegal = 0, captures = 0, mates = 0, plies = 0;  // seconds
};
// Builds t's values, its sub-tables (t.sub, t.sub_pawn) already built or loaded (with codes of
// base 0, or no distance beyond the 50-move horizon). Fails when the memory cannot be had;
// returns false when a distance passes SolveOptions::max_plies, the values then useless.
Result<bool> solve(Table& t, const SolveOptions& o, SolveTimes* times = nullptr);

// A placement's stored DTZ byte in retra's segment of the table (side to move, retra's placement
// index), 0 for a draw, 2d + 1 a win and 2d + 2 a loss in d plies.
using StoredValue = std::function<int(Color, std::uint64_t)>;
// Fills t (a sub-table) from retra's DTZ segment of the same material instead of building it:
// ix is that segment's indexer, flip says retra's table is t's material with the colours
// exchanged (and the board turned over). Where the segment keeps a side as classes, the values
// there are the classes' nearest distances, which is all a capture into them reads; a distance
// beyond the 50-move horizon is kept as 101 plies, which is all a capture into it reads. With
// t.dtm, value gives retra's DTM bytes (0 a draw, plies + 1), kept as they are, and kDtmIllegal
// where t's position is illegal; a byte of 255 (254 plies) fails (Cause::distance_overflow), as
// it would read as illegal.
Status load(Table& t, const Indexer& ix, bool flip, const StoredValue& value);
// The bare kings' solved table (all draws) as a DTM sub-table: 0, and kDtmIllegal where illegal.
void draws_as_dtm(Table& t);

// t's values in retra's segment order and encoding (side to move, then retra's index of the
// placement; 0 for a draw, a hole or an illegal placement; DTZ: 2d + 1 a win and 2d + 2 a loss in
// d plies; with t.dtm, DTM: d + 1 for either, every distance within a byte), into out
// (2 * ix.size() entries); ix must index t's material as t orients it. DTZ codes beyond a byte
// (127 plies and more) are stored as the byte of 126 plies, 253 for a win and 254 for a loss, and
// returned with their exact value, (index, code) in index order, as retra's kernels hand them to
// the writer. Where holes is given (a zeroed bitmap of 2 * ix.size() bits,
// KernelOptions::holes), the entries that are holes of the index (a placement that is not its
// class's canonical one, or the side not to move in check) get their bit set.
std::vector<std::pair<std::uint64_t, std::uint32_t>> to_segment(const Table& t, const Indexer& ix,
                                                                std::span<std::uint8_t> out,
                                                                std::uint64_t* holes = nullptr);

}  // namespace retra::chess::sweep
