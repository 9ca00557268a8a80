// What the generator design docs/CHESS.md names for closing the speed gap costs on this machine:
// a pawnless chess table built the way Syzygy's generator builds one (its public description and
// source read, none of it copied). Every piece sits on its own 6 bits, so a move is an index
// difference; illegal positions are marked once, so no move or unmove tests legality; there are
// no counters: the parents of a win become loss candidates, and a candidate is checked by
// generating its moves forward and reading the other side's table; every ply is one sweep of
// both sides' tables (of the chunks where it has work), and beyond Syzygy's design a side's wins
// are pulled from its open positions instead of pushed from the other side's losses where that
// reads less. It computes the distance to conversion (capture or mate). That is retra's DTZ
// under the 50-move rule, cursed wins and blessed losses being the distances beyond 100 plies,
// as long as no capture leads to a value beyond that horizon, which would count from ply 101:
// no 3-4 piece pawnless table holds one, so no 3-5 piece pawnless table captures into one (the
// program fails if it would). A measurement, not product code: pawnless materials of 3-5
// pieces, distances up to 248 plies, nothing written.
// Thread safety: one build at a time; OpenMP threads inside a sweep write single bytes with
// relaxed atomics, and the writes that can meet another thread's are compare-exchanges.
//
// Usage: chess_sweep MATERIAL [--threads N] [--subtables DB] [--check DB] [--stride K]
//                    [--compare DB] [--rebase-at K]
//   --subtables DB  the sub-tables are read from retra's segments in DB (as the product would
//                   find them), not built in memory
//   --check DB      every legal position (every K-th index with --stride K) against retra's
//                   tables through the probe API: WDL class and DTZ
//   --compare DB    the values converted to retra's DTZ segment order and encoding, timed (what
//                   writing them would take first), and compared entry by entry with the
//                   segment retra built
//   --rebase-at K   codes rebased once distances pass K plies (default 124; for tests)
// Exit 1 on any difference.
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "retra/probe.hpp"
#include "src/database.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/index.hpp"
#include "src/games/chess/values.hpp"
#include "src/memory.hpp"

namespace {

using namespace retra::chess;
using Clock = std::chrono::steady_clock;

// ---- the king pair: 462 classes, as in Syzygy's pawnless tables -------------------------------
// The white king in the a1-d1-d4 triangle; on its diagonal, the black king on or below a1-h8.
// Positions with both kings on the diagonal keep their diagonal mirror image as a second index;
// both are computed, with the same value.
int transform(int sq, int t) {
  int x = file_of(sq), y = rank_of(sq);
  if (t & 4) std::swap(x, y);
  if (t & 1) x = 7 - x;
  if (t & 2) y = 7 - y;
  return square(x, y);
}
bool canonical_pair(int wk, int bk) {
  const int x = file_of(wk), y = rank_of(wk);
  if (x > 3 || y > x || wk == bk || (king_attacks(wk) & bit(bk))) return false;
  return x != y || file_of(bk) >= rank_of(bk);
}

struct KingPairs {
  std::array<std::int16_t, 64 * 64> index{};  // -1: kings equal or adjacent
  std::array<std::uint8_t, 64 * 64> sym{};    // the transform that makes the pair canonical
  std::array<std::uint8_t, 64 * 8> image{};   // [t * 64 + sq]
  std::vector<std::pair<std::uint8_t, std::uint8_t>> pairs;
  KingPairs() {
    for (int t = 0; t < 8; ++t)
      for (int s = 0; s < 64; ++s)
        image[static_cast<std::size_t>(t * 64 + s)] = static_cast<std::uint8_t>(transform(s, t));
    std::array<std::int16_t, 64 * 64> id;
    id.fill(-1);
    for (int wk = 0; wk < 64; ++wk)
      for (int bk = 0; bk < 64; ++bk)
        if (canonical_pair(wk, bk)) {
          id[static_cast<std::size_t>(wk * 64 + bk)] = static_cast<std::int16_t>(pairs.size());
          pairs.emplace_back(wk, bk);
        }
    index.fill(-1);
    for (int wk = 0; wk < 64; ++wk)
      for (int bk = 0; bk < 64; ++bk)
        for (int t = 0; t < 8; ++t) {
          const int k = id[static_cast<std::size_t>(transform(wk, t) * 64 + transform(bk, t))];
          if (k >= 0) {
            index[static_cast<std::size_t>(wk * 64 + bk)] = static_cast<std::int16_t>(k);
            sym[static_cast<std::size_t>(wk * 64 + bk)] = static_cast<std::uint8_t>(t);
            break;
          }
        }
  }
};
const KingPairs kKp;

// ---- values ---------------------------------------------------------------------------------
//   0 unknown | 1 illegal (or two pieces on a square) | 2 draw | 3 unknown, a capture draws
//   4, 5 loss candidates (two codes: this ply's and the next's)
//   6 won earlier | 7..130 win in base + 1..124 plies
//   131 lost earlier | 132..255 loss in base + 1..124 plies
// Distances are coded relative to the table's base (Table::base), 0 until a table outgrows the
// codes. Plies compare a child with "won (lost) by the last ply" only, so the values final by then
// can share one code ("earlier", below every other win or loss code), their distances kept aside:
// this is how the codes are rebased (rebase()). With base 0, "lost earlier" is mated.
constexpr std::uint8_t kUnknown = 0, kIllegal = 1, kDraw = 2, kCapDraw = 3;
constexpr std::uint8_t kWonEarlier = 6, kLostEarlier = 131;
constexpr int kMaxWin = 124;   // relative to the base
constexpr int kHorizon = 100;  // plies: the 50-move rule
constexpr std::uint8_t candidate(int n) { return static_cast<std::uint8_t>(4 + (n & 1)); }
constexpr std::uint8_t kInCheck = candidate(0);  // before ply 1: the side to move in check
// Codes of a win or loss in n plies beyond the base; distance() is the inverse (negative: a loss).
constexpr std::uint8_t win(int n) { return static_cast<std::uint8_t>(6 + n); }
constexpr std::uint8_t loss(int n) { return static_cast<std::uint8_t>(131 + n); }
constexpr bool is_win(std::uint8_t v) { return v >= 6 && v <= 130; }
constexpr bool is_loss(std::uint8_t v) { return v >= 131; }
constexpr int distance(std::uint8_t v) { return is_win(v) ? v - 6 : is_loss(v) ? -(v - 131) : 0; }

std::uint8_t load(const std::uint8_t& v) {
  return std::atomic_ref<const std::uint8_t>(v).load(std::memory_order_relaxed);
}
void store(std::uint8_t& v, std::uint8_t x) {
  std::atomic_ref<std::uint8_t>(v).store(x, std::memory_order_relaxed);
}
bool exchange(std::uint8_t& v, std::uint8_t from, std::uint8_t to) {
  return std::atomic_ref<std::uint8_t>(v).compare_exchange_strong(from, to,
                                                                  std::memory_order_relaxed);
}

// ---- tables ---------------------------------------------------------------------------------
// The sweeps hand out work in chunks of this many indices of one side's table; a chunk is also
// the unit of the flags that let a ply skip the chunks where it has nothing to do.
constexpr std::uint64_t kChunk = 1 << 14;

// Index: king pair (0..461) * 64^m + the other pieces' squares, 6 bits each, white's pieces
// first, each side's by type (Q R B N), the first piece in the highest bits.
struct Table {
  std::string name;
  int m = 0;  // pieces besides the kings
  std::array<PieceType, 3> type{};
  std::array<Color, 3> colour{};
  std::uint64_t size = 0;  // per side
  // The arrays hold whole 8-byte words for the sweeps' scan: KvK's 462 entries get 2 more,
  // marked illegal, so no sweep ever acts on them.
  std::uint64_t padded() const { return (size + 7) & ~std::uint64_t{7}; }
  retra::LargeArray<std::uint8_t> v[2];  // [side to move][index], on huge pages where granted
  std::array<Table*, 3> sub{};           // the table after piece j is captured
  // [ply parity][chunk]: whether the chunk holds a candidate or a win that ply must act on. A
  // write of a value for ply n+1 flags its chunk in active[(n+1) & 1]; ply n reads and then
  // clears active[n & 1], so ply n's writes and reads never meet in one array.
  std::vector<std::uint8_t> active[2];
  double seconds = 0;
  int plies = 0;
  int longest = 0;  // the longest distance, in plies
  int base = 0;     // the plies the codes of wins and losses count from
  // Once rebased: every win and loss as coded with base 0, for the distances of those coded
  // "earlier" since.
  retra::LargeArray<std::uint8_t> before_base[2];

  // The distance of the win or loss at index idx of side s's table, in plies.
  int plies_to_go(Color s, std::uint64_t idx) const {
    const std::uint8_t x = v[s][idx];
    if (x == kWonEarlier || x == kLostEarlier)
      return base == 0 ? 0 : std::abs(distance(before_base[s][idx]));
    return std::abs(distance(x)) + base;
  }
  // Sets `longest` once the values are final (not timed): what a table that captures into this
  // one needs to know of it.
  void find_longest() {
    for (const Color s : {white, black})
      for (std::uint64_t idx = 0; idx < size; ++idx)
        if (is_win(v[s][idx]) || is_loss(v[s][idx]))
          longest = std::max(longest, plies_to_go(s, idx));
  }

  std::uint64_t chunks() const { return (padded() + kChunk - 1) / kChunk; }
  // Notes that index idx of side s's table now holds a value ply n must act on.
  void activate(int n, Color s, std::uint64_t idx) {
    auto& flag = active[n & 1][static_cast<std::size_t>(s * chunks() + idx / kChunk)];
    if (!load(flag)) store(flag, 1);  // read first: a flag set once stays in every core's cache
  }
  int shift(int i) const { return 6 * (m - 1 - i); }
  // The index after piece i (not a king) moves from one square to another: a difference.
  std::uint64_t moved(std::uint64_t idx, int i, int from, int to) const {
    return idx + (static_cast<std::uint64_t>(to) << shift(i)) -
           (static_cast<std::uint64_t>(from) << shift(i));
  }
  // The index of kings wk, bk and pieces sq[0..m) (in this table's order), any orientation.
  std::uint64_t index(int wk, int bk, const int* sq) const {
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
    const auto p = static_cast<std::size_t>(wk * 64 + bk);
    if (kKp.sym[p] != 0) return index(wk, bk, sq);
    return static_cast<std::uint64_t>(kKp.index[p]) << (6 * m) |
           (idx & ((std::uint64_t{1} << (6 * m)) - 1));
  }
};

struct Pos {
  std::uint64_t kings;  // the king pair's class, 0..461
  int wk, bk;
  std::array<int, 3> sq;
  Bitboard occ, side[2];
};

Pos decode(const Table& t, std::uint64_t idx) {
  Pos p{};
  p.kings = idx >> (6 * t.m);
  const auto& kp = kKp.pairs[static_cast<std::size_t>(p.kings)];
  p.wk = kp.first;
  p.bk = kp.second;
  p.side[white] = bit(p.wk);
  p.side[black] = bit(p.bk);
  for (int i = 0; i < t.m; ++i) {
    p.sq[static_cast<std::size_t>(i)] = static_cast<int>(idx >> t.shift(i) & 63);
    p.side[t.colour[static_cast<std::size_t>(i)]] |= bit(p.sq[static_cast<std::size_t>(i)]);
  }
  p.occ = p.side[white] | p.side[black];
  return p;
}
// Decodes the run of 64 indices from base, in which only the last piece moves, with the last
// piece off the board (in side and occ); false where two of the other pieces share a square,
// which makes the whole run illegal.
bool decode_run(const Table& t, std::uint64_t base, Pos& p) {
  p = decode(t, base);
  p.side[white] = bit(p.wk);
  p.side[black] = bit(p.bk);
  for (int i = 0; i + 1 < t.m; ++i)
    p.side[t.colour[static_cast<std::size_t>(i)]] |= bit(p.sq[static_cast<std::size_t>(i)]);
  p.occ = p.side[white] | p.side[black];
  return std::popcount(p.occ) == t.m + 1;
}

// Calls f(child index) for every quiet move (to an empty square) of side s, the child in the
// other side's table, until f returns false; returns whether it went through all of them. King
// moves next to the other king have no index and are not generated (they are illegal).
template <class F>
bool for_each_quiet(const Table& t, std::uint64_t idx, const Pos& p, Color s, F&& f) {
  for (int i = 0; i < t.m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.colour[u] != s) continue;
    for (Bitboard q = attacks(t.type[u], p.sq[u], p.occ) & ~p.occ; q; q &= q - 1)
      if (!f(t.moved(idx, i, p.sq[u], std::countr_zero(q)))) return false;
  }
  const int k = s == white ? p.wk : p.bk, other = s == white ? p.bk : p.wk;
  for (Bitboard q = king_attacks(k) & ~p.occ & ~king_attacks(other); q; q &= q - 1) {
    const int b = std::countr_zero(q);
    if (!f(s == white ? t.king_moved(idx, b, p.bk, p.sq.data())
                      : t.king_moved(idx, p.wk, b, p.sq.data())))
      return false;
  }
  return true;
}

// Calls f(parent index) for every quiet unmove of the side that just moved (not s), the parent
// in that side's table. Parents whose side not to move is in check are illegal in the table; the
// caller reads that, so no legality is tested here.
template <class F>
void for_each_unmove(const Table& t, std::uint64_t idx, const Pos& p, Color s, F&& f) {
  const Color mover = opposite(s);
  for (int i = 0; i < t.m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.colour[u] != mover) continue;
    for (Bitboard q = attacks(t.type[u], p.sq[u], p.occ) & ~p.occ; q; q &= q - 1)
      f(t.moved(idx, i, p.sq[u], std::countr_zero(q)));
  }
  // A king unmove can turn the board. Where both kings end on the a1-h8 diagonal the parent
  // has two indices (mirror images); both are reported, or one of them would never be reached.
  const int k = mover == white ? p.wk : p.bk, other = mover == white ? p.bk : p.wk;
  for (Bitboard q = king_attacks(k) & ~p.occ & ~king_attacks(other); q; q &= q - 1) {
    const int b = std::countr_zero(q);
    const int wk = mover == white ? b : p.wk, bk = mover == white ? p.bk : b;
    const std::uint64_t parent = t.king_moved(idx, wk, bk, p.sq.data());
    f(parent);
    const auto& kp = kKp.pairs[static_cast<std::size_t>(parent >> (6 * t.m))];
    if (file_of(kp.first) == rank_of(kp.first) && file_of(kp.second) == rank_of(kp.second)) {
      std::uint64_t mirror = parent >> (6 * t.m);
      for (int i = 0; i < t.m; ++i)
        mirror = mirror << 6 | kKp.image[4 * 64 + (parent >> t.shift(i) & 63)];
      if (mirror != parent) f(mirror);
    }
  }
}

struct Counts {
  // wins, losses and new candidates by the side to move in the position written
  std::array<std::uint64_t, 2> wins{}, losses{}, marked{};
  std::uint64_t reads = 0;
  std::uint64_t all_losses() const { return losses[0] + losses[1]; }
  std::uint64_t all_marked() const { return marked[0] + marked[1]; }
  Counts& operator+=(const Counts& o) {
    for (int s = 0; s < 2; ++s) {
      wins[s] += o.wins[s];
      losses[s] += o.losses[s];
      marked[s] += o.marked[s];
    }
    reads += o.reads;
    return *this;
  }
};

// Whether a position is still open: unknown, or a candidate of either ply.
constexpr bool is_open(std::uint8_t v) { return v == 0 || (v >= 3 && v <= 5); }

// Calls body(side, index, value, counts) for every index of both sides' tables whose value is a or
// b, or, on a side whose `open` is set, whose value is open; in parallel. Eight values are tested
// at once (a word with a zero byte where one matches, or one below 6 for the open values); the
// words are read with relaxed atomic loads, since other threads write single bytes of the same
// tables, and body is handed the byte as read again. Where `active` is given, only the chunks it
// flags are read (a flag per side and chunk, side-major, as Table::activate sets them), but on an
// open side every chunk.
template <class Body>
Counts sweep(Table& t, std::uint8_t a, std::uint8_t b, Body&& body,
             const std::uint8_t* active = nullptr, std::array<bool, 2> open = {}) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const std::uint64_t size = t.padded(), chunks = t.chunks();
  Counts total;
#pragma omp declare reduction(add:Counts : omp_out += omp_in)
#pragma omp parallel for schedule(dynamic, 4) reduction(add : total)
  for (std::uint64_t c = 0; c < 2 * chunks; ++c) {
    const auto s = static_cast<Color>(c / chunks);
    if (active && !open[s] && !load(active[c])) continue;
    auto& v = t.v[s];
    const std::uint64_t lo = (c % chunks) * kChunk, hi = std::min(size, lo + kChunk);
    // One loop per kind of match, so the word test is not chosen again for every word.
    auto scan = [&](auto word_matches, auto matches) {
      for (std::uint64_t w = lo; w < hi; w += 8) {
        const std::uint64_t word = std::atomic_ref<const std::uint64_t>(
                                       *reinterpret_cast<const std::uint64_t*>(v.data() + w))
                                       .load(std::memory_order_relaxed);
        if (!(word_matches(word) & kHigh)) continue;
        for (std::uint64_t idx = w; idx < w + 8; ++idx) {
          const std::uint8_t x = load(v[idx]);
          if (matches(x)) body(s, idx, x, total);
        }
      }
    };
    if (open[s])
      scan([](std::uint64_t word) { return (word - kOnes * 6) & ~word; }, is_open);
    else
      scan(
          [&](std::uint64_t word) {
            const std::uint64_t xa = word ^ (kOnes * a), xb = word ^ (kOnes * b);
            return ((xa - kOnes) & ~xa) | ((xb - kOnes) & ~xb);
          },
          [&](std::uint8_t x) { return x == a || x == b; });
  }
  return total;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "chess_sweep: %s\n", what.c_str());
  std::exit(1);
}

// Marks the parents of a loss in n (side s to move at idx) as wins in n+1, where still open.
void mark_wins(Table& t, std::uint64_t idx, const Pos& p, Color s, int n, Counts& k) {
  auto& parents = t.v[opposite(s)];
  const std::uint8_t won = win(n + 1 - t.base);
  for_each_unmove(t, idx, p, s, [&](std::uint64_t parent) {
    ++k.reads;
    const std::uint8_t x = load(parents[parent]);
    if (x == kUnknown || x == kCapDraw || x == candidate(0) || x == candidate(1)) {
      store(parents[parent], won);
      t.activate(n + 1, opposite(s), parent);
      ++k.wins[opposite(s)];
    }
  });
}

// Both sides' arrays, every value unknown, with the illegal positions marked once: two pieces
// on one square, or the side not to move in check. The side to move in check is noted too (a
// code the plies use for candidates), since only there can a position without moves be a mate.
void mark_illegal(Table& t) {
  for (auto& v : t.v) {  // zeroed: every value unknown
    auto a = retra::LargeArray<std::uint8_t>::allocate(t.padded());
    if (!a) fail(t.name + ": " + a.error().message());
    v = std::move(*a);
    for (std::uint64_t idx = t.size; idx < t.padded(); ++idx) v[idx] = kIllegal;
  }
  // The indices come in runs of 64 in which only the last piece moves, so what the other pieces
  // attack is worked out once per run: the last piece can only give a check itself or stand
  // between a checker and the king.
  auto mark = [&](std::uint64_t idx, bool white_checked, bool black_checked) {
    t.v[white][idx] = black_checked ? kIllegal : white_checked ? kInCheck : kUnknown;
    t.v[black][idx] = white_checked ? kIllegal : black_checked ? kInCheck : kUnknown;
  };
  if (t.m == 0) {
    for (std::uint64_t idx = 0; idx < t.size; ++idx) mark(idx, false, false);
  } else {
    const auto last = static_cast<std::size_t>(t.m - 1);
#pragma omp parallel for schedule(dynamic, 256)
    for (std::uint64_t base = 0; base < t.size; base += 64) {
      Pos p;
      const bool placed = decode_run(t, base, p);
      const Bitboard occ = p.occ;
      if (!placed) {
        for (std::uint64_t idx = base; idx < base + 64; ++idx) t.v[0][idx] = t.v[1][idx] = kIllegal;
        continue;
      }
      // Per attacking side: whether another piece checks, and the squares that block every such
      // check (none where a knight checks, or two pieces do).
      std::array<bool, 2> checks{};
      std::array<Bitboard, 2> block{~Bitboard{0}, ~Bitboard{0}};
      std::array<int, 2> target{p.bk, p.wk};
      for (std::size_t i = 0; i < last; ++i) {
        const Color by = t.colour[i];
        if (!attacks_square(t.type[i], by, p.sq[i], target[by], occ)) continue;
        checks[by] = true;
        block[by] &= between(p.sq[i], target[by]);
      }
      const Color lc = t.colour[last];
      for (int q = 0; q < 64; ++q) {
        const auto idx = base + static_cast<std::uint64_t>(q);
        if (occ & bit(q)) {
          t.v[0][idx] = t.v[1][idx] = kIllegal;
          continue;
        }
        std::array<bool, 2> check{checks[0] && !(block[0] & bit(q)),
                                  checks[1] && !(block[1] & bit(q))};
        check[lc] = check[lc] || attacks_square(t.type[last], lc, q, target[lc], occ);
        mark(idx, check[black], check[white]);
      }
    }
  }
}

// Before a ply whose wins would outgrow the codes: every win and loss in at most `upto` plies
// becomes "won / lost earlier", the others are coded from base `upto`, and the distances are kept
// in before_base. Once per table: the codes then reach 248 plies. --rebase-at K rebases once the
// distances pass K plies instead of 124, so that small tables take this path in the tests.
int g_rebase_at = kMaxWin;
void rebase(Table& t, int upto) {
  if (t.base != 0)
    fail(t.name + ": a distance beyond this program's " + std::to_string(2 * g_rebase_at) +
         " plies");
  for (int s = 0; s < 2; ++s) {
    auto a = retra::LargeArray<std::uint8_t>::allocate(t.padded());
    if (!a) fail(t.name + ": " + a.error().message());
    t.before_base[s] = std::move(*a);
    auto& v = t.v[s];
    auto& kept = t.before_base[s];
#pragma omp parallel for schedule(static)
    for (std::uint64_t idx = 0; idx < t.padded(); ++idx) {
      const std::uint8_t x = v[idx];
      kept[idx] = x;
      if (!is_win(x) && !is_loss(x)) continue;
      const int d = std::abs(distance(x));
      v[idx] = d <= upto   ? (is_win(x) ? kWonEarlier : kLostEarlier)
               : is_win(x) ? win(d - upto)
                           : loss(d - upto);
    }
  }
  t.base = upto;
  std::printf("  %s: codes rebased after ply %d\n", t.name.c_str(), upto);
}

// Builds t's values, its sub-tables already built.
void solve(Table& t, bool verbose) {
  const auto start = Clock::now();
  mark_illegal(t);
  t.active[0].assign(2 * t.chunks(), 0);
  t.active[1].assign(2 * t.chunks(), 1);  // ply 1 reads everything the captures marked
  const double illegal = std::chrono::duration<double>(Clock::now() - start).count();
  // Captures, into the sub-tables: one into a lost position wins in 1; one into a draw keeps the
  // position from losing; if every capture loses, the position is a candidate for ply 1, which
  // finds it lost in 1 if it has no legal quiet move. No position tests its quiet moves here but
  // one in check without a legal capture (mate or not). A stalemate is never reached by an
  // unmove from a child, so it stays unknown and ends a draw.
  // Run by run again (KvK has no captures and no checks): a capture between two of the other
  // pieces is found once per run, and its 64 children are one run of the sub-table, since the
  // last piece stays last there; only captures of or by the last piece, and by a king (which
  // can turn the board), are worked out square by square.
  if (t.m > 0) {
    const auto last = static_cast<std::size_t>(t.m - 1);
    // The index in sub[j] of this table's position with piece j gone and the others on sq.
    auto sub_index = [&](std::size_t j, std::uint64_t kings, const std::array<int, 3>& sq) {
      std::uint64_t child = kings;
      for (std::size_t k = 0; k <= last; ++k)
        if (k != j) child = child << 6 | static_cast<std::uint64_t>(sq[k]);
      return child;
    };
    auto king_capture = [&](std::size_t j, const Pos& p, Color s, int to, std::array<int, 3> sq) {
      std::array<int, 3> rest{};
      for (std::size_t k = 0, r = 0; k <= last; ++k)
        if (k != j) rest[r++] = sq[k];
      return t.sub[j]->index(s == white ? to : p.wk, s == white ? p.bk : to, rest.data());
    };
#pragma omp parallel for schedule(dynamic, 256)
    for (std::uint64_t base = 0; base < t.size; base += 64) {
      Pos p;
      if (!decode_run(t, base, p)) continue;
      const Bitboard occ = p.occ;
      const Color lc = t.colour[last];
      for (const Color s : {white, black}) {
        const Color o = opposite(s);
        const int king = s == white ? p.wk : p.bk, other = s == white ? p.bk : p.wk;
        const Bitboard reach = king_attacks(king) & ~king_attacks(other);
        // Captures between the other pieces: a child run, and the squares of the last piece
        // that block the capture.
        std::array<std::pair<const std::uint8_t*, Bitboard>, 4> runs{};
        std::array<std::size_t, 3> by_king{};  // pieces the king can take
        std::size_t nr = 0, nk = 0;
        for (std::size_t j = 0; j < last; ++j) {
          if (t.colour[j] != o) continue;
          const std::uint8_t* child = t.sub[j]->v[o].data();
          for (std::size_t i = 0; i < last; ++i) {
            if (t.colour[i] != s || !attacks_square(t.type[i], s, p.sq[i], p.sq[j], occ)) continue;
            std::array<int, 3> sq = p.sq;
            sq[i] = sq[j];
            sq[last] = 0;
            runs[nr++] = {child + sub_index(j, p.kings, sq), between(p.sq[i], p.sq[j])};
          }
          if (reach & bit(p.sq[j])) by_king[nk++] = j;
        }
        auto& v = t.v[s];
        for (int q = 0; q < 64; ++q) {
          const auto idx = base + static_cast<std::uint64_t>(q);
          const std::uint8_t checked = v[idx];
          if (checked == kIllegal) continue;
          bool captures = false, wins = false, draws = false;
          auto see = [&](std::uint8_t x) {
            if (x == kIllegal) return;
            captures = true;
            wins |= is_loss(x);
            draws |= x == kDraw;
          };
          for (std::size_t r = 0; r < nr; ++r)
            if (!(runs[r].second & bit(q))) see(runs[r].first[q]);
          p.sq[last] = q;
          for (std::size_t k = 0; k < nk; ++k)
            see(t.sub[by_king[k]]->v[o][king_capture(by_king[k], p, s, p.sq[by_king[k]], p.sq)]);
          if (lc == o) {  // the last piece taken, by a piece or the king
            const auto& child = t.sub[last]->v[o];
            for (std::size_t i = 0; i < last; ++i) {
              if (t.colour[i] != s || !attacks_square(t.type[i], s, p.sq[i], q, occ)) continue;
              std::array<int, 3> sq = p.sq;
              sq[i] = q;
              see(child[sub_index(last, p.kings, sq)]);
            }
            if (reach & bit(q)) see(child[king_capture(last, p, s, q, p.sq)]);
          } else {  // the last piece takes
            for (std::size_t j = 0; j < last; ++j) {
              if (t.colour[j] != o || !attacks_square(t.type[last], s, q, p.sq[j], occ)) continue;
              std::array<int, 3> sq = p.sq;
              sq[last] = sq[j];
              see(t.sub[j]->v[o][sub_index(j, p.kings, sq)]);
            }
          }
          std::uint8_t x = wins ? win(1) : draws ? kCapDraw : captures ? candidate(1) : kUnknown;
          if (checked == kInCheck && !captures) {
            Pos here = p;
            here.occ = occ | bit(q);
            here.side[lc] |= bit(q);
            const auto& next = t.v[o];
            const bool moves = !for_each_quiet(t, idx, here, s, [&](std::uint64_t child) {
              return load(next[child]) == kIllegal;
            });
            if (!moves) x = loss(0);
          }
          v[idx] = x;
        }
      }
    }
  }
  const double captures = std::chrono::duration<double>(Clock::now() - start).count();
  // The parents of mates win in 1.
  sweep(t, loss(0), loss(0), [&](Color s, std::uint64_t idx, std::uint8_t, Counts& k) {
    mark_wins(t, idx, decode(t, idx), s, 0, k);
  });
  const double init = std::chrono::duration<double>(Clock::now() - start).count();
  // Ply n, one sweep of both sides: a candidate (marked in ply n-1) whose every move reaches a
  // win in at most n-1 plies loses in n; the parents of a win in n become candidates for ply
  // n+1. A side's wins in n+1 come one of two ways, as breadth-first searches choose between
  // pushing from the frontier and pulling into the unvisited set (Beamer et al.). Pushed: ply n
  // marks the parents of each loss in n at once, reading every parent, though late in a table
  // almost all of them are won already. Pulled: ply n+1 reads the moves of each position still
  // open on that side until one reaches a loss in n. Ply n picks, per side, whichever should
  // read less, with about as many reads per position either way: the other side's losses
  // expected in ply n (as many as two plies before, since losses come in waves of every other
  // ply, or a third of its candidates, whichever is more) against this side's open positions.
  // Within a sweep the codes only move forward: a win in n is final before the sweep starts
  // (or written by the one thread that pulls it), a candidate is resolved by compare-exchange,
  // so a parent that another thread made a win or a next-ply candidate meanwhile keeps that
  // value.
  std::array<std::uint64_t, 2> open{};
  for (int s = 0; s < 2; ++s)
    for (std::uint8_t x : t.v[s].span()) open[static_cast<std::size_t>(s)] += is_open(x);
  std::array<bool, 2> pull{}, pull_next{};  // side s's wins of this ply / the next are pulled
  Counts all, last, before_last;            // the last two plies
  int n = 1;
  for (;; ++n) {
    if (n + 1 - t.base > g_rebase_at) rebase(t, n - 1);
    pull = pull_next;
    for (const Color s : {white, black})
      pull_next[s] =
          open[s] < std::max(before_last.losses[opposite(s)], last.marked[opposite(s)] / 3);
    const int b = t.base;
    const std::uint8_t now = candidate(n), next = candidate(n + 1), won = win(n - b),
                       bound = win(n - 1 - b), lost_before = loss(n - 1 - b);
    const Counts k = sweep(
        t, now, won,
        [&](Color s, std::uint64_t idx, std::uint8_t x, Counts& c) {
          const Pos p = decode(t, idx);
          auto& other = t.v[opposite(s)];
          auto mark_candidates = [&] {
            for_each_unmove(t, idx, p, s, [&](std::uint64_t parent) {
              ++c.reads;
              const std::uint8_t y = load(other[parent]);
              if ((y == kUnknown || y == now) && exchange(other[parent], y, next)) {
                t.activate(n + 1, opposite(s), parent);
                ++c.marked[opposite(s)];
              }
            });
          };
          auto lose = [&] {  // x is this ply's candidate, and every move reaches a win
            if (!exchange(t.v[s][idx], now, loss(n - b))) return;
            ++c.losses[s];
            if (!pull_next[opposite(s)]) mark_wins(t, idx, p, s, n, c);
          };
          // Two move loops, not one with the pull test inside it: one loop measured 1.5-2.5 s
          // slower over KQRvKR's plies, alternating with this version four times.
          if (!pull[s]) {
            if (x == won) return mark_candidates();
            const bool lost = for_each_quiet(t, idx, p, s, [&](std::uint64_t child) {
              ++c.reads;
              const std::uint8_t y = load(other[child]);
              return y == kIllegal || (is_win(y) && y <= bound);
            });
            if (lost) return lose();
            exchange(t.v[s][idx], now, kUnknown);
            return;
          }
          // Pulled: an open position wins in n if a move reaches a loss in n-1; a candidate
          // without one loses if every move reaches a win.
          bool wins = false, lost = x == now;
          for_each_quiet(t, idx, p, s, [&](std::uint64_t child) {
            ++c.reads;
            const std::uint8_t y = load(other[child]);
            wins = is_loss(y) && y <= lost_before;
            lost = lost && (y == kIllegal || (is_win(y) && y <= bound));
            return !wins;
          });
          if (wins) {
            for (std::uint8_t y = load(t.v[s][idx]); is_open(y) || y == win(n + 1 - b);)
              if (exchange(t.v[s][idx], y, won)) {
                ++c.wins[s];
                return mark_candidates();
              } else {
                y = load(t.v[s][idx]);
              }
            return;
          }
          if (lost) return lose();
          if (x == now) exchange(t.v[s][idx], now, kUnknown);
        },
        t.active[n & 1].data(), pull);
    std::fill(t.active[n & 1].begin(), t.active[n & 1].end(), 0);
    for (int s = 0; s < 2; ++s)
      open[static_cast<std::size_t>(s)] -=
          std::min(open[static_cast<std::size_t>(s)],
                   k.wins[static_cast<std::size_t>(s)] + k.losses[static_cast<std::size_t>(s)]);
    all += k;
    before_last = last;
    last = k;
    if (verbose)
      std::printf(
          "  %s ply %d: losses %llu/%llu, wins %llu/%llu (white/black to move), %llu "
          "candidates, open %llu/%llu, wins pulled:%s%s\n",
          t.name.c_str(), n, static_cast<unsigned long long>(k.losses[white]),
          static_cast<unsigned long long>(k.losses[black]),
          static_cast<unsigned long long>(k.wins[white]),
          static_cast<unsigned long long>(k.wins[black]),
          static_cast<unsigned long long>(k.all_marked()),
          static_cast<unsigned long long>(open[white]),
          static_cast<unsigned long long>(open[black]), pull[white] ? " white" : "",
          pull[black] ? " black" : "");
    if (n > 1 && k.all_losses() == 0 && k.all_marked() == 0) break;
  }
  sweep(t, kUnknown, kCapDraw,
        [&](Color s, std::uint64_t idx, std::uint8_t, Counts&) { store(t.v[s][idx], kDraw); });
  t.plies = n;
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.find_longest();
  if (verbose)
    std::printf(
        "  %s: init %.2f s (illegal %.2f, captures %.2f, mates %.2f), %d plies %.2f s, %llu "
        "table reads in the plies\n",
        t.name.c_str(), init, illegal, captures - illegal, init - captures, n, t.seconds - init,
        static_cast<unsigned long long>(all.reads));
}

// retra's DTZ segment of table `name` in db, of `size` placements per side, and its entries
// decoded in index order.
const retra::format::SegmentReader& dtz_segment(const retra::Database& db, const std::string& name,
                                                std::uint64_t size) {
  auto seg = db.segment(name);
  if (!seg) fail(seg.error().message());
  if ((*seg)->info().entries != 2 * size || (*seg)->info().entry_bytes != 1)
    fail(name + ": the segment in " + db.dir().string() + " is not a DTZ segment of this table");
  return **seg;
}
retra::LargeArray<std::uint8_t> decoded(const retra::format::SegmentReader& seg) {
  auto values = retra::LargeArray<std::uint8_t>::allocate(seg.info().entries);
  if (!values) fail("out of memory");
  if (auto st = seg.read_all(values->span(), omp_get_max_threads()); !st)
    fail(st.error().message());
  return std::move(*values);
}

// For each of retra's slots (kings included) of t's material, t's piece on it: 0 the white king,
// 1 the black king, 2 + i piece i. With flip, retra's table is t's material with the colours
// exchanged. Identical pieces take the slots of their group in order.
std::vector<int> piece_of_slot(const Table& t, const std::vector<retra::chess::Slot>& slots,
                               bool flip) {
  std::vector<int> of(slots.size(), -1);
  unsigned used = 0;
  for (std::size_t k = 0; k < slots.size(); ++k)
    for (int j = 0; j < t.m + 2; ++j) {
      const auto u = static_cast<std::size_t>(j - 2);
      const Color c = j < 2 ? static_cast<Color>(j) : t.colour[u];
      const PieceType type = j < 2 ? king : t.type[u];
      if ((used >> j & 1) || type != slots[k].type || (flip ? opposite(c) : c) != slots[k].color)
        continue;
      of[k] = j;
      used |= 1u << j;
      break;
    }
  if (std::count(of.begin(), of.end(), -1) != 0) fail(t.name + ": not retra's material");
  return of;
}

// Fills a sub-table from retra's DTZ segment of the same material in DB instead of building it,
// as a table is built in the product: its sub-tables already on disk. retra keeps each material
// once, the stronger side white, so a material named the other way round (KBvKR) reads the
// colours exchanged and the board turned over. Where the segment keeps a side as classes, the
// values there are the classes' nearest distances, which is all a capture into them reads.
void load(Table& t, const retra::Database& db) {
  const auto start = Clock::now();
  mark_illegal(t);
  auto material = retra::chess::parse_material(t.name);
  if (!material) fail(material.error().message());
  const bool flip = !(material->canonicalized() == *material);
  const std::string name = material->canonicalized().name();
  const Indexer ix(*retra::chess::parse_table_key(name));
  const std::uint64_t size = ix.size();
  const auto values = decoded(dtz_segment(db, name, size));
  const std::vector<int> of = piece_of_slot(t, ix.slots(), flip);
  bool beyond = false;
#pragma omp parallel for schedule(dynamic, 4096) reduction(|| : beyond)
  for (std::uint64_t idx = 0; idx < t.size; ++idx) {
    if (t.v[white][idx] == kIllegal && t.v[black][idx] == kIllegal) continue;
    const Pos p = decode(t, idx);
    const std::array<int, 5> placed{p.wk, p.bk, p.sq[0], p.sq[1], p.sq[2]};
    std::array<std::uint8_t, retra::chess::kMaxPieces> sq{};
    for (std::size_t k = 0; k < of.size(); ++k) {
      const int q = placed[static_cast<std::size_t>(of[k])];
      sq[k] = static_cast<std::uint8_t>(flip ? q ^ 56 : q);
    }
    const std::uint64_t r = ix.rank(sq.data());
    for (const Color s : {white, black}) {
      if (t.v[s][idx] == kIllegal) continue;
      const std::uint8_t b = values[(flip ? opposite(s) : s) * size + r];
      const int d = (b & 1) ? (b - 1) / 2 : (b - 2) / 2;
      beyond = beyond || (b != 0 && d > kMaxWin);
      t.v[s][idx] = b == 0 ? kDraw : (b & 1) ? win(d) : loss(d);
    }
  }
  if (beyond) fail(name + ": a sub-table's distance beyond this program's first 124 plies");
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.find_longest();
}

// ---- materials ------------------------------------------------------------------------------
struct Piece {
  PieceType type;
  Color colour;
  bool operator<(const Piece& o) const {
    return colour != o.colour ? colour < o.colour : type < o.type;
  }
};

std::string name_of(const std::vector<Piece>& ps) {
  std::string s[2] = {"K", "K"};
  for (const Piece& p : ps) s[p.colour] += piece_letter(p.type, white);
  return s[0] + "v" + s[1];
}

std::map<std::string, std::unique_ptr<Table>> g_tables;
const retra::Database* g_db = nullptr;  // --subtables: where sub-tables are read, not built

Table* build(std::vector<Piece> ps, bool top) {
  std::sort(ps.begin(), ps.end());
  const std::string name = name_of(ps);
  if (auto it = g_tables.find(name); it != g_tables.end()) return it->second.get();
  auto t = std::make_unique<Table>();
  t->name = name;
  t->m = static_cast<int>(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    t->type[i] = ps[i].type;
    t->colour[i] = ps[i].colour;
  }
  t->size = kKp.pairs.size() << (6 * t->m);
  if (!top && g_db && t->m > 0) {  // retra stores no KvK
    load(*t, *g_db);
    std::printf("sub-table %-8s %13llu slots per side, read from %s in %.2f s\n", name.c_str(),
                static_cast<unsigned long long>(t->size), g_db->dir().string().c_str(), t->seconds);
    return g_tables.emplace(name, std::move(t)).first->second.get();
  }
  for (std::size_t j = 0; j < ps.size(); ++j) {
    auto rest = ps;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(j));
    t->sub[j] = build(rest, false);
  }
  for (int j = 0; j < t->m; ++j)
    if (t->sub[static_cast<std::size_t>(j)]->longest > kHorizon)
      fail(name +
           ": a capture may lead beyond the 50-move horizon, which this program does not "
           "count from ply 101");
  solve(*t, top);
  if (!top)
    std::printf("sub-table %-8s %13llu slots per side, %6.2f s\n", name.c_str(),
                static_cast<unsigned long long>(t->size), t->seconds);
  return g_tables.emplace(name, std::move(t)).first->second.get();
}

std::optional<std::vector<Piece>> parse(const std::string& s) {
  const std::size_t v = s.find('v');
  if (v == std::string::npos || v == 0 || s[0] != 'K' || v + 1 >= s.size() || s[v + 1] != 'K')
    return std::nullopt;
  std::vector<Piece> ps;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (i == v || i == v + 1) continue;
    const auto t = piece_type_of(s[i]);
    if (!t || *t == king || *t == pawn || s[i] != piece_letter(*t, white)) return std::nullopt;
    ps.push_back({*t, i < v ? white : black});
  }
  if (ps.size() > 3) return std::nullopt;
  return ps;
}

// Every legal position (every stride-th index) against retra's WDL and DTZ: the WDL class (win
// and loss within 100 plies of the next zeroing move, cursed win and blessed loss beyond) and
// the DTZ must be equal.
int check(const Table& t, const retra::probe::Prober& prober, const std::string& db,
          std::uint64_t stride) {
  std::uint64_t positions = 0, wrong_value = 0, wrong_dtz = 0, cursed = 0;
  for (std::uint64_t idx = 0; idx < t.size; idx += stride) {
    const Pos p = decode(t, idx);
    for (int s = 0; s < 2; ++s) {
      const std::uint8_t x = t.v[s][idx];
      if (x == kIllegal) continue;
      retra::probe::ChessBoard b;
      b.white = p.side[white];
      b.black = p.side[black];
      b.kings = bit(p.wk) | bit(p.bk);
      for (int i = 0; i < t.m; ++i) {
        const auto u = static_cast<std::size_t>(i);
        std::uint64_t* member[] = {&b.kings, &b.queens, &b.rooks, &b.bishops, &b.knights};
        *member[t.type[u]] |= bit(p.sq[u]);
      }
      b.white_to_move = s == white;
      const retra::probe::ChessValue r = prober.chess(b);
      if (!r) fail("probe: " + r.message);
      ++positions;
      const int sign = is_win(x) - is_loss(x);
      const int dtz = sign == 0 ? 0 : sign * t.plies_to_go(static_cast<Color>(s), idx);
      const int mine = std::abs(dtz) > kHorizon ? sign : 2 * sign;
      if (mine != r.wdl) {
        if (++wrong_value <= 5)
          std::printf("value differs at index %llu, %s to move: retra wdl %d dtz %d, sweep %d\n",
                      static_cast<unsigned long long>(idx), s == white ? "white" : "black", r.wdl,
                      r.dtz, static_cast<int>(x));
        continue;
      }
      cursed += r.wdl == 1 || r.wdl == -1;
      if (r.dtz != dtz && ++wrong_dtz <= 5)
        std::printf("DTZ differs at index %llu, %s to move: retra %d, sweep %d\n",
                    static_cast<unsigned long long>(idx), s == white ? "white" : "black", r.dtz,
                    dtz);
    }
  }
  std::printf(
      "check against %s: %llu positions, %llu WDL classes differ, %llu DTZ differ, %llu cursed "
      "wins or blessed losses\n",
      db.c_str(), static_cast<unsigned long long>(positions),
      static_cast<unsigned long long>(wrong_value), static_cast<unsigned long long>(wrong_dtz),
      static_cast<unsigned long long>(cursed));
  return wrong_value == 0 && wrong_dtz == 0 && positions > 0 ? 0 : 1;
}

// What the product would write, and a check of every position at once: the sweep's values in
// retra's DTZ segment's index order and encoding (side to move, then retra's index of the
// placement; 0 for a draw, a hole or an illegal placement, 2d + 1 a win and 2d + 2 a loss in d
// plies), timed, then compared byte by byte with the segment retra built (by class where the
// segment keeps a side as classes). The sweep's own arrays are freed once converted, as a build
// would before writing.
int compare(Table& t, const std::string& db) {
  auto key = retra::chess::parse_table_key(t.name);
  if (!key || key->name() != t.name)
    fail(t.name + ": --compare takes a table in its canonical orientation (" +
         (key ? key->name() : key.error().message()) + ")");
  const Indexer ix(*key);
  auto opened = retra::Database::open(db);
  if (!opened) fail(opened.error().message());
  const std::uint64_t size = ix.size();
  const retra::format::SegmentReader& seg = dtz_segment(**opened, t.name, size);
  auto mine = retra::LargeArray<std::uint8_t>::allocate(2 * size);
  if (!mine) fail("out of memory");
  const auto& slots = ix.slots();
  const std::vector<int> of = piece_of_slot(t, slots, false);
  const auto start = Clock::now();
  // A code beyond a byte (127 plies and more) is stored as the byte of 126 plies, 253 for a win
  // and 254 for a loss, and listed with its exact value as a far value, as retra's kernels hand
  // them to the writer (BackwardStats::far).
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> far_parts(
      static_cast<std::size_t>(omp_get_max_threads()));
  auto code = [&](std::size_t s, std::uint64_t idx, std::uint64_t entry) {
    const std::uint8_t x = t.v[s][idx];
    if (!is_win(x) && !is_loss(x)) return std::uint8_t{0};
    const int d = t.plies_to_go(static_cast<Color>(s), idx);
    const auto exact = static_cast<std::uint32_t>(is_win(x) ? 2 * d + 1 : 2 * d + 2);
    if (exact <= 254) return static_cast<std::uint8_t>(exact);
    far_parts[static_cast<std::size_t>(omp_get_thread_num())].emplace_back(entry, exact);
    return static_cast<std::uint8_t>(is_win(x) ? 253 : 254);
  };
  // Where the last piece is alone in its group, retra's last digit is its square among the
  // squares the others leave free, ascending, so a run of `run` indices moves only that piece,
  // as the sweep's runs of 64 do: such a run is converted without the indexer, unless both
  // kings stand on the a1-h8 diagonal (which placements are canonical then depends on the
  // pieces). Blocks are whole runs.
  const std::size_t ls = slots.size() - 1;
  const bool runs =
      of[ls] == t.m + 1 && t.m > 0 &&
      !(slots[ls - 1].type == slots[ls].type && slots[ls - 1].color == slots[ls].color);
  const std::uint64_t run = runs ? ix.radices().back() : 1;
  const std::uint64_t block = run * std::max<std::uint64_t>(1, 4096 / run);
  const std::uint64_t blocks = (size + block - 1) / block;  // per side
  auto diagonal = [](int q) { return file_of(q) == rank_of(q); };
#pragma omp parallel for schedule(dynamic, 16)
  for (std::uint64_t b = 0; b < 2 * blocks; ++b) {
    const auto s = static_cast<std::size_t>(b / blocks);
    const std::uint64_t lo = b % blocks * block, hi = std::min(size, lo + block);
    std::uint8_t* const out = mine->data() + s * size;
    std::array<std::uint8_t, retra::chess::kMaxPieces> sq{};
    for (std::uint64_t i = lo; i < hi;) {
      const bool valid = i == lo ? ix.unrank(i, sq.data()) : ix.step(i, sq.data());
      std::array<int, 5> placed{};  // t's pieces' squares, as piece_of_slot numbers them
      for (std::size_t k = 0; k < of.size(); ++k) placed[static_cast<std::size_t>(of[k])] = sq[k];
      const int wk = placed[0], bk = placed[1];
      int* const pieces = placed.data() + 2;
      if (runs && i % run == 0 && valid && !(diagonal(wk) && diagonal(bk))) {
        pieces[t.m - 1] = 0;
        const std::uint64_t base = t.index(wk, bk, pieces);
        Bitboard free = ~(bit(wk) | bit(bk));
        for (int k = 0; k + 1 < t.m; ++k) free &= ~bit(pieces[k]);
        if (static_cast<std::uint64_t>(std::popcount(free)) != run)
          fail(t.name + ": retra's last digit is not the last piece's free square");
        for (Bitboard f = free; f; f &= f - 1, ++i)
          out[i] = code(s, base + std::countr_zero(f), s * size + i);
        sq[ls] = static_cast<std::uint8_t>(63 - std::countl_zero(free));  // for the next step
        continue;
      }
      out[i] = valid ? code(s, t.index(wk, bk, pieces), s * size + i) : 0;
      ++i;
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> far;
  for (const auto& part : far_parts) far.insert(far.end(), part.begin(), part.end());
  std::sort(far.begin(), far.end());
  const double convert = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& v : t.v) v = {};
  const auto read_start = Clock::now();
  const auto theirs = decoded(seg);
  const double read = std::chrono::duration<double>(Clock::now() - read_start).count();
  // A side kept as classes holds every entry's class, also where the far values hold the exact
  // value.
  std::uint64_t differ = 0, classes = 0;
  const auto half = seg.class_half();
  for (std::uint64_t i = 0; i < 2 * size; ++i) {
    std::uint8_t a = (*mine)[i];
    if (half != retra::format::ClassHalf::none &&
        (i < size) == (half == retra::format::ClassHalf::lower)) {
      a = static_cast<std::uint8_t>(retra::chess::dtz_class_byte(a));
      ++classes;
    }
    if (a != theirs[i] && ++differ <= 5)
      std::printf("entry %llu differs: retra %d (far %d), sweep %d\n",
                  static_cast<unsigned long long>(i), theirs[i],
                  static_cast<int>(seg.far_value(i).value_or(0)), a);
  }
  // The far values: the same entries, the same exact values.
  if (far != seg.far()) {
    ++differ;
    std::printf("far values differ: retra lists %zu, sweep %zu\n", seg.far().size(), far.size());
  }
  std::printf(
      "compare with %s: %llu entries in retra's order (converted in %.2f s; retra's segment "
      "read in %.2f s), %llu compared by class only, %zu far values, %llu differ\n",
      db.c_str(), static_cast<unsigned long long>(2 * size), convert, read,
      static_cast<unsigned long long>(classes), far.size(),
      static_cast<unsigned long long>(differ));
  return differ == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: chess_sweep MATERIAL [--threads N] [--subtables DB] [--check DB] [--stride K]\n"
        "                   [--compare DB] [--rebase-at K]\n"
        "  MATERIAL: a pawnless table of 3-5 pieces, e.g. KQRvKR\n");
    return 2;
  }
  std::string db, compare_db, sub_db;
  std::uint64_t stride = 1;
  if (argc % 2 != 0) {
    std::fprintf(stderr, "chess_sweep: every option takes a value\n");
    return 2;
  }
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (a == "--threads" && value >= 1 && value <= 1024) {
      omp_set_num_threads(static_cast<int>(value));
    } else if (a == "--check") {
      db = argv[i + 1];
    } else if (a == "--compare") {
      compare_db = argv[i + 1];
    } else if (a == "--subtables") {
      sub_db = argv[i + 1];
    } else if (a == "--rebase-at" && value >= 2 && value <= kMaxWin) {
      g_rebase_at = static_cast<int>(value);
    } else if (a == "--stride" && value >= 1) {
      stride = static_cast<std::uint64_t>(value);
    } else {
      std::fprintf(stderr, "chess_sweep: bad option %s %s\n", a.c_str(), argv[i + 1]);
      return 2;
    }
  }
  const auto ps = parse(argv[1]);
  if (!ps) {
    std::fprintf(stderr, "chess_sweep: '%s' is not a pawnless material of 3-5 pieces (KQRvKR)\n",
                 argv[1]);
    return 2;
  }
  if (kKp.pairs.size() != 462) fail("king pairs: " + std::to_string(kKp.pairs.size()));
  std::unique_ptr<retra::probe::Prober> prober;  // opened first: a bad path fails at once
  if (!db.empty()) {
    retra::probe::Options opt;
    opt.cache_bytes = std::size_t{1} << 30;  // a 5-piece table's blocks stay decompressed
    retra::probe::Value err;
    prober = retra::probe::Prober::open(db, opt, &err);
    if (!prober) fail(err.message);
  }
  std::unique_ptr<retra::Database> subtables;
  if (!sub_db.empty()) {
    auto opened = retra::Database::open(sub_db);
    if (!opened) fail(opened.error().message());
    subtables = std::move(*opened);
    g_db = subtables.get();
  }
  Table& t = *build(*ps, true);
  std::uint64_t legal = 0, wins = 0, losses = 0;
  for (int s = 0; s < 2; ++s)
    for (std::uint8_t x : t.v[s].span()) {
      legal += x != kIllegal;
      wins += is_win(x);
      losses += is_loss(x);
    }
  std::printf(
      "%s: %d threads, %llu slots, %llu legal (%llu wins, %llu losses), longest %d "
      "plies, %d plies swept, %.2f s\n",
      t.name.c_str(), omp_get_max_threads(), static_cast<unsigned long long>(2 * t.size),
      static_cast<unsigned long long>(legal), static_cast<unsigned long long>(wins),
      static_cast<unsigned long long>(losses), t.longest, t.plies, t.seconds);
  int rc = prober ? check(t, *prober, db, stride) : 0;
  if (!compare_db.empty()) rc |= compare(t, compare_db);
  return rc;
}
