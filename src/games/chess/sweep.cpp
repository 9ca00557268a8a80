// The chess game's own kernel for DTZ and DTM segments (sweep.hpp), and
// Game::own_kernel, which builds a table's sub-tables from the finished segments and hands its
// values to the driver.
// Thread safety: see sweep.hpp; Game::own_kernel is reentrant.
#include "src/games/chess/sweep.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "src/games/chess/game.hpp"

namespace retra::chess::sweep {
namespace {

using Clock = std::chrono::steady_clock;

// 32 bytes tested at once, as GCC's vectors (AVX2 where -march has it): lanes of -1 where a
// byte matches. Passed by reference, as board.hpp's are, for the same -Wpsabi reason.
using V32 = std::uint8_t __attribute__((vector_size(32)));
using Lanes = decltype(std::declval<V32>() != std::declval<V32>());
// The larger of a and b in each lane.
inline V32 lane_max(const V32& a, const V32& b) {
  const auto more = std::bit_cast<V32>(a > b);
  return (a & more) | (b & ~more);
}

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

// A conversion into a child of DTM byte b (distance + 1; legal): a draw, or a move that takes b
// plies, a win where b is odd (the child's mover is mated in b - 1), else a loss. Kept as the
// shortest win and the longest loss, for captures (Gathered) and pawn moves (Conversions) alike.
void see_dtm_byte(int b, bool& draws, int& first_win, int& last_loss) {
  if (b == 0)
    draws = true;
  else if (b & 1)
    first_win = std::min(first_win, b);
  else
    last_loss = std::max(last_loss, b);
}

}  // namespace

KingPairs::KingPairs() {
  {
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
}
const KingPairs kKp;

Pos decode(const Table& t, std::uint64_t idx) {
  Pos p{};
  p.kings = idx >> (6 * t.m);
  if (t.pawned()) {
    p.wk = static_cast<int>(p.kings >> 6 & 63);
    p.bk = static_cast<int>(p.kings & 63);
    const int files = static_cast<int>(p.kings >> 12);
    if (t.pawn3_rank >= 0) {
      p.pawn = square(files >> 6, t.pawn_rank);
      p.pawn2 = square(files >> 3 & 7, t.pawn2_rank);
      p.pawn3 = square(files & 7, t.pawn3_rank);
    } else if (t.pawn2_rank >= 0) {
      p.pawn = square(files >> 3, t.pawn_rank);
      p.pawn2 = square(files & 7, t.pawn2_rank);
    } else {
      p.pawn = square(files, t.pawn_rank);
    }
  } else {
    const auto& kp = kKp.pairs[static_cast<std::size_t>(p.kings)];
    p.wk = kp.first;
    p.bk = kp.second;
  }
  // Each side's squares gathered in registers and stored once: an |= into p.side[colour] per
  // piece, indexed by the colour, made every piece wait for the store before it (decode was 9%
  // of KQRvKR's samples).
  Bitboard by_white = bit(p.wk), by_black = bit(p.bk);
  if (t.pawned()) (t.pawn_colour == white ? by_white : by_black) |= bit(p.pawn);
  if (t.pawn2_rank >= 0) (t.pawn2_colour == white ? by_white : by_black) |= bit(p.pawn2);
  if (t.pawn3_rank >= 0) (t.pawn3_colour == white ? by_white : by_black) |= bit(p.pawn3);
  for (int i = 0; i < t.m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int sq = static_cast<int>(idx >> t.shift(i) & 63);
    p.sq[u] = sq;
    const Bitboard b = bit(sq);
    by_white |= t.colour[u] == white ? b : 0;
    by_black |= t.colour[u] == black ? b : 0;
  }
  p.side[white] = by_white;
  p.side[black] = by_black;
  p.occ = by_white | by_black;
  return p;
}

Reach reach_of_byte(int b) {
  if (b == 0) return Reach::draw;
  const bool beyond = ((b & 1) ? (b - 1) / 2 : (b - 2) / 2) > kHorizon;
  if (b & 1) return beyond ? Reach::wins_beyond : Reach::wins;
  return beyond ? Reach::loses_beyond : Reach::loses;
}

Reach reach_of(const Table& t, Color s, std::uint64_t idx) {
  const std::uint8_t x = t.v[s][idx];
  if (x == kIllegal) return Reach::none;
  if (!is_win(x) && !is_loss(x)) return Reach::draw;
  const bool beyond = t.plies_to_go(s, idx) > kHorizon;
  if (is_win(x)) return beyond ? Reach::wins_beyond : Reach::wins;
  return beyond ? Reach::loses_beyond : Reach::loses;
}

void add(Conversions& c, Reach r) {
  assert(r != Reach::none);
  c.any = true;
  switch (r) {
    case Reach::draw:
      c.draws = true;
      break;
    case Reach::wins_beyond:  // the child's mover wins beyond the horizon: we lose from ply 101
      c.late = true;
      break;
    case Reach::loses:
      c.wins = true;
      break;
    case Reach::loses_beyond:
      c.cursed = true;
      break;
    default:  // the child's mover wins: nothing we did not know
      break;
  }
}

std::uint8_t dtm_byte_of(const Table& t, Color s, std::uint64_t idx) {
  const std::uint8_t x = t.v[s][idx];
  if (x == kIllegal) return kDtmIllegal;
  if (!is_win(x) && !is_loss(x)) return 0;
  return static_cast<std::uint8_t>(t.plies_to_go(s, idx) + 1);
}

void add_dtm(Conversions& c, int b) {
  assert(c.dtm);
  c.any = true;
  see_dtm_byte(b, c.draws, c.first_win, c.last_loss);
  c.wins = c.first_win == 1;
}

void Table::find_longest() {
  int most = 0;
  if (base == 0) {
    // The largest codes of a win and of a loss, 32 bytes at a time (GCC compiled the plain loop's
    // max to one byte at a time: 0.12 s of KQRvKR's kernel).
    const V32 limit = V32{} + static_cast<std::uint8_t>(kMaxWin + 6);
    // Each thread's lanes in a slot of its own, combined after the loop: no `omp critical`, whose
    // one lock libomp 14 crashed in under ThreadSanitizer (as sweep() and kernels/backward.hpp
    // found).
    struct alignas(64) Part {
      V32 won{}, lost{};
    };
    std::vector<Part> parts(static_cast<std::size_t>(std::max(1, threads)));
    const std::uint64_t blocks = padded() / 32;
    for (const auto& side : v) {
      const std::uint8_t* x = side.data();
#pragma omp parallel num_threads(threads)
      {
        V32 w{}, l{};
#pragma omp for schedule(static) nowait
        for (std::uint64_t b = 0; b < blocks; ++b) {
          V32 y;
          std::memcpy(&y, x + 32 * b, 32);
          w = lane_max(w, y & std::bit_cast<V32>(y <= limit));
          l = lane_max(l, y);
        }
        Part& mine = parts[static_cast<std::size_t>(omp_get_thread_num())];
        mine.won = lane_max(mine.won, w);
        mine.lost = lane_max(mine.lost, l);
      }
    }
    std::uint8_t won = 0, lost = 0;
    for (const Part& part : parts)
      for (int i = 0; i < 32; ++i) {
        won = std::max(won, static_cast<std::uint8_t>(part.won[i]));
        lost = std::max(lost, static_cast<std::uint8_t>(part.lost[i]));
      }
    // won: the largest code up to a win's; 0..5 hold no win, and lost's largest code is a loss's
    // where one is at least 131.
    won = won >= 6 ? won : 0;
    lost = lost >= kLostEarlier ? lost : 0;
    longest = std::max(won ? distance(won) : 0, lost ? -distance(lost) : 0);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads) reduction(max : most)
  for (std::uint64_t idx = 0; idx < size; ++idx)
    for (const Color s : {white, black})
      if (is_win(v[s][idx]) || is_loss(v[s][idx])) most = std::max(most, plies_to_go(s, idx));
  longest = most;
}

Table make_table(std::vector<std::pair<PieceType, Color>> pieces, int threads, int pawn_rank,
                 Color pawn_colour, int pawn2_rank, Color pawn2_colour, int pawn3_rank,
                 Color pawn3_colour) {
  assert(pieces.size() <= 3);
  // White's pieces first, each side's by type.
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  Table t;
  t.m = static_cast<int>(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    assert(pieces[i].first != king && pieces[i].first != pawn);
    t.type[i] = pieces[i].first;
    t.colour[i] = pieces[i].second;
  }
  assert(pawn_rank < 0 || (pawn_rank >= 1 && pawn_rank <= 6));
  t.pawn_rank = pawn_rank;
  t.pawn_colour = pawn_colour;
  assert(pawn2_rank < 0 || (pawn_rank >= 0 && pawn2_rank >= 1 && pawn2_rank <= 6));
  t.pawn2_rank = pawn2_rank;
  t.pawn2_colour = pawn2_colour;
  assert(pawn3_rank < 0 ||
         (pawn2_rank >= 0 && pieces.empty() && pawn3_rank >= 1 && pawn3_rank <= 6));
  t.pawn3_rank = pawn3_rank;
  t.pawn3_colour = pawn3_colour;
  // The second and third pawns' files are digits of 3 bits (the board's turn is the first's).
  const std::uint64_t heads = t.pawns() == 3   ? std::uint64_t{256} << 12
                              : t.pawns() == 2 ? std::uint64_t{32} << 12
                              : t.pawned()     ? std::uint64_t{4} << 12
                                               : kKp.pairs.size();
  t.size = heads << (6 * t.m);
  t.threads = std::max(1, threads);
  t.name = name_of(t);
  return t;
}

Table table_for(std::span<const Slot> slots, int threads) {
  std::vector<std::pair<PieceType, Color>> pieces;
  std::array<int, 3> rank{-1, -1, -1};
  std::array<Color, 3> colour{white, white, white};
  std::size_t np = 0;
  for (const Slot& slot : slots)
    if (slot.type == pawn) {
      assert(np < 3);
      rank[np] = slot.rank;
      colour[np++] = slot.color;
    } else if (slot.type != king) {
      pieces.emplace_back(slot.type, slot.color);
    }
  return make_table(std::move(pieces), threads, rank[0], colour[0], rank[1], colour[1], rank[2],
                    colour[2]);
}

std::string name_of(const Table& t) {
  std::string s[2] = {"K", "K"};
  for (int i = 0; i < t.m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    s[t.colour[u]] += piece_letter(t.type[u], white);
  }
  if (!t.pawned()) return s[0] + "v" + s[1];
  s[t.pawn_colour] += 'P';
  std::string ranks = fmt::format("_{}{}", t.pawn_colour == white ? 'w' : 'b', t.pawn_rank + 1);
  for (int k = 1; k < t.pawns(); ++k) {
    s[t.colour_of_pawn(k)] += 'P';
    ranks += fmt::format("_{}{}", t.colour_of_pawn(k) == white ? 'w' : 'b', t.rank_of_pawn(k) + 1);
  }
  return s[0] + "v" + s[1] + ranks;
}

std::vector<std::pair<PieceType, Color>> pieces_without(const Table& t, int j) {
  std::vector<std::pair<PieceType, Color>> rest;
  for (int k = 0; k < t.m; ++k)
    if (k != j)
      rest.emplace_back(t.type[static_cast<std::size_t>(k)], t.colour[static_cast<std::size_t>(k)]);
  return rest;
}

namespace {
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

// Decodes the run of 64 indices from base, in which only the last piece moves, with the last
// piece off the board (in side and occ); false where two of the other pieces share a square,
// which makes the whole run illegal.
bool decode_run(const Table& t, std::uint64_t base, Pos& p) {
  p = decode(t, base);
  p.side[white] = bit(p.wk);
  p.side[black] = bit(p.bk);
  for (int i = 0; i + 1 < t.m; ++i)
    p.side[t.colour[static_cast<std::size_t>(i)]] |= bit(p.sq[static_cast<std::size_t>(i)]);
  if (t.pawned()) {
    p.side[t.pawn_colour] |= bit(p.pawn);
    if (t.pawn2_rank >= 0) p.side[t.pawn2_colour] |= bit(p.pawn2);
    if (p.wk == p.bk || (king_attacks(p.wk) & bit(p.bk))) return false;
  }
  p.occ = p.side[white] | p.side[black];
  return std::popcount(p.occ) == t.m + 1 + t.pawns();
}

// Calls f(child index) for every quiet move (to an empty square) of side s, the child in the
// other side's table, until f returns false; returns whether it went through all of them. King
// moves next to the other king have no index and are not generated (they are illegal). The
// king's moves come first where kKingFirst: the mate test looks for one legal move of a king in
// check, which is most often a king's (KQRvKR's captures took 1.27 s instead of 1.67 so, and
// KRPvKR's 6.6 s instead of 7.1); the plies' checks gain nothing from that order (KRPvKR's plies
// took 0.4 s longer).
template <bool kKingFirst = false, class F>
bool for_each_quiet(const Table& t, std::uint64_t idx, const Pos& p, Color s, F&& f) {
  auto kings = [&] {
    const int k = s == white ? p.wk : p.bk, other = s == white ? p.bk : p.wk;
    for (Bitboard q = king_attacks(k) & ~p.occ & ~king_attacks(other); q; q &= q - 1) {
      const int b = std::countr_zero(q);
      if (!f(s == white ? t.king_moved(idx, b, p.bk, p.sq.data())
                        : t.king_moved(idx, p.wk, b, p.sq.data())))
        return false;
    }
    return true;
  };
  if (kKingFirst && !kings()) return false;
  for (int i = 0; i < t.m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.colour[u] != s) continue;
    for (Bitboard q = attacks(t.type[u], p.sq[u], p.occ) & ~p.occ; q; q &= q - 1)
      if (!f(t.moved(idx, i, p.sq[u], std::countr_zero(q)))) return false;
  }
  return kKingFirst || kings();
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
    if (t.pawned()) continue;  // no diagonal there
    const auto& kp = kKp.pairs[static_cast<std::size_t>(parent >> (6 * t.m))];
    if (file_of(kp.first) == rank_of(kp.first) && file_of(kp.second) == rank_of(kp.second)) {
      std::uint64_t mirror = parent >> (6 * t.m);
      for (int i = 0; i < t.m; ++i)
        mirror = mirror << 6 | kKp.image[4 * 64 + (parent >> t.shift(i) & 63)];
      if (mirror != parent) f(mirror);
    }
  }
}

// A position's parents (for_each_unmove's), gathered before any is read, each one's byte in the
// parents' array `into` prefetched: late in a table they are cache misses, and the marking
// loops' compare-exchanges (full fences on x86-64) would otherwise keep each load from starting
// before the previous one's write ended (1-2% of KQRvKR's plies, alternating runs). At most 3
// queens' 27 unmoves and a king's 8, twice where they reach the diagonal.
struct Parents {
  std::array<std::uint64_t, 128> at;
  std::size_t n = 0;
};
void gather_parents(const Table& t, std::uint64_t idx, const Pos& p, Color s,
                    const std::uint8_t* into, Parents& out) {
  out.n = 0;
  for_each_unmove(t, idx, p, s, [&](std::uint64_t parent) {
    assert(out.n < out.at.size());
    __builtin_prefetch(into + parent, 1);
    out.at[out.n++] = parent;
  });
}

struct Counts {
  // wins, losses and new candidates by the side to move in the position written; `pushed`, the
  // wins of the next ply among `wins` (mark_wins')
  std::array<std::uint64_t, 2> wins{}, losses{}, marked{}, pushed{};
  std::uint64_t reads = 0;
  std::uint64_t all_losses() const { return losses[0] + losses[1]; }
  std::uint64_t all_marked() const { return marked[0] + marked[1]; }
  Counts& operator+=(const Counts& o) {
    for (int s = 0; s < 2; ++s) {
      wins[s] += o.wins[s];
      losses[s] += o.losses[s];
      marked[s] += o.marked[s];
      pushed[s] += o.pushed[s];
    }
    reads += o.reads;
    return *this;
  }
};

// Whether a position is still open: unknown, or a candidate of either ply.
constexpr bool is_open(std::uint8_t v) { return v == 0 || (v >= 3 && v <= 5); }

#if defined(__SANITIZE_THREAD__)
#define RETRA_SWEEP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RETRA_SWEEP_TSAN 1
#endif
#endif
// 32 bytes of a table that other threads write single bytes of: one plain vector load, which
// x86-64 makes safe though the C++ memory model does not (as the 8-byte loads were before);
// under ThreadSanitizer four relaxed 8-byte atomic loads, which it accepts.
inline void load32(const std::uint8_t* at, V32& x) {
#ifdef RETRA_SWEEP_TSAN
  std::uint64_t word[4];
  for (std::size_t k = 0; k < 4; ++k)
    word[k] =
        std::atomic_ref<const std::uint64_t>(*reinterpret_cast<const std::uint64_t*>(at + 8 * k))
            .load(std::memory_order_relaxed);
  std::memcpy(&x, word, 32);
#else
  std::memcpy(&x, at, 32);
#endif
}
// The lanes' high bits, lane i at bit i.
inline std::uint32_t high_bits(const Lanes& hit) {
#ifdef __AVX2__
  __m256i x;
  std::memcpy(&x, &hit, 32);
  return static_cast<std::uint32_t>(_mm256_movemask_epi8(x));
#else
  std::uint8_t bytes[32];
  std::memcpy(bytes, &hit, 32);
  std::uint32_t bits = 0;
  for (int i = 0; i < 32; ++i) bits |= static_cast<std::uint32_t>(bytes[i] >> 7) << i;
  return bits;
#endif
}

// Calls body(side, index, value, counts) for every index of both sides' tables whose value is a or
// b[side], or, on a side whose `open` is set, whose value is open; in parallel. 32 values are
// tested at once (load32, high_bits: exactly the matching bytes, so an illegal byte beside an open
// one costs nothing, as it did when 8 bytes were tested with a word's arithmetic: KRPvKR's plies
// took 13.5 s instead of 15.9); the blocks are read while other threads write single bytes of the
// same tables, and body is handed the byte as read again, with a relaxed atomic load. (A block
// read before another thread's write misses nothing, since the bytes a ply acts on are written
// before its sweep or acted on by the thread that writes them.) Where `active` is given, only the
// chunks it flags are read (a flag per side and chunk, side-major, as Table::activate sets them),
// but on an open side every chunk. On an open side s, a value equal to also[s] is handed to body
// too. On a side s whose by_run[s] is not Runs::none (in a table with pieces besides the kings),
// some values are not handed to body but to run_body(side, first index of the run, their bits in
// the run, the run's 64 bytes as read, counts), once per run of 64 indices (in which only the last
// piece moves): with Runs::checks, those equal to a, and on an open side the unknown ones; with
// Runs::all, every value that body would have been handed.
enum class Runs : std::uint8_t { none, checks, all };
struct NoRuns {
  void operator()(Color, std::uint64_t, std::uint64_t, const std::uint8_t*, Counts&) const {}
};
template <class Body, class RunBody = NoRuns>
Counts sweep(Table& t, std::uint8_t a, std::array<std::uint8_t, 2> b, Body&& body,
             const std::uint8_t* active = nullptr, std::array<bool, 2> open = {},
             Progress* progress = nullptr, std::array<std::uint8_t, 2> also = {},
             RunBody&& run_body = {}, std::array<Runs, 2> by_run = {}) {
  const std::uint64_t size = t.padded(), chunks = t.chunks();
  // Each thread's counts on a cache line of its own, summed at the end: not an OpenMP reduction
  // of Counts, whose combining step takes a lock that libomp 14 crashed in under ThreadSanitizer
  // (as kernels/backward.hpp found of `omp critical`).
  struct alignas(64) Part {
    Counts counts;
  };
  std::vector<Part> parts(static_cast<std::size_t>(t.threads));
#pragma omp parallel for schedule(dynamic, 4) num_threads(t.threads)
  for (std::uint64_t c = 0; c < 2 * chunks; ++c) {
    Counts& total = parts[static_cast<std::size_t>(omp_get_thread_num())].counts;
    const auto s = static_cast<Color>(c / chunks);
    progress_advance(progress, 1);
    if (active && !open[s] && !load(active[c])) continue;
    auto& v = t.v[s];
    const std::uint64_t lo = (c % chunks) * kChunk, hi = std::min(size, lo + kChunk);
    // What is handed over: on an open side, the open values and also[s]; on another, a and b[s].
    // As lanes of 32 bytes, and as one byte read again.
    auto open_lanes = [&](const V32& x, Lanes& hit) {
      hit = (x == 0) | ((x >= 3) & (x <= 5)) | (x == also[s]);
    };
    auto open_match = [&](std::uint8_t x) { return is_open(x) || x == also[s]; };
    auto exact_lanes = [&](const V32& x, Lanes& hit) { hit = (x == a) | (x == b[s]); };
    auto exact_match = [&](std::uint8_t x) { return x == a || x == b[s]; };
    // One loop per kind of match, so the lanes' test is not chosen again for every 32 bytes.
    auto scan = [&](auto lanes, auto matches) {
      for (std::uint64_t w = lo; w < hi; w += 32) {
        V32 x;
        load32(v.data() + w, x);
        Lanes hit;
        lanes(x, hit);  // 0 or -1
        for (std::uint32_t bits = high_bits(hit); bits; bits &= bits - 1) {
          const std::uint64_t idx = w + static_cast<std::uint64_t>(std::countr_zero(bits));
          const std::uint8_t y = load(v[idx]);
          if (matches(y)) body(s, idx, y, total);
        }
      }
    };
    if (by_run[s] != Runs::none) {
      assert(t.m > 0);  // so size, and with it hi, is a multiple of 64 too
      const bool all = by_run[s] == Runs::all;
      // lo and hi are multiples of 64 (kChunk is), so the runs are whole.
      for (std::uint64_t w = lo; w < hi; w += 64) {
        std::array<V32, 2> x;
        load32(v.data() + w, x[0]);
        load32(v.data() + w + 32, x[1]);
        std::uint64_t checked = 0, rest = 0;
        for (std::size_t h = 0; h < 2; ++h) {
          const V32& y = x[h];
          Lanes handed;
          open[s] ? open_lanes(y, handed) : exact_lanes(y, handed);
          const Lanes to_check = all ? handed : open[s] ? (y == a) | (y == kUnknown) : y == a;
          checked |= std::uint64_t{high_bits(to_check)} << (32 * h);
          rest |= std::uint64_t{high_bits(handed)} << (32 * h);
        }
        for (std::uint64_t bits = rest & ~checked; bits; bits &= bits - 1) {
          const std::uint64_t idx = w + static_cast<std::uint64_t>(std::countr_zero(bits));
          const std::uint8_t y = load(v[idx]);
          if (open[s] ? open_match(y) : exact_match(y)) body(s, idx, y, total);
        }
        if (checked) {
          std::uint8_t bytes[64];
          std::memcpy(bytes, x.data(), 64);
          run_body(s, w, checked, bytes, total);
        }
      }
    } else if (open[s]) {
      scan(open_lanes, open_match);
    } else {
      scan(exact_lanes, exact_match);
    }
  }
  Counts total;
  for (const Part& p : parts) total += p.counts;
  return total;
}

// Marks the parents of a loss in n (side s to move at idx) as wins in n+1, where still open.
// A compare-exchange, not a store: in a ply where the parents' side switches from pulled to
// pushed wins, another thread may pull the same parent's win in n between the read and the
// write, and a store would turn it into a win in n+1 (a race the pawn tables' test caught, one
// run in five, as one ply too many on a few dozen positions).
void mark_wins(Table& t, std::uint64_t idx, const Pos& p, Color s, int n, Counts& k) {
  auto& parents = t.v[opposite(s)];
  const std::uint8_t won = win(n + 1 - t.base);
  Parents up;
  gather_parents(t, idx, p, s, parents.data(), up);
  k.reads += up.n;
  for (const std::uint64_t parent : std::span(up.at.data(), up.n)) {
    for (std::uint8_t x = load(parents[parent]);
         x == kUnknown || x == kCapDraw || x == candidate(0) || x == candidate(1);
         x = load(parents[parent]))
      if (exchange(parents[parent], x, won)) {
        t.activate(n + 1, opposite(s), parent);
        ++k.wins[opposite(s)];
        ++k.pushed[opposite(s)];
        break;
      }
  }
}

// What a position's captures and pawn moves reach, as the captures phase gathers them: a
// capture's child in a sub-table (see, its code) and the pawn moves' Conversions (add).
struct Gathered {
  bool captures = false, wins = false, draws = false, cursed = false, late = false;
  // DTM (where a sub-table holds retra's DTM bytes): the plies of the shortest winning
  // conversion (256: none) and of the longest losing one. A child's byte b is its distance + 1,
  // so a move into it takes b plies: a win where b is odd (the child's mover is mated in b - 1),
  // a loss where it is even.
  bool dtm = false;
  int first_win = 256, last_loss = 0;
  // A sub-table's codes count from base 0, or hold no distance beyond the horizon (solve's
  // contract), so a code beyond win(kHorizon) or loss(kHorizon) is one beyond it.
  void see(std::uint8_t x) {
    if (dtm) return see_dtm(x);
    if (x == kIllegal) return;
    captures = true;
    if (is_loss(x))
      (x > loss(kHorizon) ? cursed : wins) = true;
    else if (x == kDraw)
      draws = true;
    else
      late |= x > win(kHorizon);
  }
  void add(const Conversions& c) {
    assert(c.dtm == dtm);
    captures |= c.any;
    wins |= c.wins;
    draws |= c.draws;
    cursed |= c.cursed;
    late |= c.late;
    first_win = std::min(first_win, c.first_win);
    last_loss = std::max(last_loss, c.last_loss);
  }
  void see_dtm(std::uint8_t x) {
    if (x == kDtmIllegal) return;
    captures = true;
    see_dtm_byte(x, draws, first_win, last_loss);
  }
  // A cursed win never loses, as a draw by capture does, and wins by ply 101; a late loss is a
  // candidate that cannot lose before ply 101. In DTM, a win by a conversion in more than one ply
  // never loses either and wins at its ply (ply()); a position whose every conversion loses is
  // unknown, as one without any, and cannot lose before the longest's ply.
  std::uint8_t value() const {
    if (dtm) return first_win == 1 ? win(1) : first_win < 256 || draws ? kCapDraw : kUnknown;
    return wins ? win(1) : draws || cursed ? kCapDraw : captures ? candidate(1) : kUnknown;
  }
  // DTM: the ply at which the conversions act (Table::at_ply), 0 for none.
  int ply() const {
    if (first_win < 256) return first_win > 1 ? first_win : 0;
    return draws ? 0 : last_loss;
  }
  bool cursed_bit() const { return !wins && cursed; }
  bool late_bit() const { return !wins && !draws && !cursed && late; }
};

// Writes side s's value at idx (the position p; `checked`, its byte before the captures phase)
// from its conversions g: in check without one, it is mated unless a quiet move is legal.
// Atomic: other positions' mate tests read this side's bytes (only whether they are illegal,
// which no write here changes).
void settle(Table& t, std::uint64_t idx, const Pos& p, Color s, std::uint8_t checked,
            const Gathered& g) {
  std::uint8_t x = g.value();
  if (checked == kInCheck && !g.captures) {
    const auto& next = t.v[opposite(s)];
    const bool moves = !for_each_quiet<true>(
        t, idx, p, s, [&](std::uint64_t child) { return load(next[child]) == kIllegal; });
    if (!moves) x = loss(0);
  }
  store(t.v[s][idx], x);
}

// DTM: both sides' at_ply, zero, and no events.
Status allocate_plies(Table& t) {
  for (auto& a : t.at_ply) {
    auto got = LargeArray<std::uint8_t>::allocate(t.padded(), t.huge_pages);
    if (!got) return std::move(got).error();
    a = std::move(*got);
  }
  t.events.assign(2 * t.chunks(), {});
  return {};
}

// DTM: notes the plies of side s's conversions in the run from base (one thread's) in its
// chunk's events; other threads' runs share the chunk.
void add_events(Table& t, Color s, std::uint64_t base, const std::array<std::uint64_t, 4>& plies) {
  auto& mask = t.events[static_cast<std::size_t>(s * t.chunks() + base / kChunk)];
  for (std::size_t w = 0; w < 4; ++w)
    if (plies[w] && (std::atomic_ref<const std::uint64_t>(mask[w]).load(std::memory_order_relaxed) &
                     plies[w]) != plies[w])
      std::atomic_ref<std::uint64_t>(mask[w]).fetch_or(plies[w], std::memory_order_relaxed);
}

// The cursed and late bitmaps of both sides, zero, for a table whose conversions may reach
// beyond the 50-move horizon.
Status allocate_far_bitmaps(Table& t) {
  for (auto* bits : {&t.cursed[0], &t.cursed[1], &t.late[0], &t.late[1]}) {
    auto a = LargeArray<std::uint64_t>::allocate(t.padded() / 64 + 1, t.huge_pages);
    if (!a) return std::move(a).error();
    *bits = std::move(*a);
  }
  return {};
}

// Stores word w of side s's cursed and late bitmaps (one run of 64 positions, written by one
// thread) where it has bits: the bitmaps are empty where no conversion can reach beyond the
// horizon. Returns whether it had any.
int store_far_bits(Table& t, Color s, std::uint64_t w, std::uint64_t cursed, std::uint64_t late) {
  if (cursed) t.cursed[s][w] = cursed;
  if (late) t.late[s][w] = late;
  return (cursed | late) != 0;
}

// DTM: notes side s's position at idx, its conversions g, in at_ply and its run's plies.
void note_ply(Table& t, Color s, std::uint64_t idx, const Gathered& g,
              std::array<std::uint64_t, 4>& plies) {
  if (const int e = g.ply()) {
    t.at_ply[s][idx] = static_cast<std::uint8_t>(e);
    plies[static_cast<std::size_t>(e / 64)] |= std::uint64_t{1} << (e % 64);
  }
}

// Side s's pawns whose single push is kept (Table::kept_push) in p: their squares and kept
// bytes, the squares they attack (takes), and whether pawn_moves still has work for s's pawns
// (other_moves): a pawn whose push is not kept, or a kept one on its start rank (a double push)
// or attacking a square of `theirs`. Both captures phases read the kept pushes themselves
// (add_kept_pushes) and call pawn_moves only for the rest; up to 3 pawns of a side (KPPPvK).
// Inlined: the kings-and-pawns phase calls it for every position (as a call, the captures
// phases of KPPvKP, KRPPvK and KPPvKR took 13.3-14.4 s against 12.7-13.7 s, 4 rounds).
struct KeptPawns {
  std::array<int, 3> from{};
  std::array<const std::uint8_t*, 3> bytes{};
  int n = 0;
  Bitboard takes = 0;
  bool other_moves = false;
};

[[gnu::always_inline]] inline KeptPawns kept_pawns(const Table& t, const Pos& p, Color s,
                                                   Bitboard theirs) {
  KeptPawns kp;
  for (int k = 0; k < t.pawns(); ++k) {
    if (t.colour_of_pawn(k) != s) continue;
    const std::uint8_t* const bytes = t.kept_push(k);
    if (!bytes) {
      kp.other_moves = true;
      continue;
    }
    const int from = p.pawn_at(k);
    const Bitboard takes = pawn_attacks(s, from);
    const auto j = static_cast<std::size_t>(kp.n++);
    kp.from[j] = from;
    kp.bytes[j] = bytes;
    kp.takes |= takes;
    kp.other_moves = kp.other_moves || rank_of(from) == (s == white ? 1 : 6) || (takes & theirs);
  }
  return kp;
}

// Adds to c the kept single pushes of kp (at position index idx) that are free and safe in p,
// up to the first that wins.
void add_kept_pushes(const Table& t, const Pos& p, Color s, const KeptPawns& kp, std::uint64_t idx,
                     Conversions& c) {
  const int step = s == white ? 8 : -8;
  for (std::size_t j = 0; j < static_cast<std::size_t>(kp.n) && !c.wins; ++j) {
    const int to = kp.from[j] + step;
    if (!(p.occ & bit(to)) && pawn_move_safe(t, p, s, to, kp.from[j]))
      add_kept(c, kp.bytes[j][idx]);
  }
}

// The captures phase of a table of the kings and pawns only (no other piece, so no runs),
// position by position: a king takes a pawn of the other side, or a pawn of the side to move
// moves (its single push read where the sweep kept the segment ahead, the other moves through
// pawn_moves, which promote too: no promote_run here). Returns whether a conversion reaches
// beyond the 50-move horizon (its bits set in t.cursed, t.late).
int kings_and_pawns_captures(Table& t, const SolveOptions& opt) {
  assert(t.m == 0 && t.pawned() && !t.promote_run);
  int far = 0;  // an int and |, as kernels/backward.hpp reduces under ThreadSanitizer
#pragma omp parallel for schedule(dynamic, 16) num_threads(t.threads) reduction(| : far)
  for (std::uint64_t base = 0; base < t.size; base += 64) {  // a word of the bitmaps each
    for (const Color s : {white, black}) {
      const Color o = opposite(s);
      const bool moves_pawns = t.has_pawn(s);
      std::uint64_t cursed_bits = 0, late_bits = 0;
      std::array<std::uint64_t, 4> plies{};  // DTM: the plies of this word's conversions
      for (int q = 0; q < 64; ++q) {
        const std::uint64_t idx = base + static_cast<std::uint64_t>(q);
        const std::uint8_t checked = t.v[s][idx];
        if (checked == kIllegal) continue;
        const Pos p = decode(t, idx);
        const int king = s == white ? p.wk : p.bk, other = s == white ? p.bk : p.wk;
        const Bitboard reach = king_attacks(king) & ~king_attacks(other);
        Gathered g;
        g.dtm = t.dtm;
        // A pawn of theirs taken by the king; the others, if any, stay, in their order.
        for (int k = 0; k < t.pawns() && !g.wins; ++k) {
          const int at = p.pawn_at(k);
          if (t.colour_of_pawn(k) != o || !(reach & bit(at))) continue;
          const int wk = s == white ? at : p.wk, bk = s == white ? p.bk : at;
          std::array<int, 2> rest{-1, -1};
          for (int j = 0, r = 0; j < t.pawns(); ++j)
            if (j != k) rest[static_cast<std::size_t>(r++)] = p.pawn_at(j);
          const Table& sub = *t.sub_without_pawn(k);
          g.see(sub.v[o][sub.index(wk, bk, p.sq.data(), rest[0], rest[1])]);
        }
        if (!g.wins && moves_pawns) {  // a pawn of ours moves
          Conversions c;
          c.dtm = t.dtm;
          const KeptPawns kp = kept_pawns(t, p, s, p.side[o]);
          add_kept_pushes(t, p, s, kp, idx, c);
          if (!c.wins && kp.other_moves) t.pawn_moves(s, idx, p, c);
          g.add(c);
        }
        cursed_bits |= std::uint64_t{g.cursed_bit()} << q;
        late_bits |= std::uint64_t{g.late_bit()} << q;
        settle(t, idx, p, s, checked, g);
        if (t.dtm) note_ply(t, s, idx, g, plies);
      }
      far |= store_far_bits(t, s, base / 64, cursed_bits, late_bits);
      if (t.dtm) add_events(t, s, base, plies);
    }
    progress_advance(opt.progress, 64);
  }
  return far;
}

// Both sides' arrays, every value unknown, with the illegal positions marked once: two pieces
// on one square, or the side not to move in check. The side to move in check is noted too (a
// code the plies use for candidates), since only there can a position without moves be a mate.
Status mark_illegal(Table& t) {
  for (auto& v : t.v) {  // zeroed: every value unknown
    auto a = LargeArray<std::uint8_t>::allocate(t.padded(), t.huge_pages);
    if (!a) return std::move(a).error();
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
  if (t.m == 0 && !t.pawned()) {
    for (std::uint64_t idx = 0; idx < t.size; ++idx) mark(idx, false, false);
  } else if (t.m == 0) {  // the kings and the pawns: no runs
#pragma omp parallel for schedule(static) num_threads(t.threads)
    for (std::uint64_t idx = 0; idx < t.size; ++idx) {
      const Pos p = decode(t, idx);
      if (p.wk == p.bk || (king_attacks(p.wk) & bit(p.bk)) ||
          std::popcount(p.occ) != 2 + t.pawns()) {
        t.v[0][idx] = t.v[1][idx] = kIllegal;
        continue;
      }
      std::array<bool, 2> gives{};  // by colour
      for (int k = 0; k < t.pawns(); ++k) {
        const Color c = t.colour_of_pawn(k);
        gives[c] = gives[c] || (pawn_attacks(c, p.pawn_at(k)) & bit(c == white ? p.bk : p.wk));
      }
      mark(idx, gives[black], gives[white]);
    }
  } else {
    const auto last = static_cast<std::size_t>(t.m - 1);
#pragma omp parallel for schedule(dynamic, 256) num_threads(t.threads)
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
      if (t.pawned() && (pawn_attacks(t.pawn_colour, p.pawn) & bit(target[t.pawn_colour]))) {
        checks[t.pawn_colour] = true;  // which no piece can block
        block[t.pawn_colour] = 0;
      }
      if (t.pawn2_rank >= 0 &&
          (pawn_attacks(t.pawn2_colour, p.pawn2) & bit(target[t.pawn2_colour]))) {
        checks[t.pawn2_colour] = true;
        block[t.pawn2_colour] = 0;
      }
      // The squares of the last piece where side `by` gives check: another piece's check that
      // it does not block, or its own (attacks() from the king's square: Q R B N attack
      // symmetrically). As bitboards, so the 64 bytes of a run are written without a branch or a
      // test per square (the per-square tests took 0.42 s of KQRvKR's kernel).
      const Color lc = t.colour[last];
      std::array<Bitboard, 2> gives{checks[0] ? ~block[0] : 0, checks[1] ? ~block[1] : 0};
      gives[lc] |= attacks(t.type[last], target[lc], occ);
      // Side c to move: illegal where c gives check (or on an occupied square), in check where
      // the other side gives it.
      for (const Color c : {white, black}) {
        const Bitboard illegal = occ | gives[c], checked = gives[opposite(c)];
        std::uint8_t* out = &t.v[c][base];
        for (int q = 0; q < 64; ++q)
          out[q] = (illegal >> q & 1) ? kIllegal : (checked >> q & 1) ? kInCheck : kUnknown;
      }
    }
  }
  return {};
}

// Before a ply whose wins would outgrow the codes: every win and loss in at most `upto` plies
// becomes "won / lost earlier", its distance kept in before_base, and the others are coded from
// base `upto`. As often as the distances need: the first rebase maps before_base (zero, which is
// the distance of the mates, coded "lost earlier" from the start).
Status rebase(Table& t, int upto) {
  assert(upto > t.base && upto <= kMaxPlies);
  for (int s = 0; s < 2; ++s) {
    if (t.base == 0) {
      auto a = LargeArray<std::uint8_t>::allocate(t.padded(), t.huge_pages);
      if (!a) return std::move(a).error();
      t.before_base[s] = std::move(*a);
    }
    auto& v = t.v[s];
    auto& kept = t.before_base[s];
    const int base = t.base;
#pragma omp parallel for schedule(static) num_threads(t.threads)
    for (std::uint64_t idx = 0; idx < t.padded(); ++idx) {
      const std::uint8_t x = v[idx];
      if ((!is_win(x) && !is_loss(x)) || x == kWonEarlier || x == kLostEarlier) continue;
      const int d = base + std::abs(distance(x));
      if (d <= upto) {
        v[idx] = is_win(x) ? kWonEarlier : kLostEarlier;
        kept[idx] = static_cast<std::uint8_t>(d);
      } else {
        v[idx] = is_win(x) ? win(d - upto) : loss(d - upto);
      }
    }
  }
  t.base = upto;
  return {};
}
}  // namespace

Result<bool> solve(Table& t, const SolveOptions& opt, SolveTimes* times) {
  assert(!t.pawned() || (t.sub_pawn && t.pawn_moves));
  assert(t.pawns() < 2 || (t.sub_pawn2 && !t.promote_run));
  assert(t.pawns() < 3 || (t.m == 0 && t.sub_pawn3));
  for (int k = 0; k < t.pawns(); ++k)  // a push read at the position's own index
    assert(!t.kept_push(k) || t.keeps_place(k, 1));
  const auto start = Clock::now();
  RETRA_TRY(mark_illegal(t));
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
  // Whether a conversion reaches beyond the 50-move horizon: a bit of t.cursed or t.late set (an
  // int and |, as kernels/backward.hpp reduces under ThreadSanitizer).
  int far = 0;
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
      return t.sub[j]->index(s == white ? to : p.wk, s == white ? p.bk : to, rest.data(), p.pawn,
                             p.pawn2);
    };
    // In a table with a pawn: the index in sub_pawn (sub_pawn2: where the second pawn is taken)
    // after the pawn is taken by piece i (m: the king of side s), the pieces on sq; the other
    // pawn, if any, stays.
    auto pawn_taken = [&](bool second, std::size_t i, const Pos& p, Color s,
                          std::array<int, 3> sq) {
      const int at = second ? p.pawn2 : p.pawn;
      int wk = p.wk, bk = p.bk;
      if (i < static_cast<std::size_t>(t.m))
        sq[i] = at;
      else
        (s == white ? wk : bk) = at;
      return second ? t.sub_pawn2->index(wk, bk, sq.data(), p.pawn)
                    : t.sub_pawn->index(wk, bk, sq.data(), p.pawn2);
    };
    // Conversions beyond the 50-move horizon: a sub-table's distances, or the pawns' moves.
    bool may_reach_beyond = (t.pawned() && t.sub_pawn->longest > kHorizon) ||
                            (t.pawn2_rank >= 0 && t.sub_pawn2->longest > kHorizon);
    for (int j = 0; j < t.m; ++j)
      may_reach_beyond |= t.sub[static_cast<std::size_t>(j)]->longest > kHorizon;
    if (t.dtm)  // no horizon: every conversion acts at its own ply
      RETRA_TRY(allocate_plies(t));
    else if (may_reach_beyond || t.pawn_moves)
      RETRA_TRY(allocate_far_bitmaps(t));
    progress_phase(opt.progress, opt.label + ": captures", t.size);
#pragma omp parallel for schedule(dynamic, 256) num_threads(t.threads) reduction(| : far)
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
        // The captures of or by the last piece, as the squares it stands on where they are
        // made: piece i's attacks where the last piece is taken, the last piece's reach to piece
        // j where it takes (Q R B N attack symmetrically), once per run, not tested per square.
        std::array<Bitboard, 3> with_last{};
        for (std::size_t i = 0; i < last; ++i)
          if (lc == o ? t.colour[i] == s : t.colour[i] == o)
            with_last[i] = attacks(lc == o ? t.type[i] : t.type[last], p.sq[i], occ);
        // Where a pawn is the other side's: the squares of the last piece where piece i takes
        // it (another piece: unless the last piece stands between them); [1] the second pawn's.
        std::array<std::array<Bitboard, 3>, 2> take_pawn{};
        for (std::size_t k = 0; k < 2; ++k) {
          const int at = k == 0 ? p.pawn : p.pawn2;
          if (at < 0 || (k == 0 ? t.pawn_colour : t.pawn2_colour) != o) continue;
          for (std::size_t i = 0; i <= last; ++i) {
            if (t.colour[i] != s) continue;
            if (i == last)
              take_pawn[k][i] = attacks(t.type[last], at, occ);
            else if (attacks_square(t.type[i], s, p.sq[i], at, occ))
              take_pawn[k][i] = ~between(p.sq[i], at);
          }
        }
        // This side's pawns whose single push is kept (kept_pawns: the same for the whole run),
        // and what is left for pawn_moves, which is called for a position where one of them
        // can take the last piece (pawn_takes), and for every position where a pawn of this
        // side has its push not kept, can push twice or can take a piece (or pawn) but the
        // last (kp.other_moves).
        KeptPawns kp;
        Bitboard pawn_takes = 0;
        if (t.has_pawn(s)) {
          Bitboard theirs = 0;
          for (std::size_t j = 0; j < last; ++j)
            if (t.colour[j] == o) theirs |= bit(p.sq[j]);
          for (int k = 0; k < t.pawns(); ++k)
            if (t.colour_of_pawn(k) == o) theirs |= bit(p.pawn_at(k));
          kp = kept_pawns(t, p, s, theirs);
          if (lc == o) pawn_takes = kp.takes;  // else the last piece is not one to take
        }
        const int step = s == white ? 8 : -8;
        const int push_to = p.pawn + step;  // the (first) pawn's, where it promotes
        auto& v = t.v[s];
        // This run's bits of the cursed and late bitmaps: a run is one word.
        std::uint64_t cursed_bits = 0, late_bits = 0;
        std::array<std::uint64_t, 4> plies{};  // DTM: the plies of this run's conversions
        // The position with the last piece on q, for the pawn's moves and the mate test: kept
        // across the run and written field by field beside p's last square. A copy of p made
        // after the store to p.sq[last] read that store back through a wider load, which store
        // forwarding cannot serve (9% of this loop's samples in KRPvKR, on the instruction after
        // the copy).
        Pos moved = p;
        const Bitboard lc_side = p.side[lc];
        // The run's legal squares, from its 64 bytes at once: a test per square mispredicted
        // where legal and illegal squares mix, as they do in almost every run.
        std::uint64_t legal = 0;
        {
          const V32 ill = V32{} + kIllegal;
          V32 lo, hi;
          std::memcpy(&lo, &v[base], 32);
          std::memcpy(&hi, &v[base + 32], 32);
          legal = ~(high_bits(lo == ill) | std::uint64_t{high_bits(hi == ill)} << 32);
        }
        // Where the pawn is this side's and its push promotes: the squares of the last piece
        // where the push is free and safe, and each promotion's children on them at once
        // (promote_run), promotion k (Q R B N) where none before it wins. (One lookup at a time,
        // from pawn_moves, the under-promotions took most of KRPvKR_w7's extra 1.1 s of
        // captures.)
        std::array<std::array<std::uint8_t, 64>, 4> promoted;
        std::array<std::uint64_t, 4> promoting{};  // the squares whose promotion k was read
        const bool promotes = t.pawned() && t.pawn_colour == s && t.promote_run &&
                              rank_of(push_to) == (s == white ? 7 : 0) && !(occ & bit(push_to));
        if (promotes) {
          std::uint64_t squares = 0;
          Pos at = p;
          for (std::uint64_t b = legal & ~bit(push_to); b; b &= b - 1) {
            const int q = std::countr_zero(b);
            at.sq[last] = q;
            at.occ = occ | bit(q);
            if (pawn_move_safe(t, at, s, push_to)) squares |= bit(q);
          }
          for (std::size_t k = 0; k < 4 && squares; ++k) {
            promoting[k] = squares;
            t.promote_run(s, p, static_cast<int>(k), squares, promoted[k].data());
            for (std::uint64_t b = squares; b; b &= b - 1) {
              const int q = std::countr_zero(b);
              const std::uint8_t x = promoted[k][static_cast<std::size_t>(q)];
              if (t.dtm ? x == 1 : static_cast<Reach>(x) == Reach::loses) squares &= ~bit(q);
            }
          }
        }
        for (; legal; legal &= legal - 1) {
          const int q = std::countr_zero(legal);
          const auto idx = base + static_cast<std::uint64_t>(q);
          const std::uint8_t checked = v[idx];
          Gathered g;
          g.dtm = t.dtm;
          auto see = [&](std::uint8_t x) { g.see(x); };
          for (std::size_t r = 0; r < nr; ++r)
            if (!(runs[r].second & bit(q))) see(runs[r].first[q]);
          p.sq[last] = q;
          moved.sq[last] = q;
          moved.occ = occ | bit(q);
          moved.side[lc] = lc_side | bit(q);
          for (std::size_t k = 0; k < nk; ++k)
            see(t.sub[by_king[k]]->v[o][king_capture(by_king[k], p, s, p.sq[by_king[k]], p.sq)]);
          if (lc == o) {  // the last piece taken, by a piece or the king
            const auto& child = t.sub[last]->v[o];
            for (std::size_t i = 0; i < last; ++i) {
              if (!(with_last[i] >> q & 1)) continue;
              std::array<int, 3> sq = p.sq;
              sq[i] = q;
              see(child[sub_index(last, p.kings, sq)]);
            }
            if (reach & bit(q)) see(child[king_capture(last, p, s, q, p.sq)]);
          } else {  // the last piece takes
            for (std::size_t j = 0; j < last; ++j) {
              if (!(with_last[j] >> q & 1)) continue;
              std::array<int, 3> sq = p.sq;
              sq[last] = sq[j];
              see(t.sub[j]->v[o][sub_index(j, p.kings, sq)]);
            }
          }
          if (t.pawned() && !g.wins) {
            // A pawn of theirs taken, by a piece or the king.
            for (std::size_t k = 0; k < 2 && !g.wins; ++k) {
              const int at = k == 0 ? p.pawn : p.pawn2;
              if (at < 0 || (k == 0 ? t.pawn_colour : t.pawn2_colour) != o) continue;
              const auto& child = (k == 0 ? t.sub_pawn : t.sub_pawn2)->v[o];
              for (std::size_t i = 0; i <= last; ++i)
                if (take_pawn[k][i] >> q & 1) see(child[pawn_taken(k == 1, i, p, s, p.sq)]);
              if (reach & bit(at)) see(child[pawn_taken(k == 1, last + 1, p, s, p.sq)]);
            }
            if (!g.wins && t.has_pawn(s)) {  // a pawn of ours moves
              Conversions c;
              c.dtm = t.dtm;
              if (promotes)  // up to the first that wins, where the push is free and safe
                for (std::size_t k = 0; k < 4 && (promoting[k] >> q & 1); ++k)
                  add_kept(c, promoted[k][static_cast<std::size_t>(q)]);
              else
                add_kept_pushes(t, moved, s, kp, idx, c);
              if (!c.wins && (kp.other_moves || (pawn_takes >> q & 1)))
                t.pawn_moves(s, idx, moved, c);
              g.add(c);
            }
          }
          cursed_bits |= std::uint64_t{g.cursed_bit()} << q;
          late_bits |= std::uint64_t{g.late_bit()} << q;
          settle(t, idx, moved, s, checked, g);
          if (t.dtm) note_ply(t, s, idx, g, plies);
        }
        far |= store_far_bits(t, s, base / 64, cursed_bits, late_bits);
        if (t.dtm) add_events(t, s, base, plies);
      }
      progress_advance(opt.progress, 64);
    }
  } else if (t.pawned()) {
    if (t.dtm)
      RETRA_TRY(allocate_plies(t));
    else
      RETRA_TRY(allocate_far_bitmaps(t));  // a pawn move may reach beyond the horizon
    progress_phase(opt.progress, opt.label + ": captures", t.size);
    far = kings_and_pawns_captures(t, opt);
  }
  const double captures = std::chrono::duration<double>(Clock::now() - start).count();
  // The parents of mates win in 1.
  sweep(t, loss(0), {loss(0), loss(0)}, [&](Color s, std::uint64_t idx, std::uint8_t, Counts& k) {
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
  // A side's losses can be pulled too. Ply n marks the parents of each win in n as candidates
  // for ply n+1, reading every parent, and early in a table those wins are many: KQRvKR's 32 M
  // white wins in 1 made 59 M of black's 82 M open positions candidates, reading 557 M
  // parents. Where the wins known before ply n's sweep (`seeds`: the captures' wins in 1, then
  // those the ply before pushed) times kMarkReads outnumber the other side's open positions,
  // ply n marks none, and ply n+1 checks every open position of that side instead: one that is
  // not a candidate has no move into a win, so its first move ends the check, about kMarkReads
  // times cheaper than marking a win's parents (16-30 random compare-exchanges, and the checks
  // of the candidates they make). 6 when it was chosen, before the checks went a run of 64 at a
  // time over an exact 32-byte scan; since then the crossover lies near 32: against 6, the
  // DTM plies took 11% less time in KRPvKR, 15% in KQRvKR, 17-25% in KRBvKR and KRNvKR (half
  // the table reads, or less), KRPvKR's DTZ 6% less; KQRvKR's DTZ and KBBvKN's plies chose the
  // same (a pulled pair of KBBvKN's plies, 52 open positions a seed, took as long as marked).
  constexpr std::uint64_t kMarkReads = 32;
  // A pulled side is checked a run at a time where more than one position in kDense is open
  // (where fewer are, most runs hold one or two, and a run's reads cost each more than one
  // position's: pulling all of KQRvKR's sides by runs took its plies 0.1 s longer). Pulling a
  // side's wins so reads all the moves of each of its runs, which took about as long as pushing
  // kRunPull losses a run (KRPvKR_w7's white wins in 3 read faster pulled, from 7.6 M losses
  // on 0.9 M runs, and KRPvKR_w6's slower, from 3.2 M).
  constexpr std::uint64_t kDense = 8, kRunPull = 6;
  std::array<std::uint64_t, 2> open{}, seeds{};
  for (int s = 0; s < 2; ++s) {
    std::uint64_t opened = 0, seeded = 0;
    const std::uint8_t* v = t.v[s].data();
#pragma omp parallel for schedule(static) num_threads(t.threads) reduction(+ : opened, seeded)
    for (std::uint64_t idx = 0; idx < t.padded(); ++idx) {
      opened += is_open(v[idx]);
      seeded += v[idx] == win(1);
    }
    open[static_cast<std::size_t>(s)] = opened;
    seeds[static_cast<std::size_t>(s)] = seeded;
  }
  auto dense_open = [&](Color s) { return open[s] * kDense >= t.padded(); };
  std::array<bool, 2> pull{}, pull_next{};  // side s's wins of this ply / the next are pulled
  std::array<bool, 2> pull_losses{}, pull_losses_next{};  // and its losses
  Counts all, last, before_last;                          // the last two plies
  // Conversions beyond the horizon, which act at ply 101 (kFar): the cursed wins become wins in
  // 101, and the late losses candidates of that ply.
  constexpr int kFar = kHorizon + 1;
  auto is_late = [&](Color s, std::uint64_t idx) {
    return !t.late[s].empty() && (t.late[s][idx / 64] >> (idx % 64) & 1);
  };
  // DTM: the plies at which some conversion acts, of both sides.
  std::array<std::uint64_t, 4> event_plies{};
  for (const auto& mask : t.events)
    for (std::size_t w = 0; w < 4; ++w) event_plies[w] |= mask[w];
  // The first such ply after ply n, 0 where none is left.
  auto next_event = [&](int after) {
    for (int e = after + 1; e < 256; ++e)
      if (event_plies[static_cast<std::size_t>(e / 64)] >> (e % 64) & 1) return e;
    return 0;
  };
  int n = 1;
  // Whether side s's position at idx cannot lose at ply n yet, for a conversion that loses later.
  auto too_soon = [&](Color s, std::uint64_t idx) {
    if (t.dtm) return !t.at_ply[s].empty() && n < t.at_ply[s][idx];
    return n < kFar && is_late(s, idx);
  };
  for (;; ++n) {
    // Beyond a byte: the plies of the conversions (at_ply, events), before_base's distances.
    if (n > kMaxPlies + 1) return false;
    if (n + 1 - t.base > opt.rebase_at) {
      RETRA_TRY(rebase(t, n - 1));
      if (opt.note) opt.note(fmt::format("{}: codes rebased after ply {}", t.name, n - 1));
    }
    progress_phase(opt.progress, fmt::format("{}: ply {}", opt.label, n), 2 * t.chunks());
    if (far && n == kFar) {
      // Written before the sweep, as the last ply's pushed wins are: so this ply's wins must be
      // pushed ones on both sides (pull_next, below, and at the ply before).
      const std::uint8_t won_far = win(kFar - t.base), now_far = candidate(kFar);
      std::array<std::uint64_t, 2> made{};
      for (const Color s : {white, black}) {
        std::uint64_t made_s = 0;
#pragma omp parallel for schedule(static) num_threads(t.threads) reduction(+ : made_s)
        for (std::uint64_t w = 0; w < t.cursed[s].size(); ++w)
          for (std::uint64_t bits = t.cursed[s][w] | t.late[s][w]; bits; bits &= bits - 1) {
            const std::uint64_t one = bits & -bits;
            const std::uint64_t idx = w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
            const std::uint8_t x = t.v[s][idx];
            if (x == kCapDraw && (t.cursed[s][w] & one)) {
              t.v[s][idx] = won_far;
              ++made_s;
            } else if ((x == kUnknown || x == now_far) && (t.late[s][w] & one)) {
              t.v[s][idx] = now_far;
            } else {
              continue;
            }
            t.activate(n, s, idx);
          }
        made[s] = made_s;
        open[s] -= std::min(open[s], made_s);
        seeds[s] += made_s;
      }
      if (opt.note)
        opt.note(fmt::format("{}: {}/{} wins beyond the horizon at ply {}", t.name, made[white],
                             made[black], kFar));
    }
    pull = pull_next;
    pull_losses = pull_losses_next;
    if (t.dtm && (event_plies[static_cast<std::size_t>(n / 64)] >> (n % 64) & 1)) {
      // The conversions acting at this ply, written before the sweep: the wins where the side's
      // wins are pushed (as the last ply's pushed wins are, whose parents the sweep marks; a
      // pulled side's sweep finds them as it pulls, check_run and below), and the candidates.
      const auto events_start = Clock::now();
      const std::uint8_t won_now = win(n - t.base), now = candidate(n);
      const std::uint64_t chunks = t.chunks();
      std::uint64_t white_wins = 0, black_wins = 0, made_candidates = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(t.threads) \
    reduction(+ : white_wins, black_wins, made_candidates)
      for (std::uint64_t ch = 0; ch < 2 * chunks; ++ch) {
        if (!(t.events[ch][static_cast<std::size_t>(n / 64)] >> (n % 64) & 1)) continue;
        const Color s = ch < chunks ? white : black;
        std::uint64_t& made_wins = s == white ? white_wins : black_wins;
        const std::uint64_t lo = ch % chunks * kChunk, hi = std::min(t.padded(), lo + kChunk);
        const std::uint8_t* ply = t.at_ply[s].data();
        std::uint8_t* v = t.v[s].data();
        // 32 plies compared at once (hi - lo is a multiple of 32, as padded() is): one byte at a
        // time, these passes took 1.5 s of KQRvKR's 9.3 s of plies.
        const V32 at = V32{} + static_cast<std::uint8_t>(n);
        for (std::uint64_t w = lo; w < hi; w += 32) {
          V32 x;
          load32(ply + w, x);
          for (std::uint32_t bits = high_bits(x == at); bits; bits &= bits - 1) {
            const std::uint64_t idx = w + static_cast<std::uint64_t>(std::countr_zero(bits));
            if (v[idx] == kCapDraw && !pull[s]) {
              v[idx] = won_now;
              ++made_wins;
            } else if (v[idx] == kUnknown || v[idx] == now) {
              v[idx] = now;
              ++made_candidates;
            } else {
              continue;
            }
            t.activate(n, s, idx);
          }
        }
      }
      for (const Color s : {white, black}) {
        const std::uint64_t made = s == white ? white_wins : black_wins;
        open[s] -= std::min(open[s], made);
        seeds[s] += made;
      }
      if (opt.note)
        opt.note(fmt::format("{}: {}/{} wins and {} candidates by conversions at ply {}, {:.3f} s",
                             t.name, white_wins, black_wins, made_candidates, n,
                             std::chrono::duration<double>(Clock::now() - events_start).count()));
    }
    // Where a pulled side's open positions are dense, they are checked a run at a time, as the
    // candidates of a side whose wins are pushed are: KQRvKR's White wins in 3, pulled so
    // instead of pushed from Black's 17.7 M losses in 2, took its plies 2-3 from 1.61 s to 0.69 s.
    std::array<bool, 2> dense{};
    for (const Color s : {white, black}) dense[s] = pull[s] && t.m > 0 && dense_open(s);
    // Two choices are left to the end of the sweep, where what they weigh has been counted, as
    // neither can be estimated before it: side s's wins in n+1 (pulled or pushed), where the
    // other side's losses in n are found by checking every open position, not from candidates;
    // and the other side's losses in n+1 (pulled or marked), where s's wins in n are pulled by
    // runs. Meanwhile neither is pushed nor marked during the sweep; what is chosen is done by a
    // pass over the ply's losses or wins after it.
    std::array<bool, 2> defer_pull{};  // and the other side's marks where dense[s]
    for (const Color s : {white, black}) {
      defer_pull[s] = t.m > 0 && pull_losses[opposite(s)] && !(far && n + 1 == kFar);
      pull_next[s] = defer_pull[s] || (open[s] < std::max(before_last.losses[opposite(s)],
                                                          last.marked[opposite(s)] / 3) &&
                                       !(far && n + 1 == kFar));
    }
    for (const Color s : {white, black})
      pull_losses_next[opposite(s)] =
          dense[s] || (!pull[s] && seeds[s] * kMarkReads > open[opposite(s)]);
    const int b = t.base;
    const std::uint8_t now = candidate(n), next = candidate(n + 1), won = win(n - b),
                       bound = win(n - 1 - b), lost_before = loss(n - 1 - b);
    // The values the sweep hands over besides the candidates: a side's wins in n, where they
    // mark candidates, which is all it visits them for (KRPvKR_w5's ply 1 took 0.3 s visiting
    // its wins in 1 for nothing); on an open side, besides the open ones, its wins in n+1 where
    // it pulls (pushed by this ply's losses), or its wins in n where they mark.
    std::array<std::uint8_t, 2> visit{}, also{};
    for (const Color s : {white, black}) {
      const bool marks = !pull_losses_next[opposite(s)];
      visit[s] = marks ? won : now;
      also[s] = pull[s] ? win(n + 1 - b) : marks ? won : kUnknown;
    }
    // The parents of side s's win in n at idx (the position p) become candidates for ply n+1
    // where open. Retried while the parent stays unknown or this ply's candidate: another
    // thread may check the parent between the read and the write and set it back to unknown
    // (not lost), and a parent left so would never be checked again (the race the pawn tables'
    // test caught on two threads: a loss found a ply late, or never).
    auto mark_candidates = [&](Color s, std::uint64_t idx, const Pos& p, Counts& c) {
      if (pull_losses_next[opposite(s)]) return;  // the next ply reads every open parent
      auto& other = t.v[opposite(s)];
      Parents up;
      gather_parents(t, idx, p, s, other.data(), up);
      c.reads += up.n;
      for (const std::uint64_t parent : std::span(up.at.data(), up.n)) {
        for (std::uint8_t y = load(other[parent]); y == kUnknown || y == now;
             y = load(other[parent]))
          if (exchange(other[parent], y, next)) {
            t.activate(n + 1, opposite(s), parent);
            ++c.marked[opposite(s)];
            break;
          }
      }
    };
    // Side s's position p at idx, of value x when checked, loses in n: x is this ply's
    // candidate (or, where the side's losses are pulled, unknown), and every move reaches a
    // win. Nothing else writes a lost position in this ply: no move reaches a win in n or a
    // loss, which the other side's marks and pushes need.
    auto lose = [&](Color s, std::uint64_t idx, std::uint8_t x, const Pos& p, Counts& c) {
      if (!exchange(t.v[s][idx], x, loss(n - b))) return;
      ++c.losses[s];
      if (!pull_next[opposite(s)]) mark_wins(t, idx, p, s, n, c);
    };
    // Side s's open position p at idx wins in n (pulled: a move reaches a loss in n-1), unless
    // another thread made it a win or a loss meanwhile. The sweep hands over the side's wins in
    // n+1 too: where the side's next wins are pushed, this ply's losses write them while it
    // pulls, maybe before its scan reaches a position that wins in n, which an open-only scan
    // would then skip (a race the pawn tables' test caught, the win a ply late).
    auto win_now = [&](Color s, std::uint64_t idx, const Pos& p, Counts& c) {
      for (std::uint8_t y = load(t.v[s][idx]); is_open(y) || y == win(n + 1 - b);
           y = load(t.v[s][idx]))
        if (exchange(t.v[s][idx], y, won)) {
          ++c.wins[s];
          return mark_candidates(s, idx, p, c);
        }
    };
    // The position p of a run (decode_run's) with the last piece on q.
    auto place = [&](Pos p, int q) {
      const auto lp = static_cast<std::size_t>(t.m - 1);
      p.sq[lp] = q;
      p.occ |= bit(q);
      p.side[t.colour[lp]] |= bit(q);
      return p;
    };
    // The checks of a run of 64 positions of side s in which only the last piece moves (todo:
    // their bits; xs: the run's bytes as the sweep read them). A candidate (x == now; where the
    // side's losses are pulled, an unknown position too) loses in n if every legal quiet move
    // reaches a win within n-1 plies; unless it is late (before ply kFar), or unknown without a
    // legal quiet move (a stalemate: a position whose every capture loses lost in ply 1).
    // Otherwise a candidate becomes unknown again. Where the side's wins are pulled (dense),
    // todo holds every open position, and one wins in n if a move reaches a loss in n-1.
    // A move of a piece but the last one, or of the king, takes every position of the run to
    // one run of the other side's table (permuted where a king's move turns the board), so one
    // 64-byte read serves them all; the last piece's moves stay in the run, whose 64 children
    // are read once, and each position intersects its moves with them. A move refutes the
    // loss of the positions for which it is legal and whose child is neither illegal nor won
    // within n-1 plies; the moves are read until every position of the run is refuted (where
    // wins are pulled, until every one wins: one that does not reads all its moves).
    // Position by position, generating and reading each one's moves in turn, KRPvKR's plies
    // took 11.7 s and KQRvKR's 7.0 s, against 7.3 and 4.3 s (docs/CHESS-LOG.md).
    // Made twice, for pushed and pulled wins (pulls: std::bool_constant), so that the checks of
    // a side whose wins are pushed, most of a table's, test nothing for the pulled ones.
    auto check_run_as = [&](auto pulls_as, Color s, std::uint64_t base, std::uint64_t todo,
                            const std::uint8_t* xs, Counts& c) {
      constexpr bool pulls = decltype(pulls_as)::value;
      Pos p;
      [[maybe_unused]] const bool placed = decode_run(t, base, p);
      assert(placed);  // else every byte of the run is illegal, none to check
      const std::uint8_t* other = t.v[opposite(s)].data();
      const auto lp = static_cast<std::size_t>(t.m - 1);
      const Color lc = t.colour[lp];
      const Bitboard occ = p.occ;
      // Per square q of the last piece: a legal quiet move, a refutation, a move into a loss
      // within n-1 plies (where pulled).
      std::uint64_t moving = 0, refuted = 0, winning = 0;
      // Whether some position of the run is still to be decided by more moves.
      auto pending = [&] {
        if constexpr (pulls) return (todo & ~winning) != 0;
        return (todo & ~refuted) != 0;
      };
      // A child run's legal squares (children), those won within n-1 plies, and those lost
      // within n-1 plies (where pulled).
      struct Children {
        std::uint64_t legal = 0, won = 0, lost = 0;
      };
      auto classify = [&](const std::uint8_t* at) {
        ++c.reads;
        std::array<V32, 2> y;
        load32(at, y[0]);
        load32(at + 32, y[1]);
        Children ch;
        for (std::size_t h = 0; h < 2; ++h) {
          const int sh = static_cast<int>(32 * h);
          ch.legal |= std::uint64_t{high_bits(y[h] != kIllegal)} << sh;
          ch.won |= std::uint64_t{high_bits((y[h] >= kWonEarlier) & (y[h] <= bound))} << sh;
          if constexpr (pulls)
            ch.lost |= std::uint64_t{high_bits((y[h] >= kLostEarlier) & (y[h] <= lost_before))}
                       << sh;
        }
        return ch;
      };
      // A move made on the squares `valid` of the last piece, into the child run ch.
      auto add_move = [&](const Children& ch, std::uint64_t valid) {
        moving |= valid & ch.legal;
        refuted |= valid & ch.legal & ~ch.won;
        if constexpr (pulls) winning |= valid & ch.lost;
      };
      // DTM: a conversion that wins at this ply, on a pulled side (else written before the sweep).
      if constexpr (pulls)
        if (t.dtm)
          for (std::uint64_t bits = todo; bits; bits &= bits - 1) {
            const int q = std::countr_zero(bits);
            if (xs[q] == kCapDraw && t.at_ply[s][base + static_cast<std::uint64_t>(q)] == n)
              winning |= bit(q);
          }
      if (lc == s) {  // the last piece's moves, into this run of the other side's table
        const Children ch = classify(other + base);
        for (std::uint64_t bits = todo; bits; bits &= bits - 1) {
          const int q = std::countr_zero(bits);
          const Bitboard to = attacks(t.type[lp], q, occ) & ~occ;
          moving |= (to & ch.legal) ? bit(q) : 0;
          refuted |= (to & ch.legal & ~ch.won) ? bit(q) : 0;
          if constexpr (pulls) winning |= (to & ch.lost) ? bit(q) : 0;
        }
      }
      // The other pieces' moves: the last piece on a square between blocks a move, and on the
      // square moved to, it makes the move a capture.
      for (std::size_t i = 0; i < lp && pending(); ++i) {
        if (t.colour[i] != s) continue;
        const int from = p.sq[i];
        for (Bitboard q = attacks(t.type[i], from, occ) & ~occ; q && pending(); q &= q - 1) {
          const int to = std::countr_zero(q);
          add_move(classify(other + t.moved(base, static_cast<int>(i), from, to)),
                   ~(between(from, to) | bit(to)));
        }
      }
      const int k = s == white ? p.wk : p.bk, away = s == white ? p.bk : p.wk;
      for (Bitboard q = king_attacks(k) & ~occ & ~king_attacks(away); q && pending(); q &= q - 1) {
        const int to = std::countr_zero(q);
        const int wk = s == white ? to : p.wk, bk = s == white ? p.bk : to;
        const auto pair = static_cast<std::size_t>(wk * 64 + bk);
        if (t.pawned() || kKp.sym[pair] == 0) {
          add_move(classify(other + t.king_moved(base, wk, bk, p.sq.data())), ~bit(to));
          continue;
        }
        // The board turns: the last piece on q stands on image(q) in the child's run, whose
        // bytes are gathered in the run's order.
        const std::uint64_t at = t.index(wk, bk, p.sq.data()) & ~std::uint64_t{63};
        const std::uint8_t* image = &kKp.image[static_cast<std::size_t>(kKp.sym[pair]) * 64];
        alignas(32) std::array<std::uint8_t, 64> turned;  // load32 reads it as words
        for (std::size_t sq = 0; sq < 64; ++sq) turned[sq] = load(other[at + image[sq]]);
        add_move(classify(turned.data()), ~bit(to));
      }
      for (std::uint64_t bits = todo; bits; bits &= bits - 1) {
        const int q = std::countr_zero(bits);
        const std::uint64_t idx = base + static_cast<std::uint64_t>(q);
        const std::uint8_t x = xs[q];
        // Where wins are pushed, todo holds only the positions to check.
        const bool check = !pulls || x == now || (pull_losses[s] && x == kUnknown);
        if (pulls && (winning >> q & 1)) {
          win_now(s, idx, place(p, q), c);
        } else if (check && !(refuted >> q & 1) && (x == now || (moving >> q & 1)) &&
                   !too_soon(s, idx)) {
          lose(s, idx, x, place(p, q), c);
        } else if (x == now) {
          exchange(t.v[s][idx], now, kUnknown);
        }
      }
    };
    auto check_run = [&](Color s, std::uint64_t base, std::uint64_t todo, const std::uint8_t* xs,
                         Counts& c) {
      if (pull[s])
        check_run_as(std::true_type{}, s, base, todo, xs, c);
      else
        check_run_as(std::false_type{}, s, base, todo, xs, c);
    };
    // How the sweep hands a side's positions over: a run at a time where its wins are not
    // pulled, or pulled from dense open positions.
    auto runs = [&](Color s) {
      return t.m == 0 ? Runs::none : !pull[s] ? Runs::checks : dense[s] ? Runs::all : Runs::none;
    };
    const auto ply_start = Clock::now();
    Counts k = sweep(t, now, visit,
                     [&](Color s, std::uint64_t idx, std::uint8_t x, Counts& c) {
                       // A side whose wins are not pulled has its positions checked by check_run
                       // (but in a table of the kings and pawns, which has no runs: below), and
                       // is handed its wins in n, which mark their parents, and values with
                       // nothing to do (a draw by capture, the next ply's candidate).
                       const bool check = x == now || (pull_losses[s] && x == kUnknown);
                       if (!pull[s] && !(t.m == 0 && check)) {
                         if (x == won) mark_candidates(s, idx, decode(t, idx), c);
                         return;
                       }
                       // DTM: a conversion that wins at this ply, on a pulled side.
                       if (t.dtm && pull[s] && x == kCapDraw && t.at_ply[s][idx] == n)
                         return win_now(s, idx, decode(t, idx), c);
                       const Pos p = decode(t, idx);
                       // Pulled, where the side's open positions are few and scattered (else
                       // check_run pulls): an open position wins in n if a move reaches a loss in
                       // n-1; a candidate (where losses are pulled, an unknown position too)
                       // without one loses if every move reaches a win, as check_run's do. Not
                       // pulled (kings and pawns only), the candidate's moves are read only until
                       // one refutes its loss.
                       const auto& other = t.v[opposite(s)];
                       bool moves = x == now, wins = false, lost = check && !too_soon(s, idx);
                       for_each_quiet(t, idx, p, s, [&](std::uint64_t child) {
                         ++c.reads;
                         const std::uint8_t y = load(other[child]);
                         moves = moves || y != kIllegal;
                         wins = pull[s] && is_loss(y) && y <= lost_before;
                         lost = lost && (y == kIllegal || (is_win(y) && y <= bound));
                         return pull[s] ? !wins : lost;
                       });
                       if (wins) return win_now(s, idx, p, c);
                       if (lost && moves) return lose(s, idx, x, p, c);
                       if (x == now) exchange(t.v[s][idx], now, kUnknown);
                     },
                     t.active[n & 1].data(), {pull[0] || pull_losses[0], pull[1] || pull_losses[1]},
                     opt.progress, also, check_run, {runs(white), runs(black)});
    std::fill(t.active[n & 1].begin(), t.active[n & 1].end(), 0);
    for (const Color s : {white, black}) open[s] -= std::min(open[s], k.wins[s] + k.losses[s]);
    // The choices left to the end of the sweep. Side s's wins in n+1: pulled where the next ply
    // would take less time than pushing them from the other side's losses in n (by runs, as
    // long as pushing kRunPull losses a run; position by position, about one loss a position,
    // as at the start of a ply); else pushed now.
    std::array<bool, 2> push_now{}, mark_now{};
    for (const Color s : {white, black}) {
      if (!defer_pull[s]) continue;
      const std::uint64_t losses = k.losses[opposite(s)];
      pull_next[s] = dense_open(s) ? losses > t.padded() / 64 * kRunPull : losses > open[s];
      push_now[s] = !pull_next[s] && losses > 0;
    }
    // The other side's losses in n+1 where s's wins in n were pulled by runs: pulled where
    // marking would read more than checking every open position (as at the start of a ply,
    // with s's wins in n for the seeds); else marked now.
    for (const Color s : {white, black}) {
      if (!dense[s]) continue;
      const std::uint64_t wins = k.wins[s] - k.pushed[s];
      pull_losses_next[opposite(s)] = wins * kMarkReads > open[opposite(s)];
      mark_now[s] = !pull_losses_next[opposite(s)] && wins > 0;
    }
    if (push_now[white] || push_now[black] || mark_now[white] || mark_now[black]) {
      // One pass for both: the losses in n of a side o push wins into s = opposite(o), the
      // wins in n of s mark candidates in o; each writes only the other side's open values.
      const std::uint8_t lost_now = loss(n - b);
      // Handed both codes where both are wanted, a run at a time (a position decoded once a
      // run); the body takes what its side is for.
      const std::uint8_t a = push_now[white] || push_now[black] ? lost_now : won;
      auto act = [&](Color s, std::uint64_t idx, std::uint8_t x, const Pos& p, Counts& c) {
        if (x == won && mark_now[s])
          mark_candidates(s, idx, p, c);
        else if (x == lost_now && push_now[opposite(s)])
          mark_wins(t, idx, p, s, n, c);
      };
      // Only the sides that act are read.
      std::vector<std::uint8_t> sides(2 * t.chunks(), 0);
      for (const Color s : {white, black})
        if (mark_now[s] || push_now[opposite(s)])
          std::fill_n(sides.begin() + static_cast<std::ptrdiff_t>(s * t.chunks()), t.chunks(), 1);
      const Counts more = sweep(
          t, a, {mark_now[white] ? won : lost_now, mark_now[black] ? won : lost_now},
          [&](Color, std::uint64_t, std::uint8_t, Counts&) { assert(false); }, sides.data(), {},
          nullptr, {},
          [&](Color s, std::uint64_t base, std::uint64_t bits, const std::uint8_t* xs, Counts& c) {
            Pos p;
            [[maybe_unused]] const bool placed = decode_run(t, base, p);
            assert(placed);  // else every byte of the run is illegal, none handed
            for (; bits; bits &= bits - 1) {
              const int q = std::countr_zero(bits);
              act(s, base + static_cast<std::uint64_t>(q), xs[q], place(p, q), c);
            }
          },
          {Runs::all, Runs::all});
      for (const Color s : {white, black}) open[s] -= std::min(open[s], more.wins[s]);
      k += more;
    }
    all += k;
    before_last = last;
    last = k;
    seeds = k.pushed;
    if (opt.note)
      opt.note(fmt::format(
          "{} ply {}: losses {}/{}, wins {}/{} (white/black to move), {} candidates, open {}/{}, "
          "wins pulled:{}{}, losses pulled:{}{}; {} reads, {:.3f} s",
          t.name, n, k.losses[white], k.losses[black], k.wins[white], k.wins[black], k.all_marked(),
          open[white], open[black], pull[white] ? dense[white] ? " white (runs)" : " white" : "",
          pull[black] ? dense[black] ? " black (runs)" : " black" : "",
          pull_losses[white] ? " white" : "", pull_losses[black] ? " black" : "", k.reads,
          std::chrono::duration<double>(Clock::now() - ply_start).count()));
    if (n > 1 && k.all_losses() == 0 && k.all_marked() == 0 && !pull_losses_next[white] &&
        !pull_losses_next[black]) {
      if (t.dtm) {  // nothing more happens before the next ply at which conversions act
        const int e = next_event(n);
        if (e == 0) break;
        n = e - 1;
        continue;
      }
      if (!far || n >= kFar) break;
      // Nothing more happens before ply 101, where the conversions beyond the horizon act.
      n = kFar - 1;
      pull_next = pull_losses_next = {};
    }
  }
  // What is still open draws: one plain pass, as the compiler vectorizes it.
  for (auto& side : t.v) {
    std::uint8_t* v = side.data();
#pragma omp parallel for schedule(static) num_threads(t.threads)
    for (std::uint64_t idx = 0; idx < t.padded(); ++idx)
      v[idx] = v[idx] == kUnknown || v[idx] == kCapDraw ? kDraw : v[idx];
  }
  t.plies = n;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.find_longest();
  if (t.longest > opt.max_plies) return false;  // a DTM byte holds distance + 1
  if (times) *times = {illegal, captures - illegal, init - captures, seconds - init};
  if (opt.note)
    opt.note(fmt::format(
        "{}: init {:.2f} s (illegal {:.2f}, captures {:.2f}, mates {:.2f}), {} plies {:.2f} s, {} "
        "table reads in the plies",
        t.name, init, illegal, captures - illegal, init - captures, n, seconds - init, all.reads));
  return true;
}

namespace {
// For each of retra's slots (kings included) of t's material, t's piece on it: 0 the white king,
// 1 the black king, 2 + i piece i, 2 + m the pawn, 3 + m the second, 4 + m the third. With flip,
// retra's table is t's material with the colours exchanged (and the board turned over: a pawn's
// rank too). Identical pieces take the slots of their group in order; a pawn, the slot of its rank.
std::vector<int> piece_of_slot(const Table& t, const std::vector<Slot>& slots, bool flip) {
  std::vector<int> of(slots.size(), -1);
  unsigned used = 0;
  for (std::size_t k = 0; k < slots.size(); ++k)
    for (int j = 0; j < t.m + 2 + t.pawns(); ++j) {
      const auto u = static_cast<std::size_t>(j - 2);
      const int pk = j - t.m - 2;  // the pawn's number, where j is a pawn
      const bool is_pawn = pk >= 0;
      const Color c = j < 2 ? static_cast<Color>(j) : is_pawn ? t.colour_of_pawn(pk) : t.colour[u];
      const PieceType type = j < 2 ? king : is_pawn ? pawn : t.type[u];
      const int rank = is_pawn ? t.rank_of_pawn(pk) : -1;
      if ((used >> j & 1) || type != slots[k].type || (flip ? opposite(c) : c) != slots[k].color ||
          (rank >= 0 && (flip ? 7 - rank : rank) != slots[k].rank))
        continue;
      of[k] = j;
      used |= 1u << j;
      break;
    }
  // A contract of the callers: the indexer is of t's material.
  assert(slots.size() == static_cast<std::size_t>(t.m + 2 + t.pawns()) &&
         std::count(of.begin(), of.end(), -1) == 0);
  return of;
}
}  // namespace

Status load(Table& t, const Indexer& ix, bool flip, const StoredValue& value) {
  RETRA_TRY(mark_illegal(t));
  [[maybe_unused]] const std::uint64_t size = ix.size();
  const std::vector<int> of = piece_of_slot(t, ix.slots(), flip);
  bool too_far = false;  // DTM: a distance of 254 plies, whose byte is kDtmIllegal's
  // kIllegal is a DTM byte (mated): in DTM, the illegal positions take kDtmIllegal first.
  const std::uint8_t illegal = t.dtm ? kDtmIllegal : kIllegal;
#pragma omp parallel for schedule(dynamic, 4096) num_threads(t.threads) reduction(|| : too_far)
  for (std::uint64_t idx = 0; idx < t.size; ++idx) {
    for (const Color s : {white, black})
      if (t.v[s][idx] == kIllegal) t.v[s][idx] = illegal;
    if (t.v[white][idx] == illegal && t.v[black][idx] == illegal) continue;
    const Pos p = decode(t, idx);
    std::array<int, 7> placed{p.wk, p.bk, p.sq[0], p.sq[1], p.sq[2], 0, 0};
    placed[static_cast<std::size_t>(t.m + 2)] = p.pawn;   // the pawn's, if any
    placed[static_cast<std::size_t>(t.m + 3)] = p.pawn2;  // the second's, if any
    if (t.pawns() == 3) placed[static_cast<std::size_t>(t.m + 4)] = p.pawn3;
    std::array<std::uint8_t, kMaxPieces> sq{};
    for (std::size_t k = 0; k < of.size(); ++k) {
      const int q = placed[static_cast<std::size_t>(of[k])];
      sq[k] = static_cast<std::uint8_t>(flip ? q ^ 56 : q);
    }
    const std::uint64_t r = ix.rank(sq.data());
    assert(r < size);
    for (const Color s : {white, black}) {
      if (t.v[s][idx] == illegal) continue;
      const int b = value(flip ? opposite(s) : s, r);
      if (t.dtm) {  // kept as it is
        t.v[s][idx] = static_cast<std::uint8_t>(b);
        too_far = too_far || b == kDtmIllegal;
        continue;
      }
      // Beyond the horizon: 101 plies, as a conversion into it counts (values.hpp, Best).
      const int d = std::min((b & 1) ? (b - 1) / 2 : (b - 2) / 2, kHorizon + 1);
      t.v[s][idx] = b == 0 ? kDraw : (b & 1) ? win(d) : loss(d);
    }
  }
  if (t.dtm) {
    for (auto& side : t.v)
      for (std::uint64_t idx = t.size; idx < t.padded(); ++idx) side[idx] = kDtmIllegal;
    if (too_far)
      return Error(Errc::resource, Cause::distance_overflow,
                   t.name + ": a DTM of 254 plies, whose byte the sweep reads as illegal");
    return {};
  }
  t.find_longest();
  return {};
}

void draws_as_dtm(Table& t) {
  for (auto& side : t.v)
    for (std::uint64_t idx = 0; idx < t.padded(); ++idx) {
      assert(side[idx] == kIllegal || side[idx] == kDraw);
      side[idx] = side[idx] == kIllegal ? kDtmIllegal : 0;
    }
  t.dtm = true;
}

namespace {
// The hole bits of one thread's entries, in increasing order: a word is kept here and or-ed into
// the bitmap once the entries move past it, since blocks need not start on a word.
struct HoleBits {
  std::uint64_t* words;
  std::uint64_t word = ~std::uint64_t{0}, bits = 0;
  void mark(std::uint64_t entry) {
    if (!words) return;
    if (entry / 64 != word) {
      flush();
      word = entry / 64;
    }
    bits |= std::uint64_t{1} << (entry % 64);
  }
  // Marks entry + j for every bit j of b.
  void mark_bits(std::uint64_t entry, std::uint64_t b) {
    if (!words || !b) return;
    const std::uint64_t off = entry % 64;
    mark_word(entry / 64, b << off);
    if (off != 0) mark_word(entry / 64 + 1, b >> (64 - off));
  }
  void mark_word(std::uint64_t w, std::uint64_t b) {
    if (!b) return;
    if (w != word) {
      flush();
      word = w;
    }
    bits |= b;
  }
  void flush() {
    if (bits != 0)
      std::atomic_ref<std::uint64_t>(words[word]).fetch_or(bits, std::memory_order_relaxed);
    bits = 0;
  }
};
}  // namespace

std::vector<std::pair<std::uint64_t, std::uint32_t>> to_segment(const Table& t, const Indexer& ix,
                                                                std::span<std::uint8_t> out,
                                                                std::uint64_t* holes) {
  const std::uint64_t size = ix.size();
  assert(out.size() == 2 * size);
  const auto& slots = ix.slots();
  const std::vector<int> of = piece_of_slot(t, slots, false);
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> far_parts(
      static_cast<std::size_t>(t.threads));
  auto code = [&](std::size_t s, std::uint64_t idx, std::uint64_t entry, HoleBits& hole) {
    const std::uint8_t x = t.v[s][idx];
    if (x == kIllegal) hole.mark(entry);  // the side not to move in check
    if (!is_win(x) && !is_loss(x)) return std::uint8_t{0};
    const int d = t.plies_to_go(static_cast<Color>(s), idx);
    if (t.dtm) {  // within a byte: solve() gives up beyond kMaxPlies
      assert(d <= 254);
      return static_cast<std::uint8_t>(d + 1);
    }
    const auto exact = static_cast<std::uint32_t>(is_win(x) ? 2 * d + 1 : 2 * d + 2);
    if (exact <= 254) return static_cast<std::uint8_t>(exact);
    far_parts[static_cast<std::size_t>(omp_get_thread_num())].emplace_back(entry, exact);
    return static_cast<std::uint8_t>(is_win(x) ? 253 : 254);
  };
  // Where the last piece is alone in its group, retra's last digit is its square among the
  // squares the others leave free, ascending, so a run of `run` indices moves only that piece,
  // as the sweep's runs of 64 do: such a run is converted without the indexer, unless both
  // kings stand on the a1-h8 diagonal (which placements are canonical then depends on the
  // pieces). Blocks are whole runs. The last digit is the last slot's but for kings and pawns,
  // which are the head's (KRPvK, KRvKP: the rook's).
  // Where the last group holds `group` identical pieces (KNNvKP, KQQQvK), the last digit ranks
  // their squares as a combination, the lowest varying fastest: a run moves only the lowest,
  // over the free squares below the second lowest, and starts where it stands on the lowest free
  // square. In the sweep's table that piece is read as the last (identical pieces stand in
  // either order there, every copy with the same value), its partners fixed before it. Blocks are
  // whole cycles of the digit, so no run crosses one. (Through the indexer, whose step places the
  // group anew by a bisection per piece, these tables converted at a fifth of the others' rate.)
  std::size_t ls = slots.size() - 1;
  while (ls > 0 && (slots[ls].type == king || slots[ls].type == pawn)) --ls;
  int group = 1;
  while (group < t.m && slots[ls - static_cast<std::size_t>(group)].type == slots[ls].type &&
         slots[ls - static_cast<std::size_t>(group)].color == slots[ls].color)
    ++group;
  const bool runs = t.m > 0 && of[ls] == t.m + 1;
  const std::size_t lowest = ls + 1 - static_cast<std::size_t>(group);  // the group's first slot
  const std::uint64_t run = runs ? ix.radices().back() : 1;
  const std::uint64_t block = run * std::max<std::uint64_t>(1, 4096 / run);
  const std::uint64_t blocks = (size + block - 1) / block;  // per side
  auto diagonal = [](int q) { return file_of(q) == rank_of(q); };
  // With codes of base 0, a run's bytes are coded by a table, without a branch on the value
  // (random in a run, so mispredicted: half of this loop's time was code()'s branches). Its
  // distances are at most kMaxWin plies, so none needs more than a byte.
  std::array<std::uint8_t, 256> coded{};
  for (int x = 0; x < 256; ++x) {
    const auto u = static_cast<std::uint8_t>(x);
    coded[static_cast<std::size_t>(x)] = t.dtm ? stored_dtm_byte(u) : stored_byte(u);
  }
  const bool by_table = t.base == 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(t.threads)
  for (std::uint64_t b = 0; b < 2 * blocks; ++b) {
    const auto s = static_cast<std::size_t>(b / blocks);
    const std::uint64_t lo = b % blocks * block, hi = std::min(size, lo + block);
    std::uint8_t* const side = out.data() + s * size;
    std::array<std::uint8_t, kMaxPieces> sq{};
    HoleBits hole{holes};
    for (std::uint64_t i = lo; i < hi;) {
      const bool valid = i == lo ? ix.unrank(i, sq.data()) : ix.step(i, sq.data());
      std::array<int, 7> placed{};  // t's pieces' squares, as piece_of_slot numbers them
      for (std::size_t k = 0; k < of.size(); ++k) placed[static_cast<std::size_t>(of[k])] = sq[k];
      const int wk = placed[0], bk = placed[1];
      int* const pieces = placed.data() + 2;
      const int pawn = t.pawned() ? pieces[t.m] : -1;
      const int pawn2 = t.pawns() >= 2 ? pieces[t.m + 1] : -1;
      const int pawn3 = t.pawns() == 3 ? pieces[t.m + 2] : -1;
      // The squares of the run that starts at i (never empty), 0 where none does: those the
      // kings, the pawns and the pieces before the last group leave free, and with a group
      // (whose lowest piece must stand on the lowest of them) those below its second lowest.
      Bitboard free = 0;
      if (runs && valid && (t.pawned() || !(diagonal(wk) && diagonal(bk)))) {
        Bitboard others = bit(wk) | bit(bk);
        if (pawn >= 0) others |= bit(pawn);
        if (pawn2 >= 0) others |= bit(pawn2);
        for (int k = 0; k < t.m - group; ++k) others |= bit(pieces[k]);
        if (group == 1)
          free = i % run == 0 ? ~others : 0;
        else if (((bit(sq[lowest]) - 1) & ~others) == 0)
          free = ~others & (bit(sq[lowest + 1]) - 1);
      }
      if (free) {
        // With pawns, t turns the board left to right where the (first) pawn is on the e-h
        // files, as retra's representative may have it with two pawns: the run's squares turn.
        const int turn = t.pawned() && file_of(pawn) >= 4 ? 7 : 0;
        // The group's lowest piece moves: as the sweep's last (its partners before it).
        if (group > 1) std::swap(pieces[t.m - group], pieces[t.m - 1]);
        pieces[t.m - 1] = 0;
        const std::uint64_t base = t.index(wk, bk, pieces, pawn, pawn2) & ~std::uint64_t{63};
        assert(group > 1 || static_cast<std::uint64_t>(std::popcount(free)) == run);
        assert(i + static_cast<std::uint64_t>(std::popcount(free)) <= hi);
        if (by_table) {
          const std::uint8_t* const from = t.v[s].data() + base;
          std::uint64_t illegal = 0;  // the side not to move in check, bit k for entry i + k
          std::uint64_t k = 0;
          for (Bitboard f = free; f; f &= f - 1, ++k) {
            const std::uint8_t x = from[std::countr_zero(f) ^ turn];
            side[i + k] = coded[x];
            illegal |= std::uint64_t{x == kIllegal} << k;
          }
          hole.mark_bits(s * size + i, illegal);
          i += k;
        } else {
          for (Bitboard f = free; f; f &= f - 1, ++i)
            side[i] = code(s, base + (std::countr_zero(f) ^ turn), s * size + i, hole);
        }
        // For the next step (a group's step places it from the index alone).
        if (group == 1) sq[ls] = static_cast<std::uint8_t>(63 - std::countl_zero(free));
        continue;
      }
      if (valid) {
        side[i] = code(s, t.index(wk, bk, pieces, pawn, pawn2, pawn3), s * size + i, hole);
      } else {
        side[i] = 0;
        hole.mark(s * size + i);  // not the canonical placement of its class
      }
      ++i;
    }
    hole.flush();
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> far;
  for (const auto& part : far_parts) far.insert(far.end(), part.begin(), part.end());
  std::sort(far.begin(), far.end());
  return far;
}

}  // namespace retra::chess::sweep

namespace retra::chess {

bool Game::pushes_room(std::uint64_t need, std::uint64_t spare, std::uint64_t* held,
                       int* dropped) const {
  std::lock_guard lock(pushes_mutex_);
  std::uint64_t bytes = 0;
  for (const auto& entry : pushes_) bytes += entry.second.bytes->size();
  while (bytes + need > spare && !pushes_.empty()) {
    auto oldest =
        std::min_element(pushes_.begin(), pushes_.end(),
                         [](const auto& a, const auto& b) { return a.second.age < b.second.age; });
    bytes -= oldest->second.bytes->size();
    pushes_.erase(oldest);
    if (dropped) ++*dropped;
  }
  if (held) *held = bytes;
  return bytes + need <= spare;
}

std::optional<Result<kernels::OwnKernelRun>> Game::own_kernel(
    int s, std::span<std::uint8_t> values, const kernels::Lower<int>& lower,
    const kernels::KernelOptions& options, const kernels::OwnKernelLimits& limits) const {
  const Table& table = this->table(s);
  const Material& material = table.key.material;
  const int pawns = material.count[white][pawn] + material.count[black][pawn];
  // Up to three pawns (with no other piece besides the kings, position by position: no runs).
  const bool dtm = is_dtm(s);
  if (table.n < 3 || table.n > 5 || pawns > 3) return std::nullopt;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const int threads = std::max(1, options.threads);
  sweep::Table top = sweep::table_for(table.slots, threads);
  top.huge_pages = options.tuning.huge_pages;
  top.dtm = dtm;
  // A sweep table's segment of retra's: its id, and whether it is the table's material with the
  // colours exchanged (and the board turned over).
  auto segment_of = [&](const sweep::Table& t) {
    Material m{};
    m.count[white][king] = m.count[black][king] = 1;
    for (int i = 0; i < t.m; ++i)
      ++m.count[t.colour[static_cast<std::size_t>(i)]][t.type[static_cast<std::size_t>(i)]];
    for (int k = 0; k < t.pawns(); ++k) ++m.count[t.colour_of_pawn(k)][pawn];
    const Material canonical = m.canonicalized();
    const bool flip = !(canonical == m);
    TableKey key{canonical, {}};
    auto add_pawn = [&](Color c, int rank) {
      key.profile.ranks[flip ? opposite(c) : c].push_back(
          static_cast<std::int8_t>(flip ? 7 - rank : rank));
    };
    for (int k = 0; k < t.pawns(); ++k) add_pawn(t.colour_of_pawn(k), t.rank_of_pawn(k));
    for (auto& r : key.profile.ranks) std::sort(r.begin(), r.end());
    return std::pair{find(dtm ? key.name() + ".dtm" : key.name()), flip};
  };
  // The arrays: both sides of this table (twice, should its codes be rebased), its chunk flags,
  // both sides of each sub-table, and, where a conversion may reach beyond the 50-move horizon
  // (a pawn move may; a capture where a sub-table's distances pass 100 plies), the cursed and
  // late bitmaps of both sides; the pushes' bytes kept of the segment ahead are added below.
  std::uint64_t bytes = 4 * top.padded() + 4 * top.chunks();
  // DTM: the plies of the conversions (at_ply, events).
  if (dtm) bytes += 2 * top.padded() + 64 * top.chunks();
  const std::uint64_t bitmaps = top.padded() / 2 + 32;
  // With pawns: the bitmaps, and what is kept for the segments a rank behind (a byte per index,
  // for each pawn).
  if (top.pawned()) bytes += bitmaps + static_cast<std::uint64_t>(top.pawns()) * top.size;
  // Sub-table j lacks top's piece j (m + k: pawn k, the others kept in their order); identical
  // pieces share one.
  std::map<std::string, std::unique_ptr<sweep::Table>> subs;
  for (int j = 0; j < top.m + top.pawns(); ++j) {
    std::array<int, 3> rank{-1, -1, -1};
    std::array<Color, 3> colour{white, white, white};
    for (int k = 0, r = 0; k < top.pawns(); ++k)
      if (k != j - top.m) {
        rank[static_cast<std::size_t>(r)] = top.rank_of_pawn(k);
        colour[static_cast<std::size_t>(r++)] = top.colour_of_pawn(k);
      }
    // pieces_without(top, j) for a pawn's j (>= m): all of top's pieces.
    auto sub = std::make_unique<sweep::Table>(sweep::make_table(pieces_without(top, j), threads,
                                                                rank[0], colour[0], rank[1],
                                                                colour[1], rank[2], colour[2]));
    auto it = subs.find(sub->name);
    if (it == subs.end()) {
      sub->huge_pages = options.tuning.huge_pages;
      bytes += 2 * sub->padded();
      it = subs.emplace(sub->name, std::move(sub)).first;
    }
    (j == top.m       ? top.sub_pawn
     : j == top.m + 1 ? top.sub_pawn2
     : j == top.m + 2 ? top.sub_pawn3
                      : top.sub[static_cast<std::size_t>(j)]) = it->second.get();
  }
  // What the sweep kept of earlier segments counts too: the whole set's DTZ run held 19.4 GB at
  // its peak, and with DTM in the same process the kernel was killed for memory at 24.4 GB.
  int dropped = 0;                      // entries of pushes_ dropped to make room
  const std::uint64_t planned = bytes;  // this segment's arrays (for the statistics)
  if (!pushes_room(bytes, limits.spare_bytes, nullptr, &dropped)) return std::nullopt;
  // The sub-tables from the finished segments (the bare kings: built here, all draws).
  bool far_subs = false;  // one with a distance beyond the 50-move horizon
  for (auto& [name, sub] : subs) {
    if (sub->m == 0 && !sub->pawned()) {
      auto built = sweep::solve(*sub, {});
      if (!built) return std::move(built).error();
      if (dtm) sweep::draws_as_dtm(*sub);
      continue;
    }
    sub->dtm = dtm;
    // Not a structured binding: clang 14 (the TSan build's) cannot capture one in a lambda.
    const std::pair<int, bool> segment = segment_of(*sub);
    const int id = segment.first;
    const bool flip = segment.second;
    assert(id >= 0 && is_dtm(id) == dtm);  // every capture's table is in the closure
    const Indexer& ix = *this->table(id).indexer;
    const std::uint64_t size = ix.size();
    const Status loaded = sweep::load(*sub, ix, flip, [&](Color side, std::uint64_t r) {
      return lower(id, static_cast<std::uint64_t>(side) * size + r);
    });
    if (!loaded && loaded.error().cause() == Cause::distance_overflow) return std::nullopt;
    if (!loaded) return loaded.error();
    far_subs |= sub->longest > kHorizon;
  }
  if (!top.pawned() && far_subs && bytes + bitmaps > limits.spare_bytes) return std::nullopt;
  const double load_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // A pawn's single pushes from what the sweep kept of the segment a rank ahead (pushes_),
  // when it built that one in this process: one byte per position, read at the position's own
  // index, since a push changes no digit of the sweep's layout where the pawn keeps its place
  // among its colour's pawns (Table::keeps_place). The same for the double pushes from the
  // pawn's start rank (`ahead2`). Per pawn ([1]: the second).
  std::array<std::shared_ptr<const LargeArray<std::uint8_t>>, 3> ahead, ahead2;
  int kept_pushes = 0;  // the arrays read: single and double pushes, per pawn
  std::vector<int> of;  // retra's slots' pieces of top (sweep::piece_of_slot), and the inverse
  std::array<std::size_t, 7> slot_of{};
  std::array<std::size_t, 3> ps{};  // each pawn's slot
  // A child's stored byte after the pawn on slot `mover` of `side` moves to `to` by transition
  // tr, the pieces on retra's slots sq (0, a draw, where only the kings are left).
  // (child_index: its index as lower takes it, for a transition with a target.)
  // (used: the transform that turned the child into its representative, where asked.)
  auto child_index = [&](const Transition& tr, Color side,
                         const std::array<std::uint8_t, kMaxPieces>& sq, int to, std::size_t mover,
                         int* used = nullptr) {
    const Table& target = this->table(tr.target);
    std::array<std::uint8_t, kMaxPieces> child{};
    for (int j = 0; j < target.n; ++j) {
      const int from = tr.from[static_cast<std::size_t>(j)];
      int q = from < 0 || static_cast<std::size_t>(from) == mover
                  ? to
                  : sq[static_cast<std::size_t>(from)];
      child[static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(tr.flip ? q ^ 56 : q);
    }
    const Color to_move = tr.flip ? side : opposite(side);
    return (to_move == black ? target.indexer->size() : 0) +
           target.indexer->rank(child.data(), used);
  };
  // The segment a transition leads into: its DTM twin where this segment is one (a table's
  // transitions name the DTZ segments).
  auto segment = [&](const Transition& tr) { return dtm ? tr.target + tables() : tr.target; };
  auto child_byte = [&](const Transition& tr, Color side,
                        const std::array<std::uint8_t, kMaxPieces>& sq, int to, std::size_t mover) {
    return tr.target < 0 ? 0 : lower(segment(tr), child_index(tr, side, sq, to, mover));
  };
  // retra's slots' squares of a sweep position.
  auto slot_squares = [&](const sweep::Pos& p) {
    std::array<int, 7> placed{p.wk, p.bk, p.sq[0], p.sq[1], p.sq[2], 0, 0};
    placed[static_cast<std::size_t>(top.m + 2)] = p.pawn;
    placed[static_cast<std::size_t>(top.m + 3)] = p.pawn2;
    if (top.pawns() == 3) placed[static_cast<std::size_t>(top.m + 4)] = p.pawn3;
    std::array<std::uint8_t, kMaxPieces> sq{};
    for (std::size_t k = 0; k < of.size(); ++k)
      sq[k] = static_cast<std::uint8_t>(placed[static_cast<std::size_t>(of[k])]);
    return sq;
  };
  const Color pc = top.pawn_colour;
  // The (first) pawn's step.
  const int dir = pc == white ? 8 : -8;
  if (top.pawned()) {
    of = sweep::piece_of_slot(top, table.slots, false);
    for (std::size_t k = 0; k < of.size(); ++k) slot_of[static_cast<std::size_t>(of[k])] = k;
    for (int k = 0; k < top.pawns(); ++k)
      ps[static_cast<std::size_t>(k)] = slot_of[static_cast<std::size_t>(top.m + 2 + k)];
    // The bytes kept of the segment `steps` ranks ahead, which push `tr` of pawn k leads into
    // (one reader fewer left for them in the map: the last takes them out), where they fit the
    // memory left and agree with lower on a sample of pushes (they always should: a build reads
    // the segment the sweep just wrote; a caller handing other values through lower, as a test
    // may, drops them).
    auto take = [&](int k, const Transition& tr, int steps) {
      std::shared_ptr<const LargeArray<std::uint8_t>> kept;
      const Color c = top.colour_of_pawn(k);
      const int step = c == white ? 8 : -8;
      if (!top.keeps_place(k, steps) || tr.target < 0 || tr.flip) return kept;
      {
        std::lock_guard lock(pushes_mutex_);
        if (auto it = pushes_.find(2 * segment(tr) + c); it != pushes_.end()) {
          kept = it->second.bytes;
          if (--it->second.readers == 0) pushes_.erase(it);
        }
      }
      if (!kept || kept->size() != top.size || bytes + kept->size() > limits.spare_bytes)
        return decltype(kept){};
      bytes += kept->size();
      for (std::uint64_t i = 0, checked = 0; i < top.size && checked < 4096;
           i += top.size / 65536 + 1) {
        const std::uint8_t x = (*kept)[i];
        if (x == (dtm ? sweep::kDtmIllegal : static_cast<std::uint8_t>(sweep::Reach::none)))
          continue;
        sweep::Pos p = sweep::decode(top, i);
        int& moved = p.pawn_at(k);
        moved += steps * step;  // the child's pawn
        const int b = child_byte(tr, c, slot_squares(p), moved, ps[static_cast<std::size_t>(k)]);
        if (dtm ? b != x : sweep::reach_of_byte(b) != static_cast<sweep::Reach>(x))
          return decltype(kept){};
        ++checked;
      }
      return kept;
    };
    for (int k = 0; k < top.pawns(); ++k) {
      const auto u = static_cast<std::size_t>(k);
      const std::size_t mover = ps[u];
      ahead[u] = take(k, table.push[mover][0], 1);
      if (top.rank_of_pawn(k) == (top.colour_of_pawn(k) == white ? 1 : 6))
        ahead2[u] = take(k, table.push[mover][1], 2);
    }
    top.push_reach = ahead[0] ? ahead[0]->data() : nullptr;
    top.push_reach2 = ahead[1] ? ahead[1]->data() : nullptr;
    top.push_reach3 = ahead[2] ? ahead[2]->data() : nullptr;
    for (std::size_t k = 0; k < 3; ++k) kept_pushes += (ahead[k] ? 1 : 0) + (ahead2[k] ? 1 : 0);
    // Promotion k of a run's positions: their indices first, then their lookups (kings and a
    // pawn alone have no runs: pawn_moves promotes there).
    if (top.m > 0 && top.pawns() == 1 && top.pawn_rank == (pc == white ? 6 : 1))
      top.promote_run = [&](Color side, const sweep::Pos& run, int k, std::uint64_t squares,
                            std::uint8_t* out) {
        const Transition& tr = table.promote[ps[0]][static_cast<std::size_t>(k)];
        const int one = run.pawn + dir;
        assert(tr.target >= 0);  // a promotion leaves more than the kings
        std::array<std::uint8_t, kMaxPieces> sq = slot_squares(run);
        const std::size_t ls = slot_of[static_cast<std::size_t>(top.m + 1)];  // the last piece's
        std::array<std::uint64_t, 64> at;
        int n = 0;
        for (std::uint64_t b = squares; b; b &= b - 1) {
          sq[ls] = static_cast<std::uint8_t>(std::countr_zero(b));
          at[static_cast<std::size_t>(n++)] = child_index(tr, side, sq, one, ps[0]);
        }
        n = 0;
        for (std::uint64_t b = squares; b; b &= b - 1) {
          const int x = lower(segment(tr), at[static_cast<std::size_t>(n++)]);
          out[std::countr_zero(b)] =
              static_cast<std::uint8_t>(dtm ? x : static_cast<int>(sweep::reach_of_byte(x)));
        }
      };
    // The pawns' moves read their children through lower, as the generic kernels do (the same
    // transitions): one rank of the indexer and one lookup per move, a few per position of a
    // pawn's side, but for the pushes kept in `ahead` and `ahead2` and the first promotion
    // (promote_run). Only a move that leaves the mover's king safe is legal.
    top.pawn_moves = [&](Color side, std::uint64_t idx, const sweep::Pos& p,
                         sweep::Conversions& c) {
      const Color them = opposite(side);
      // retra's squares, worked out only for a move read through lower: with the pushes kept
      // from the segment ahead, most positions have none (building them byte by byte, for every
      // position, stalled on store forwarding: half of this callback's time in KRPvKR).
      std::array<std::uint8_t, kMaxPieces> sq{};
      bool placed = false;
      auto squares = [&]() -> const std::array<std::uint8_t, kMaxPieces>& {
        if (!placed) {
          sq = slot_squares(p);
          placed = true;
        }
        return sq;
      };
      const int last = side == white ? 7 : 0;
      const int step = side == white ? 8 : -8, home = side == white ? 1 : 6;
      for (int k = 0; k < top.pawns() && !c.wins; ++k) {
        if (top.colour_of_pawn(k) != side) continue;
        const int from = p.pawn_at(k);
        // Whether a pawn of theirs stands beside square q (to take a double push en passant).
        auto theirs_beside = [&](int q) {
          for (int j = 0; j < top.pawns(); ++j)
            if (top.colour_of_pawn(j) == them && beside(p.pawn_at(j), q)) return true;
          return false;
        };
        const std::size_t mover = ps[static_cast<std::size_t>(k)];
        auto safe = [&](int to) { return sweep::pawn_move_safe(top, p, side, to, from); };
        auto see = [&](const Transition& tr, int to) {
          sweep::add_byte(c, child_byte(tr, side, squares(), to, mover));
        };
        const int one = from + step;
        // (Where the push is kept, the captures phase made it, from `ahead`; where it promotes,
        // from promote_run.)
        const bool promotes = rank_of(one) == last;
        const bool kept = top.kept_push(k) != nullptr;
        if (!(p.occ & bit(one)) && (promotes ? !top.promote_run : !kept) && safe(one)) {
          if (promotes)
            for (std::size_t q = 0; q < 4 && !c.wins; ++q) see(table.promote[mover][q], one);
          else
            see(table.push[mover][0], one);
        }
        const int two = one + step;
        if (!c.wins && rank_of(from) == home && !(p.occ & bit(one)) && !(p.occ & bit(two)) &&
            safe(two)) {
          const Transition& tr = table.push[mover][1];
          const auto& kept2 = ahead2[static_cast<std::size_t>(k)];
          if (theirs_beside(two)) {
            // Their pawn beside the pushed one may take it en passant: the child is the virtual
            // one that weighs that capture (Game::virtual_value), read through lower as the
            // generic kernels read it, the pushed pawn's square as the child's representative
            // shows it.
            int used = 0;
            const std::uint64_t at = child_index(tr, side, squares(), two, mover, &used);
            const int shown = transform(used, tr.flip ? two ^ 56 : two);
            const std::uint64_t packed =
                std::uint64_t{static_cast<std::uint32_t>(segment(tr))} << 46 |
                std::uint64_t{static_cast<std::uint32_t>(shown)} << 40 | at;
            sweep::add_byte(c, lower(kEnPassant, packed));
          } else if (kept2) {
            sweep::add_kept(c, (*kept2)[idx]);
          } else {
            see(tr, two);
          }
        }
        // Captures: of their pieces, and of their pawns.
        auto capture = [&](int to, std::size_t vs) {
          if (!(pawn_attacks(side, from) & bit(to)) || !safe(to)) return;
          if (rank_of(to) == last)
            for (std::size_t q = 0; q < 4 && !c.wins; ++q)
              see(table.capture_promote[mover][vs][q], to);
          else
            see(table.pawn_capture[mover][vs], to);
        };
        for (int i = 0; i < top.m && !c.wins; ++i) {
          const auto u = static_cast<std::size_t>(i);
          if (top.colour[u] == them) capture(p.sq[u], slot_of[u + 2]);  // the victim's slot
        }
        for (int j = 0; j < top.pawns() && !c.wins; ++j)
          if (top.colour_of_pawn(j) == them)
            capture(p.pawn_at(j), slot_of[static_cast<std::size_t>(top.m + 2 + j)]);
      }
    };
  }
  sweep::SolveOptions so;
  so.progress = options.progress;
  so.label = options.label;
  sweep::SolveTimes times;
  auto solved = sweep::solve(top, so, &times);
  if (!solved) return std::move(solved).error();
  if (!*solved) return std::nullopt;  // distances beyond kMaxPlies
  subs.clear();
  // The bytes kept of the segments ahead become this one's, where no one else holds them (the
  // map does while a double push still needs them): every byte is written below, so a new
  // array's page faults are saved (0.04 s a segment of KRPvKR). A new one is mapped, not a
  // vector, whose zeroing took a fault per 4 KiB page on one thread.
  std::vector<std::shared_ptr<LargeArray<std::uint8_t>>> spares;
  for (auto& a : ahead)
    if (a && a.use_count() == 1 && a->size() == top.size)
      spares.push_back(std::const_pointer_cast<LargeArray<std::uint8_t>>(std::move(a)));
  top.push_reach = top.push_reach2 = top.push_reach3 = nullptr;
  for (auto& a : ahead) a.reset();
  for (auto& a : ahead2) a.reset();
  // For the segments behind, per colour c: what a push of a pawn of c into each position of
  // the side not to move here leads to (by the pusher's colour in the map), one array for all
  // of them. Its readers: the segment a rank behind each such pawn, and two ranks behind where
  // that is the pawn's start rank (a double push), where the pawn keeps its place there.
  for (const Color c : {white, black}) {
    int readers = 0;
    for (int k = 0; k < top.pawns(); ++k) {
      if (top.colour_of_pawn(k) != c) continue;
      readers += top.keeps_place(k, -1);
      readers += top.rank_of_pawn(k) == (c == white ? 3 : 4) && top.keeps_place(k, -2);
    }
    if (readers == 0) continue;
    int more = 0;
    const bool room = pushes_room(bytes + top.size, limits.spare_bytes, nullptr, &more);
    dropped += more;
    if (!room) continue;
    std::shared_ptr<LargeArray<std::uint8_t>> kept;
    if (!spares.empty()) {
      kept = std::move(spares.back());
      spares.pop_back();
    } else {
      auto a = LargeArray<std::uint8_t>::allocate(top.size, top.huge_pages);
      if (!a) return std::move(a).error();
      kept = std::make_shared<LargeArray<std::uint8_t>>(std::move(*a));
    }
    const Color them = opposite(c);
    // By a table of the codes where they count from base 0, as they mostly do: the child's
    // Reach, or its DTM byte.
    std::array<std::uint8_t, 256> reach{};
    if (top.base == 0)
      for (int x = 0; x < 256; ++x) {
        const auto u = static_cast<std::uint8_t>(x);
        reach[static_cast<std::size_t>(x)] =
            dtm ? (u == sweep::kIllegal ? sweep::kDtmIllegal : sweep::stored_dtm_byte(u))
                : static_cast<std::uint8_t>(u == sweep::kIllegal
                                                ? sweep::Reach::none
                                                : sweep::reach_of_byte(sweep::stored_byte(u)));
      }
    const std::uint8_t* v = top.v[them].data();
    std::uint8_t* to = kept->data();
    if (top.base == 0) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::uint64_t idx = 0; idx < top.size; ++idx) to[idx] = reach[v[idx]];
    } else {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::uint64_t idx = 0; idx < top.size; ++idx)
        to[idx] = dtm ? sweep::dtm_byte_of(top, them, idx)
                      : static_cast<std::uint8_t>(sweep::reach_of(top, them, idx));
    }
    std::lock_guard lock(pushes_mutex_);
    pushes_[2 * s + c] = {std::move(kept), readers, ++pushes_age_};
  }
  std::uint64_t held = 0;
  pushes_room(0, limits.spare_bytes, &held);
  const auto converting = Clock::now();
  kernels::OwnKernelRun run;
  run.kernel = "sweep";
  run.levels = top.plies;
  run.far = sweep::to_segment(top, *table.indexer, values, options.holes);
  run.holes_marked = options.holes != nullptr;
  const double convert_seconds = std::chrono::duration<double>(Clock::now() - converting).count();
  run.stats = {{"plies", top.plies},
               {"longest", top.longest},
               {"rebased_at", top.base},
               {"kept_pushes", kept_pushes},
               {"kept_bytes_held", static_cast<double>(held)},
               {"kept_dropped", dropped},
               {"planned_bytes", static_cast<double>(planned)},
               {"subtables_seconds", load_seconds},
               {"illegal_seconds", times.illegal},
               {"captures_seconds", times.captures},
               {"mates_seconds", times.mates},
               {"plies_seconds", times.plies},
               {"convert_seconds", convert_seconds}};
  return run;
}

}  // namespace retra::chess
