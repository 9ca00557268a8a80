// Backward retrograde analysis (Allis; Fang, CG 2000, section 3.1; Romein & Bal) with
// unknown-children counters and level-synchronous frontiers, one code path for score,
// distance-to-mate and win/draw/loss values. A position is touched only when one of its children
// is decided, instead of once per sweep as in forward iteration.
//
// Thread safety and determinism: frontiers are processed in parallel; counters are decremented
// and positions claimed with atomic operations on the state cells. The value a position gets
// depends only on the stage and level in which it is decided, never on which thread decides it or
// in what order, and within a level the decided set is a least fixed point, so the output is
// identical for any thread count (tests/backward_kernel_test.cpp). docs/ARCHITECTURE.md explains
// the stages.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"
#include "retra/game.hpp"
#include "src/memory.hpp"

namespace retra::kernels {

using BackwardOptions = KernelOptions;

struct BackwardStats {
  int stages = 0;                  // score: thresholds that had work; dtm/wdl: 1
  int levels = 0;                  // frontiers processed, over all stages
  std::uint64_t decided = 0;       // positions decided by propagation (the rest are 0 / draws)
  std::uint64_t max_frontier = 0;  // largest frontier (memory: 8 bytes per entry)
  std::uint64_t predecessors = 0;  // unmoves generated
  int counter_bits = 0;            // width of the unknown-children counter used
  double init_seconds = 0, propagate_seconds = 0;
  double scan_seconds = 0;  // part of propagate_seconds spent in seed scans
  // Checkpoints (KernelOptions::checkpoints): saved by this run and the seconds they took; the
  // level this run resumed at (-1: it started from the beginning) and what was decided by then.
  int checkpoints = 0;
  double checkpoint_seconds = 0;
  int resumed_level = -1;
  std::uint64_t resumed_decided = 0;
  // The progress label of that level, e.g. "20 stones: threshold 3 level 0".
  std::string resumed_at;
  // Partitions (KernelOptions::partitions, or out of core the partitions it chose; 0: none) and
  // the bytes of updates spilled to storage out of core.
  std::uint64_t partitions = 0;
  std::uint64_t spilled_bytes = 0;
  // Out of core: the bytes the threads' slots read from storage and wrote back to it (counters
  // and values of the blocks a level's updates target; values only of blocks where one changed).
  std::uint64_t slot_read_bytes = 0, slot_written_bytes = 0;
  // Out of core: the most bytes the update buckets held allocated at once (their vectors'
  // capacities, all threads together): OutOfCore::batch_bytes() at most, unless that is less
  // than one update a bucket.
  std::uint64_t batch_peak_bytes = 0;
  // Out of core: the rounds the levels took (a level is one round unless its spilled updates
  // would pass OutOfCore::spill_budget()) and the most storage the run held at once.
  std::uint64_t spill_rounds = 0;
  std::uint64_t disk_peak_bytes = 0;
  // Distances beyond a byte (kinds whose rules allow them, Rules<K>::kFarLevel): the positions
  // whose value is a far code, as (index, code) in index order. Their byte holds the kind's
  // clamped code (dtz: 253 for a win, 254 for a loss, which alone mean exactly 126 plies).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> far;
  // Whether KernelOptions::holes now marks every hole of the segment.
  bool holes_marked = false;
};

namespace bw {

// Per position the kernel keeps its value byte and a state cell (two arrays: interleaving them,
// so that an update touches one cache line instead of two, measured no faster, because both lines
// are prefetched together; docs/PERFORMANCE.md). The cell is one byte, or two when the game
// declares positions with more moves than 7 bits count (Game concept, kMaxMoves):
//
//   state cell (Cell = uint8_t):  bit 7 decided | bits 0-6 unknown children
//   state cell (Cell = uint16_t): bit 15 decided | bits 0-14 unknown children
//
// decided: values[i] is final. Unknown children: non-converting moves whose child is not yet known
// to be good for the opponent (score: in W_k; dtm/wdl: a win). A converting move to a draw adds a
// permanent 1, so such a position never becomes a loss.
// values[i] while undecided: what the converting moves guarantee (Rules<K>::initial).
template <class Cell>
struct CellBits {
  static_assert(std::is_same_v<Cell, std::uint8_t> || std::is_same_v<Cell, std::uint16_t>);
  static constexpr Cell kDecided = static_cast<Cell>(Cell{1} << (8 * sizeof(Cell) - 1));
  static constexpr Cell kCounter = static_cast<Cell>(kDecided - 1);
};

inline constexpr int kNoExit = -128;
// Frontier entries: the position packed into 63 bits when the game can (HasPacking), else its
// index; the top bit is set when the position is lost for its mover, so that expanding it needs
// no random read of its value (and, packed, no unranking either).
inline constexpr std::uint64_t kLossBit = 1ull << 63;

// What the converting moves of one position guarantee, folded during initialization.
struct Exits {
  int best = kNoExit;  // score: best capture value
  static constexpr int kNoWin = 1 << 20;
  int win = kNoWin;   // dtm, dtz: fastest win through a conversion; wdl: 1 if a conversion wins
  int floor = 0;      // dtm: the loss value the conversions force at least
  bool draw = false;  // a conversion to a draw: the position can never lose
};

// Seeds of a (stage, level): undecided positions whose byte equals the win code, or the loss code
// when no unknown child is left. A negative code matches nothing.
struct SeedCodes {
  int win, loss;
};

// Everything in which the value kinds differ; the kernel itself is written once.
//   fold(e, gain, child, dtc)  accumulate one converting move into child (its stored value)
//   initial(e, overflow)       the byte stored while undecided (sets *overflow when a distance
//                              cannot be stored)
//   stage_list(g, seg)         the stages (score: thresholds bound..1; others: one)
//   stage_has_seeds(hist, k)   whether stage k can seed anything at all
//   seed_level(byte)           kinds that seed every level: the level an initial byte seeds at
//   kFirstLevel, kSeedsEveryLevel, kMaxLevel
//   seeds(k, d), is_loss(v), win_value(k, d), loss_ready(v, k, d), loss_value(k, d)
//   phase(label, k, d)         the progress bar's label of a level
template <ValueKind K>
struct Rules;

// Score: stage k = bound..1 computes W_k (mover forces >= k) and L_k (mover cannot avoid
// <= -k) as attractors; members of W_k \ W_{k+1} get k, of L_k \ L_{k+1} get -k.
template <>
struct Rules<ValueKind::score> {
  static constexpr bool kSeedsEveryLevel = false;
  static constexpr int kFirstLevel = 0;
  static constexpr int kMaxLevel = INT_MAX;
  static void fold(Exits& e, int gain, int child, bool) { e.best = std::max(e.best, gain - child); }
  static int initial(const Exits& e, bool*) { return e.best; }
  template <class G>
  static std::vector<int> stage_list(const G& g, const typename G::SegmentId& seg) {
    std::vector<int> s;
    for (int k = g.score_bound(seg); k >= 1; --k) s.push_back(k);
    return s;
  }
  // Without a seed at threshold k nothing can join W_k or L_k.
  static bool stage_has_seeds(const std::array<std::uint64_t, 256>& hist, int k) {
    return hist[static_cast<std::uint8_t>(k)] || hist[static_cast<std::uint8_t>(-k)];
  }
  static int val(std::uint8_t v) { return static_cast<std::int8_t>(v); }
  static SeedCodes seeds(int k, int) { return {k, static_cast<std::uint8_t>(-k)}; }
  static bool is_loss(std::uint8_t v) { return val(v) < 0; }
  static std::uint8_t win_value(int k, int) { return static_cast<std::uint8_t>(k); }
  static bool loss_ready(std::uint8_t v, int k, int) { return val(v) <= -k; }
  static std::uint8_t loss_value(int k, int) { return static_cast<std::uint8_t>(-k); }
  static std::string phase(const std::string& label, int k, int d) {
    return fmt::format("{}: threshold {} level {}", label, k, d);
  }
};

// Distance to mate (Fang's Table 1): one stage; the frontier of level d holds the positions whose
// value is d. A child lost for its mover at level d makes its parents wins in d + 1; a parent
// whose last unknown child is decided as a win at level d loses in 1 + max(children) =
// max(d + 1, its converting floor), so it waits for the level of its floor if that is higher.
// With dtc (distance to conversion, Fang 3.3) a conversion into a loss is a win now (1), into a
// win a loss (2). Mated is the byte the game gives a mated position (Game::kMatedCode): 2 in
// Fang's encoding, where 1 is capturing the king and losses are even; 1 in games without a king
// capture, where losses are odd and a byte reaches one ply further (254 plies).
template <int Mated>
struct DtmRules {
  static_assert(Mated == 1 || Mated == 2);
  static constexpr bool kSeedsEveryLevel = true;
  static constexpr int kFirstLevel = 1;
  static constexpr int kMaxCode = 256 - Mated;    // 2: 254 (255 reserved); 1: 255
  static constexpr int kMaxLevel = kMaxCode - 1;  // whose parents get the last code
  static constexpr bool loses(int v) { return v != 0 && ((v ^ Mated) & 1) == 0; }
  static void fold(Exits& e, int, int child, bool dtc) {
    assert(!dtc || Mated == 2);  // conversion codes 1 and 2 are Fang's
    if (child == 0)
      e.draw = true;
    else if (!loses(child))
      e.floor = std::max(e.floor, dtc ? 2 : child + 1);
    else
      e.win = std::min(e.win, dtc ? 1 : child + 1);
  }
  static int initial(const Exits& e, bool* overflow) {
    const int v = e.win != Exits::kNoWin ? e.win : e.floor;
    if (v > kMaxCode) {
      *overflow = true;
      return 0;
    }
    return v;
  }
  template <class G>
  static std::vector<int> stage_list(const G&, const typename G::SegmentId&) {
    return {0};
  }
  static bool stage_has_seeds(const std::array<std::uint64_t, 256>&, int) { return true; }
  static int seed_level(int v) { return v >= 1 ? v : -1; }
  static SeedCodes seeds(int, int d) { return loses(d) ? SeedCodes{-1, d} : SeedCodes{d, -1}; }
  static bool is_loss(std::uint8_t v) { return loses(v); }
  static std::uint8_t win_value(int, int d) { return static_cast<std::uint8_t>(d + 1); }
  static bool loss_ready(std::uint8_t v, int, int d) { return v <= d + 1; }
  static std::uint8_t loss_value(int, int d) { return static_cast<std::uint8_t>(d + 1); }
  static std::string phase(const std::string& label, int, int d) {
    return fmt::format("{}: level {}", label, d);
  }
};
template <>
struct Rules<ValueKind::dtm> : DtmRules<2> {};

// Distance to zeroing under the 50-move rule (ValueKind::dtz): one stage; the frontier of level d
// holds the positions decided with d plies to the next zeroing move, wins coded 2d + 1, losses
// 2d + 2, so that unlike distance to mate a win may come at an even distance (the loser's forced
// conversion into a lost position) and a loss at an odd one. A conversion zeroes the clock: into
// a position lost for its mover it wins now (level 1), or, when that loss lies beyond the
// 100-ply horizon, only as a cursed win (level 101); into a won position it loses now (1 or
// 101); into a draw it is an escape. Levels above 100 are the cursed wins and blessed losses.
template <>
struct Rules<ValueKind::dtz> {
  static constexpr int kHorizon = 100;  // plies: the 50-move rule
  static constexpr bool kSeedsEveryLevel = true;
  static constexpr int kFirstLevel = 0;  // the mated positions
  // Distances of 127 plies and more (cursed wins and blessed losses of tables such as KBBvKN) do
  // not fit a byte: their byte holds 253 or 254 (the codes of 126 plies), and the run lists the
  // exact codes (BackwardStats::far). Levels beyond kMaxLevel are refused.
  static constexpr int kFarLevel = 127;
  static constexpr int kMaxLevel = 32000;
  static constexpr int win_code(int d) { return 2 * d + 1; }
  static constexpr int loss_code(int d) { return 2 * d + 2; }
  static constexpr std::uint8_t byte_of(int code) {
    return static_cast<std::uint8_t>(code < 253 ? code : (code & 1) ? 253 : 254);
  }
  static void fold(Exits& e, int, int child, bool) {
    if (child == 0)
      e.draw = true;
    else if (child & 1)  // the child's mover wins
      e.floor = std::max(e.floor, (child - 1) / 2 <= kHorizon ? 1 : kHorizon + 1);
    else
      e.win = std::min(e.win, (child - 2) / 2 <= kHorizon ? 1 : kHorizon + 1);
  }
  static int initial(const Exits& e, bool*) {
    if (e.win != Exits::kNoWin) return win_code(e.win);
    return e.floor ? loss_code(e.floor) : 0;
  }
  template <class G>
  static std::vector<int> stage_list(const G&, const typename G::SegmentId&) {
    return {0};
  }
  static bool stage_has_seeds(const std::array<std::uint64_t, 256>&, int) { return true; }
  static int seed_level(int v) { return v < 2 ? -1 : (v & 1) ? (v - 1) / 2 : (v - 2) / 2; }
  static SeedCodes seeds(int, int d) { return {win_code(d), loss_code(d)}; }
  static bool is_loss(std::uint8_t v) { return v >= 2 && !(v & 1); }
  static std::uint8_t win_value(int, int d) { return byte_of(win_code(d + 1)); }
  // A position with a winning conversion never loses; otherwise it loses once the level has
  // reached what its losing conversions force.
  static bool loss_ready(std::uint8_t v, int, int d) {
    if (v & 1) return false;
    return (v ? (v - 2) / 2 : 0) <= d + 1;
  }
  static std::uint8_t loss_value(int, int d) { return byte_of(loss_code(d + 1)); }
  static std::string phase(const std::string& label, int, int d) {
    return fmt::format("{}: level {}", label, d);
  }
};

// Win/draw/loss: one stage, seeds at the start, no distances.
template <>
struct Rules<ValueKind::wdl> {
  static constexpr bool kSeedsEveryLevel = false;
  static constexpr int kFirstLevel = 0;
  static constexpr int kMaxLevel = INT_MAX;
  static void fold(Exits& e, int, int child, bool) {
    if (child == 0)
      e.draw = true;
    else if (child == 2)
      e.win = 1;
  }
  static int initial(const Exits& e, bool*) { return e.win == 1 ? 1 : 2; }
  template <class G>
  static std::vector<int> stage_list(const G&, const typename G::SegmentId&) {
    return {0};
  }
  static bool stage_has_seeds(const std::array<std::uint64_t, 256>&, int) { return true; }
  static SeedCodes seeds(int, int) { return {1, 2}; }
  static bool is_loss(std::uint8_t v) { return v == 2; }
  static std::uint8_t win_value(int, int) { return 1; }
  static bool loss_ready(std::uint8_t, int, int) { return true; }
  static std::uint8_t loss_value(int, int) { return 2; }
  static std::string phase(const std::string& label, int, int d) {
    return fmt::format("{}: level {}", label, d);
  }
};

template <class Cell>
inline Cell load(const Cell& x) {
  return std::atomic_ref<const Cell>(x).load(std::memory_order_relaxed);
}
template <class Cell>
inline void store(Cell& x, Cell v) {
  std::atomic_ref<Cell>(x).store(v, std::memory_order_relaxed);
}
// Claims an undecided position; true for exactly one caller.
template <class Cell>
inline bool claim(Cell& st) {
  return !(std::atomic_ref<Cell>(st).fetch_or(CellBits<Cell>::kDecided, std::memory_order_relaxed) &
           CellBits<Cell>::kDecided);
}

// A level's frontier. In memory: address space for every position of the segment (a position
// enters a frontier once in a run), whose pages are taken as entries arrive and given back when
// the frontier is cleared, so that it holds what it holds; or, where that address space cannot
// be had, a vector. Out of core: an array mapped from storage with the same room, written
// through storage (OutOfCore::write), its pages never mapped in. Mapped either way, many threads
// append at once (concurrent()); a vector has one writer, gather().
class Frontier {
 public:
  // In memory: address space for `room` entries, grown as needed (LargeArray::grow) up to
  // `capacity`, and shrunk back to `room` once consumed; false where it cannot be had, and the
  // frontier stays a vector.
  bool reserve(std::uint64_t capacity, std::uint64_t room) {
    room = std::clamp<std::uint64_t>(room, 1, std::max<std::uint64_t>(1, capacity));
    auto a = LargeArray<std::uint64_t>::reserve(room);
    if (!a || a->empty()) return false;
    anon_ = std::move(*a);
    mapped_ = anon_.data();
    concurrent_ = true;
    capacity_ = room;
    limit_ = capacity;
    room_ = room;
    return true;
  }
  void map(std::span<std::uint8_t> storage, kernels::OutOfCore* ooc) {
    mapped_ = reinterpret_cast<std::uint64_t*>(storage.data());
    concurrent_ = true;
    capacity_ = storage.size() / sizeof(std::uint64_t);
    ooc_ = ooc;
  }
  // Threads may append at once.
  // (Not mapped_, which a growth moves while others append.)
  bool concurrent() const { return concurrent_; }
  std::uint64_t size() const {
    return concurrent_ ? n_.load(std::memory_order_relaxed) : vec_.size();
  }
  bool empty() const { return size() == 0; }
  std::uint64_t* data() { return concurrent_ ? mapped_ : vec_.data(); }
  // The entries are consumed: their memory or storage goes back (out of core OutOfCore::discard;
  // where it cannot, the run goes on holding it: more disk, the same values).
  void clear() {
    if (!concurrent_) return vec_.clear();
    const std::uint64_t n = n_.exchange(0, std::memory_order_relaxed);
    if (!ooc_) {
      // Grown past its room: back to it (address space counts under ulimit -v).
      if (capacity_ > room_) {
        anon_.shrink(room_);
        capacity_ = room_;
      }
      return anon_.discard(n);  // (it stops at the room)
    }
    if (reserved_.load(std::memory_order_relaxed) > 0 && ooc_->discard(mapped_))
      reserved_.store(0, std::memory_order_relaxed);
  }
  // In memory: gives back the pages below entry `upto` (whole huge pages: LargeArray::
  // discard_below), whose entries are read; those from `upto` on stay. A vector or a frontier
  // out of core has no anon_ to give back from.
  void give_back(std::uint64_t upto) { anon_.discard_below(upto); }
  // On an empty frontier (a snapshot's restored). False when n passes the room (a snapshot from
  // elsewhere), or its address space (in memory) or storage (out of core) cannot be had.
  bool resize(std::uint64_t n) {
    assert(empty());
    if (!concurrent_) {
      vec_.resize(n);
      return true;
    }
    if (n > capacity_) {
      if (ooc_ || n > limit_) return false;
      if (!grow(n)) {
        error_.reset();  // a refused snapshot, not a failed run: restore() starts afresh
        return false;
      }
    }
    if (ooc_) {
      if (Status st = ooc_->reserve(mapped_, n * sizeof(std::uint64_t)); !st) return false;
      reserved_.store(std::max(reserved_.load(), n * sizeof(std::uint64_t)));
    }
    n_.store(n, std::memory_order_relaxed);
    return true;
  }
  // Thread-safe when mapped (a vector has one writer: gather()). In memory past the room, the
  // first thread to need more grows it while the others wait (a growth may move the mapping,
  // so every copy into it holds the lock shared); a growth that fails (ulimit -v) drops the
  // entries and is kept for error(). Out of core the storage is
  // reserved ahead in steps of a quarter more and a megabyte (at most 1.25 times the entries'
  // bytes and a megabyte: the plan's disk figure counts on it); a failed reservation or write (a
  // full disk) drops the entries and is kept for error(), which the kernel checks after every
  // level.
  void append(const std::vector<std::uint64_t>& v) {
    if (v.empty()) return;
    if (!concurrent_) {
      vec_.insert(vec_.end(), v.begin(), v.end());
      return;
    }
    const std::uint64_t at = n_.fetch_add(v.size(), std::memory_order_relaxed);
    if (!ooc_) {
      const std::uint64_t end = at + v.size();
      assert(end <= limit_);
      for (;;) {
        {
          std::shared_lock lock(grow_mu_);
          if (end <= capacity_) {
            std::memcpy(mapped_ + at, v.data(), v.size() * sizeof(std::uint64_t));
            return;
          }
        }
        std::unique_lock lock(grow_mu_);
        if (end > capacity_ && !grow(std::min(limit_, std::max(end, capacity_ + capacity_ / 4))))
          return;
      }
    }
    assert(at + v.size() <= capacity_);
    const std::uint64_t need = (at + v.size()) * sizeof(std::uint64_t);
    if (need > reserved_.load(std::memory_order_acquire)) {
      std::lock_guard lock(reserve_mu_);
      const std::uint64_t have = reserved_.load(std::memory_order_relaxed);
      if (need > have) {
        const std::uint64_t want = std::min(capacity_ * sizeof(std::uint64_t),
                                            std::max(need, have + have / 4 + (1u << 20)));
        if (Status st = ooc_->reserve(mapped_, want); !st) {
          if (!error_) error_ = std::move(st).error();
          return;
        }
        reserved_.store(want, std::memory_order_release);
      }
    }
    // Through storage, not the mapping (OutOfCore::write): its pages are never faulted in.
    Status st = ooc_->write(mapped_ + at, {reinterpret_cast<const std::uint8_t*>(v.data()),
                                           v.size() * sizeof(std::uint64_t)});
    if (!st) {
      std::lock_guard lock(reserve_mu_);
      if (!error_) error_ = std::move(st).error();
    }
  }
  // In memory, with grow_mu_ held (or one thread alone): room for n entries; false, the error
  // kept, where the address space cannot be had.
  bool grow(std::uint64_t n) {
    if (Status st = anon_.grow(n); !st) {
      if (!error_)
        error_ = Error(Errc::resource,
                       fmt::format("a frontier of {} entries does not fit the address space ({}): "
                                   "raise ulimit -v or -d, or pass a smaller --memory, which "
                                   "leaves more of it free",
                                   n, st.error().message()));
      return false;
    }
    mapped_ = anon_.data();
    capacity_ = n;
    return true;
  }
  // The first failed reservation or write, once the appending threads are done.
  const std::optional<Error>& error() const { return error_; }
  // Appends per-thread vectors and empties them.
  void gather(std::vector<std::vector<std::uint64_t>>& parts) {
    if (!concurrent_) {
      std::size_t n = vec_.size();
      for (const auto& p : parts) n += p.size();
      vec_.reserve(n);
    }
    for (auto& p : parts) {
      append(p);
      p.clear();
    }
  }
  void swap(Frontier& o) noexcept {
    vec_.swap(o.vec_);
    std::swap(limit_, o.limit_);
    std::swap(room_, o.room_);
    std::swap(anon_, o.anon_);
    std::swap(mapped_, o.mapped_);
    std::swap(concurrent_, o.concurrent_);
    std::swap(capacity_, o.capacity_);
    std::swap(ooc_, o.ooc_);
    std::swap(error_, o.error_);
    auto swap_atomic = [](std::atomic<std::uint64_t>& a, std::atomic<std::uint64_t>& b) {
      const std::uint64_t x = a.load(std::memory_order_relaxed);
      a.store(b.load(std::memory_order_relaxed), std::memory_order_relaxed);
      b.store(x, std::memory_order_relaxed);
    };
    swap_atomic(n_, o.n_);
    swap_atomic(reserved_, o.reserved_);
  }

 private:
  std::vector<std::uint64_t> vec_;
  LargeArray<std::uint64_t> anon_;  // in memory: the address space mapped_ points into
  std::uint64_t* mapped_ = nullptr;
  bool concurrent_ = false;     // mapped_ is set: in memory or out of core, not a vector
  std::uint64_t capacity_ = 0;  // entries with address space (out of core: storage) behind
  std::uint64_t limit_ = 0;     // in memory: what capacity_ may grow to
  std::uint64_t room_ = 0;      // in memory: what capacity_ starts at, and goes back to
  std::shared_mutex grow_mu_;   // in memory: a growth excludes the copies into the mapping
  std::atomic<std::uint64_t> n_{0};
  kernels::OutOfCore* ooc_ = nullptr;
  std::atomic<std::uint64_t> reserved_{0};  // out of core: bytes with storage behind them
  std::mutex reserve_mu_;
  std::optional<Error> error_;
};

// The counter cell a game needs: one byte unless it declares positions with more moves than
// seven bits count (one is reserved for a conversion into a draw).
template <class G>
constexpr int max_moves() {
  if constexpr (requires { G::kMaxMoves; })
    return G::kMaxMoves;
  else
    return 126;
}
// The rules of kind K for game G: distance to mate depends on the byte of a mated position.
template <class G>
constexpr int mated_code() {
  if constexpr (requires { G::kMatedCode; })
    return G::kMatedCode;
  else
    return 2;
}
template <class G, ValueKind K>
using RulesFor = std::conditional_t<K == ValueKind::dtm, DtmRules<mated_code<G>()>, Rules<K>>;
template <class G>
using CellFor = std::conditional_t<(max_moves<G>() < 127), std::uint8_t, std::uint16_t>;

// One run of the kernel over one segment, in named phases: initialize (counters and what the
// converting moves guarantee), then per stage and level scan_seeds and expand, then finalize.
template <Game G, ValueKind K, class Lower, class Cell>
class Run {
  using Pos = typename G::Position;
  using Seg = typename G::SegmentId;
  using R = RulesFor<G, K>;
  using Clock = std::chrono::steady_clock;
  static constexpr Cell kDecided = CellBits<Cell>::kDecided;
  static constexpr Cell kCounter = CellBits<Cell>::kCounter;

 public:
  Run(const G& g, const Seg& seg, std::span<std::uint8_t> values, Cell* state, Lower& lower,
      const KernelOptions& opt)
      : g_(g),
        seg_(seg),
        size_(g.segment_size(seg)),
        values_(values.data()),
        state_(state),
        lower_(lower),
        opt_(opt),
        threads_(std::max(1, opt.threads)),
        chunk_(std::max<std::uint64_t>(1, opt.chunk)),
        chunks_((size_ + chunk_ - 1) / chunk_),
        parts_(static_cast<std::size_t>(threads_)),
        ooc_(opt.out_of_core),
        cluster_(opt.cluster) {
    if constexpr (HasPacking<G>) packed_ = opt.tuning.pack_frontier && g.packable(seg);
    st_.counter_bits = 8 * sizeof(Cell) - 1;
    const std::uint64_t n = std::max<std::uint64_t>(1, size_);
    partitions_ = static_cast<std::size_t>(std::clamp<std::uint64_t>(opt.partitions, 1, n));
    part_size_ = (n + partitions_ - 1) / partitions_;
    if (ooc_) {
      // Out of core: partitions of whole chunks, small enough that one per thread and one more
      // fit the resident budget; as many as fit stay resident, least recently used out first.
      const std::uint64_t per = 1 + sizeof(Cell);
      const std::uint64_t budget = ooc_->resident_bytes() / per;
      const auto slots = static_cast<std::uint64_t>(threads_) + 1;
      std::uint64_t part = std::max(chunk_, budget / slots / chunk_ * chunk_);
      if (opt.partitions > 1) part = std::min(part, std::max(chunk_, part_size_ / chunk_ * chunk_));
      // No larger than the segment: each thread's slot is a partition's copy, zeroed when made
      // (a budget of gigabytes gave a segment of 364 positions slots of 2 GiB, and a build of
      // four such small segments out of core took 7.4 s where 0.03 s do in memory).
      part = std::min(part, chunks_ * chunk_);
      // A spilled update holds its target's offset in the partition in 31 bits (Spilled).
      part = std::min(part, std::max(chunk_, kMaxPartition / chunk_ * chunk_));
      assert(part <= kMaxPartition);
      part_size_ = part;
      partitions_ = static_cast<std::size_t>((n + part - 1) / part);
      resident_limit_ = static_cast<std::size_t>(std::max(slots, budget / part));
      resident_.assign(partitions_, 0);
      pins_.assign(partitions_, 0);
      values_in_store_ = ooc_->holds(values_, size_);
    }
    if (cluster_) {
      // Over a cluster: one partition per rank, of whole chunks; this rank works on its own.
      assert(!ooc_);
      const auto ranks = static_cast<std::uint64_t>(cluster_->size());
      const std::uint64_t per = std::max<std::uint64_t>(1, (chunks_ + ranks - 1) / ranks);
      part_size_ = per * chunk_;
      partitions_ = static_cast<std::size_t>(ranks);
      own_begin_ = std::min(size_, static_cast<std::uint64_t>(cluster_->rank()) * part_size_);
      own_end_ = std::min(size_, own_begin_ + part_size_);
    }
    st_.partitions = ooc_ || cluster_ || partitions_ > 1 ? partitions_ : 0;
  }

  Result<BackwardStats> run() {
    if (ooc_) {
      // Checkpoints read and write the arrays in pieces, each released when done.
      if (opt_.checkpoints)
        opt_.checkpoints->done_with = [this](const void* p, std::uint64_t n) {
          ooc_->release(p, n);
        };
      auto a = ooc_->array("frontier-a", size_ * sizeof(std::uint64_t), true);
      if (!a) return std::move(a).error();
      auto b = ooc_->array("frontier-b", size_ * sizeof(std::uint64_t), true);
      if (!b) return std::move(b).error();
      frontier_.map(*a, ooc_);
      next_.map(*b, ooc_);
    } else if (opt_.tuning.frontier_in_place) {
      // Room for every position this rank owns (a position enters a frontier once), taken a
      // page at a time as entries land. Vectors gathered from the threads' after each level held
      // a frontier up to three times over (docs/PERFORMANCE.md, bytes per position). Under
      // ulimit -v or -d reserved address space counts as used: there each starts at its share
      // of the plan (15% of the positions: kernel_bytes, src/build/build.cpp) and grows where a
      // level needs more; so does one whose whole room cannot be had (strict overcommit charges
      // MAP_NORESERVE too). Either may stay a vector where not even its share can be had: the
      // two swap roles every level, and each appends in its own way.
      const std::uint64_t room = own_end_ - own_begin_;
      const std::uint64_t share = room / 100 * 15 + opt_.frontier_piece;
      const std::uint64_t start = opt_.frontier_room        ? opt_.frontier_room
                                  : address_space_limited() ? share
                                                            : room;
      for (Frontier* f : {&frontier_, &next_})
        if (!f->reserve(room, start) && start > share) f->reserve(room, share);
    }
    auto t0 = Clock::now();
    if (!restore()) {
      RETRA_TRY(initialize());
      st_.init_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      st_.holes_marked = mark_holes();
    }
    t0 = Clock::now();
    RETRA_TRY(propagate());
    finalize();
    std::sort(st_.far.begin(), st_.far.end());
    if (cluster_) {
      // Rank 0 writes the values; the other ranks need them too when later segments read them
      // from memory.
      std::vector<std::uint64_t> bounds(partitions_ + 1);
      for (std::size_t r = 0; r <= partitions_; ++r)
        bounds[r] = std::min<std::uint64_t>(size_, r * part_size_);
      if (opt_.cluster_share)
        cluster_->share(std::span(values_, size_), bounds);
      else
        cluster_->gather(std::span(values_, size_), bounds);
      st_.predecessors = cluster_->total(st_.predecessors);
    }
    st_.propagate_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (ooc_) {
      st_.spilled_bytes = ooc_->spilled_bytes();
      st_.disk_peak_bytes = ooc_->disk_peak_bytes();
      // The frontiers are done with: their storage goes back before the segment is written.
      frontier_.clear();
      next_.clear();
    }
    return st_;
  }

 private:
  // ---- initialize: counters and what the converting moves guarantee --------------------------
  // Converting moves read finished segments at random. Each task therefore generates the moves
  // of kInitBatch positions first, prefetching the targets' values (when the value source can),
  // and folds the values in afterwards. When the finished segments are read block-wise from disk
  // (the value source says so: block_wise()), a lookup that misses the block cache decodes a
  // whole block; there a task is 16 chunks, its batch the whole task, and its lookups are sorted
  // by segment and by the block that holds them (the value source's block_of: a file may store
  // its entries in another order than the index, so consecutive indices can lie in blocks far
  // apart), so that each block the task needs is decoded once (a fold is a max, min or or: its
  // order does not matter).
  static constexpr std::uint64_t kInitBatch = 32;
  static constexpr std::uint64_t kSortedBatchMax = std::uint64_t{1} << 20;
  static constexpr std::uint64_t kInitBytes = 128;  // an Acc and a few Convs
  static constexpr int kHole = INT_MIN + 1;         // an index that is not a position
  // 24 bytes when Seg is an int: block fills what would be padding.
  struct Conv {
    Seg segment;
    std::uint32_t block;  // sorted batches: the block of the segment's file that holds index
    std::uint64_t index;
    int gain;
    std::uint32_t owner;  // position within the batch
  };
  struct Acc {
    int fixed;  // terminal or no-move value, kHole, or INT_MIN
    int quiet;
    Exits exits;
  };

  // Generates the moves of position p (batch slot k): counts the quiet ones, queues conversions.
  void generate(const Pos& p, std::uint32_t k, Acc& a, std::vector<Conv>& conv) const {
    a = {INT_MIN, 0, {}};
    if constexpr (HasValidity<G>) {
      if (!g_.is_valid(seg_, p)) {
        a.fixed = kHole;
        return;
      }
    }
    if constexpr (HasTerminalValue<G>) {
      if (auto t = g_.terminal_value(seg_, p)) {
        a.fixed = *t;
        // Terminal positions have moves too; a counter that can never reach zero (and never
        // underflow into the decided bit) keeps them out of loss claims.
        a.quiet = kCounter;
        return;
      }
    }
    auto conversion = [&](const Child<Seg>& m) {
      if constexpr (requires { lower_.prefetch(m.segment, m.index); })
        if (opt_.tuning.prefetch) lower_.prefetch(m.segment, m.index);
      conv.push_back({m.segment, 0, m.index, m.gain, k});
    };
    int legal;
    if constexpr (HasConversions<G>) {
      // Non-converting moves are only counted: no need to rank their children.
      const MoveCount mc = g_.for_each_conversion(seg_, p, conversion);
      legal = mc.legal;
      a.quiet = mc.quiet;
    } else {
      legal = g_.for_each_move(seg_, p, [&](const Child<Seg>& m) {
        if (m.converts)
          conversion(m);
        else
          ++a.quiet;
      });
    }
    if (legal == 0) a.fixed = g_.no_move_value(seg_, p);
  }

  // Whether initialize() marks the holes (KernelOptions::holes): when it sees every position.
  bool mark_holes() const { return HasValidity<G> && opt_.holes && !cluster_; }

  Status initialize() {
    progress_phase(opt_.progress, opt_.label + ": counting moves", own_end_ - own_begin_);
    std::uint64_t* const holes = mark_holes() ? opt_.holes : nullptr;
    std::uint8_t* const values = values_;
    Cell* const state = state_;
    int bad = 0;  // 1: a counter overflows, 2: a distance overflows
    bool sorted = false;
    if constexpr (requires { lower_.block_wise(); }) sorted = lower_.block_wise();
    // Tasks of a chunk; with sorted lookups of 16 chunks (at most kSortedBatchMax positions, a
    // batch each), so that each decoded block answers 16 times as many lookups.
    // Out of core the batch's scratch (about kInitBytes per position) comes out of the
    // update batches' share: they are not in use yet.
    const std::uint64_t most =
        ooc_ ? std::min(kSortedBatchMax,
                        ooc_->batch_bytes() / static_cast<std::uint64_t>(threads_) / kInitBytes)
             : kSortedBatchMax;
    const std::uint64_t task = sorted ? std::max(chunk_, std::min(chunk_ * 16, most)) : chunk_;
    const std::uint64_t tasks = (own_end_ - own_begin_ + task - 1) / task;
    const std::uint64_t batch = sorted ? task : kInitBatch;
    // A mutex, not `omp critical`: that one lock is shared by every OpenMP region of the
    // process, and segments built side by side run regions from several threads at once
    // (libomp 14 under ThreadSanitizer crashed there).
    std::mutex hist_mu;
#pragma omp parallel num_threads(threads_) if (tasks > 1)
    {
      std::array<std::uint64_t, 256> local{};
      std::vector<Conv> conv;
      std::vector<Acc> acc(batch);
#pragma omp for schedule(dynamic, 1) reduction(| : bad)
      for (std::uint64_t c = 0; c < tasks; ++c) {
        const std::uint64_t begin = own_begin_ + c * task, end = std::min(own_end_, begin + task);
        const Pin pin(*this, begin, end);
        // The holes of the word being filled, or'ed in when the next word starts: a task's
        // first and last words may be another task's too (chunks need not be multiples of 64).
        std::uint64_t hole_word = 0, hole_at = 0;
        auto flush_holes = [&] {
          if (hole_word)
            std::atomic_ref<std::uint64_t>(holes[hole_at])
                .fetch_or(hole_word, std::memory_order_relaxed);
          hole_word = 0;
        };
        Pos p = g_.unrank(seg_, begin);
        for (std::uint64_t first = begin; first < end; first += batch) {
          const std::uint64_t nb = std::min(batch, end - first);
          conv.clear();
          for (std::uint64_t k = 0; k < nb; ++k) {
            generate(p, static_cast<std::uint32_t>(k), acc[k], conv);
            if (first + k + 1 < end) g_.next(seg_, p);
          }
          if (sorted) {
            // Only the lookups whose order matters (block_of: kAnyOrder for the others) are
            // sorted, by segment and block; within a block any order decodes it once.
            auto unordered = conv.end();
            if constexpr (requires { lower_.block_of(Seg{}, std::uint64_t{}); }) {
              for (Conv& m : conv) m.block = lower_.block_of(m.segment, m.index);
              unordered = std::partition(conv.begin(), conv.end(), [&](const Conv& m) {
                return m.block != lower_.kAnyOrder;
              });
            }
            std::sort(conv.begin(), unordered, [](const Conv& a, const Conv& b) {
              const int sa = static_cast<int>(a.segment), sb = static_cast<int>(b.segment);
              return sa != sb             ? sa < sb
                     : a.block != b.block ? a.block < b.block
                                          : a.index < b.index;
            });
          }
          for (const Conv& m : conv)
            R::fold(acc[m.owner].exits, m.gain, static_cast<int>(lower_(m.segment, m.index)),
                    opt_.dtc);
          for (std::uint64_t k = 0; k < nb; ++k) {
            const Acc& a = acc[k];
            if (a.fixed == kHole) {
              values[first + k] = 0;
              state[first + k] = kDecided;  // never a seed, never reached
              if (holes) {
                const std::uint64_t i = first + k;
                if (i >> 6 != hole_at) flush_holes(), hole_at = i >> 6;
                hole_word |= std::uint64_t{1} << (i & 63);
              }
              continue;
            }
            bool overflow = false;
            const int v = a.fixed != INT_MIN ? a.fixed : R::initial(a.exits, &overflow);
            if (overflow) bad |= 2;
            const int quiet = a.quiet + (a.exits.draw ? 1 : 0);  // a drawing escape: never a loss
            if (quiet > kCounter) bad |= 1;
            const auto vb = static_cast<std::uint8_t>(v);
            values[first + k] = vb;
            state[first + k] = static_cast<Cell>(quiet);
            ++local[vb];
          }
        }
        if (holes) flush_holes();
        progress_advance(opt_.progress, end - begin);
      }
      std::lock_guard lock(hist_mu);
      for (int k = 0; k < 256; ++k) hist_[k] += local[k];
    }
    if (cluster_) {
      // The seeds' levels and stages follow from the whole segment's histogram.
      cluster_->sum(hist_);
      std::uint64_t b = static_cast<std::uint64_t>(bad);
      cluster_->max(std::span(&b, 1));
      bad = static_cast<int>(b);
    }
    if (bad & 1)
      return Error(Errc::internal, Cause::counter_overflow,
                   fmt::format("{}: a position has more than {} moves inside its segment; the "
                               "game's kMaxMoves must say so",
                               opt_.label, int{kCounter}));
    if (bad & 2) return distance_overflow();
    return {};
  }

  Error distance_overflow() const {
    std::string what = "a distance exceeds what one byte holds";
    if constexpr (K == ValueKind::dtm)
      what = fmt::format("a distance to mate exceeds {} plies, which one byte cannot hold",
                         R::kMaxCode - mated_code<G>());
    return Error(Errc::resource, Cause::distance_overflow, fmt::format("{}: {}", opt_.label, what));
  }

  // ---- frontier entries --------------------------------------------------------------------
  std::uint64_t entry_of(std::uint64_t i, const Pos& pos) const {
    if constexpr (HasPacking<G>)
      if (packed_) return g_.pack(seg_, pos);
    (void)pos;
    return i;
  }
  Pos position(std::uint64_t e) const {
    if constexpr (HasPacking<G>)
      if (packed_) return g_.unpack(seg_, e);
    return g_.unrank(seg_, e);
  }
  // The frontier entry of index i, from the index alone.
  std::uint64_t entry_of_index(std::uint64_t i) const {
    if constexpr (HasPacking<G>)
      if (packed_) return g_.pack(seg_, g_.unrank(seg_, i));
    return i;
  }
  std::uint64_t index_of(std::uint64_t e) const {
    if constexpr (HasPacking<G>)
      if (packed_) return g_.rank(seg_, g_.unpack(seg_, e));
    return e;
  }

  // Kinds with far codes: the positions just decided at level d (the next frontier) when d is
  // beyond what a byte holds, listed with their exact codes. Over MPI each rank would hold its
  // own part of the list, which nothing gathers yet: refused there.
  Status record_far(int d) {
    if constexpr (requires { R::kFarLevel; }) {
      if (cluster_) {
        if (global(next_.size()) == 0) return {};
        return Error(Errc::resource, Cause::distance_overflow,
                     fmt::format("{}: a distance of {} plies does not fit a byte, and such "
                                 "distances are not built over MPI yet; build this segment "
                                 "without mpirun",
                                 opt_.label, d));
      }
      const std::uint64_t* const e = next_.data();
      for (std::uint64_t k = 0, n = next_.size(); k < n; ++k)
        st_.far.emplace_back(
            index_of(e[k] & ~kLossBit),
            static_cast<std::uint32_t>((e[k] & kLossBit) ? R::loss_code(d) : R::win_code(d)));
    }
    (void)d;
    return {};
  }

  // ---- checkpoints: the run's state at a level boundary -------------------------------------
  // At the top of a level everything the rest of the run reads is in the value and counter
  // arrays, the frontier and these scalars (the seeds' levels follow from hist). A snapshot of
  // another layout, size, cell width, kind or frontier mode is not used: the run starts over and
  // its first checkpoint replaces it.
  static constexpr std::uint32_t kSnapshotVersion = 1;
  struct Snapshot {
    std::uint32_t version, cell_bytes;
    std::uint64_t size, frontier;
    std::uint32_t stage_index;
    std::int32_t level;
    std::uint8_t kind, packed, dtc, unused[5];
    std::int32_t stages, levels;
    std::uint64_t decided, max_frontier, predecessors;
    std::array<std::uint64_t, 256> hist;
  };
  static_assert(std::is_trivially_copyable_v<Snapshot> && sizeof(Snapshot) == 2120,
                "checkpoint scalars: no padding, so that every saved byte is defined");
  static constexpr int kNotResuming = INT_MIN;
  // The counts a snapshot carries, between it and the run's statistics (either way).
  template <class To, class From>
  static void copy_counts(To& to, const From& from) {
    to.stages = from.stages;
    to.levels = from.levels;
    to.decided = from.decided;
    to.max_frontier = from.max_frontier;
    to.predecessors = from.predecessors;
  }

  // The arrays a snapshot holds: values, counters, frontier (over a cluster, this rank's own
  // range of values and counters and its part of the frontier: each rank saves its own).
  std::array<std::span<std::uint8_t>, 3> snapshot_arrays() {
    const std::uint64_t n = own_end_ - own_begin_;
    return {std::span(values_ + own_begin_, n),
            std::span(reinterpret_cast<std::uint8_t*>(state_ + own_begin_), n * sizeof(Cell)),
            std::span(reinterpret_cast<std::uint8_t*>(frontier_.data()),
                      frontier_.size() * sizeof(std::uint64_t))};
  }

  Status checkpoint(std::size_t stage_index, int stage, int level) {
    // A snapshot does not hold the far codes listed so far: none is taken once there are some
    // (the last levels of the few segments that have them).
    if (!opt_.checkpoints || !st_.far.empty()) return {};
    bool due = opt_.checkpoints->due();
    // Over a cluster every rank saves at the same boundary (when any is due), so that they can
    // resume together.
    if (cluster_) due = !cluster_->all(!due);
    if (!due) return {};
    const auto t0 = Clock::now();
    Snapshot m{};
    m.version = kSnapshotVersion;
    m.cell_bytes = sizeof(Cell);
    m.size = size_;
    m.frontier = frontier_.size();
    m.stage_index = static_cast<std::uint32_t>(stage_index);
    m.level = level;
    m.kind = static_cast<std::uint8_t>(K);
    m.packed = packed_;
    m.dtc = opt_.dtc;
    copy_counts(m, st_);
    m.hist = hist_;
    const auto a = snapshot_arrays();
    const std::array<std::span<const std::uint8_t>, 3> arrays{a[0], a[1], a[2]};
    RETRA_TRY(agree(cluster_, opt_.checkpoints->save(
                                  std::span(reinterpret_cast<const std::uint8_t*>(&m), sizeof m),
                                  arrays, {R::phase(opt_.label, stage, level), st_.decided})));
    ++st_.checkpoints;
    st_.checkpoint_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    return {};
  }

  // Takes over a saved state when there is a usable one; false: initialize from the start.
  // Over a cluster every rank answers the same: all resume from the same boundary, or none does.
  bool restore() {
    if (!opt_.checkpoints) return false;
    const auto meta = opt_.checkpoints->load_meta();
    Snapshot m{};
    bool usable = meta && meta->size() == sizeof m;
    if (usable) std::memcpy(&m, meta->data(), sizeof m);
    const std::vector<int> stages = R::stage_list(g_, seg_);
    usable = usable && m.version == kSnapshotVersion && m.cell_bytes == sizeof(Cell) &&
             m.size == size_ && m.kind == static_cast<std::uint8_t>(K) && m.packed == packed_ &&
             m.dtc == opt_.dtc && m.stage_index < stages.size();
    if (cluster_) {
      // The boundary as one number (0: none); usable when the least equals the most.
      const std::uint64_t at =
          usable ? (std::uint64_t{m.stage_index} << 32 | static_cast<std::uint32_t>(m.level)) + 1
                 : 0;
      std::array<std::uint64_t, 2> most{at, ~at};
      cluster_->max(most);
      usable = at != 0 && most[0] == at && ~most[1] == at;
    }
    usable = usable && frontier_.resize(m.frontier);
    // Whatever a failed read left in the arrays, initialize() overwrites every entry.
    usable = usable && opt_.checkpoints->load_arrays(snapshot_arrays());
    if (cluster_) usable = cluster_->all(usable);
    if (!usable) {
      frontier_.clear();
      return false;
    }
    hist_ = m.hist;
    copy_counts(st_, m);
    st_.resumed_level = m.level;
    st_.resumed_decided = m.decided;
    st_.resumed_at = R::phase(opt_.label, stages[m.stage_index], m.level);
    resume_stage_ = m.stage_index;
    resume_level_ = m.level;
    return true;
  }

  // ---- propagate: stages and the levels in which seeds can appear ----------------------------
  Status propagate() {
    // Kinds that seed every level: which levels have seeds, from the initial bytes.
    std::array<bool, 256> seed_at{};
    int last_seed_level = 0;
    if constexpr (R::kSeedsEveryLevel)
      for (int v = 0; v < 256; ++v)
        if (const int l = R::seed_level(v); l >= 0 && hist_[static_cast<std::size_t>(v)]) {
          seed_at[static_cast<std::size_t>(l)] = true;
          last_seed_level = std::max(last_seed_level, l);
        }
    const std::vector<int> stages = R::stage_list(g_, seg_);
    for (std::size_t si = 0; si < stages.size(); ++si) {
      const int stage = stages[si];
      int level = R::kFirstLevel;
      if (resume_level_ != kNotResuming) {
        if (si < resume_stage_) continue;
        level = std::exchange(resume_level_, kNotResuming);  // the saved frontier is current
      } else {
        if (!R::stage_has_seeds(hist_, stage)) continue;
        ++st_.stages;
        frontier_.clear();
      }
      for (;; ++level) {
        RETRA_TRY(checkpoint(si, stage, level));
        const bool seeds = R::kSeedsEveryLevel
                               ? level < 256 && seed_at[static_cast<std::size_t>(level)]
                               : level == R::kFirstLevel;
        if (seeds) scan_seeds(stage, level);
        if (frontier_.error()) return *frontier_.error();
        // Over a cluster the level is the whole segment's: every rank stops at the same one.
        const std::uint64_t frontier = global(frontier_.size());
        if (frontier == 0) {
          if (R::kSeedsEveryLevel && level < last_seed_level) continue;
          break;
        }
        st_.decided += frontier;
        st_.max_frontier = std::max<std::uint64_t>(st_.max_frontier, frontier);
        ++st_.levels;
        progress_phase(opt_.progress, R::phase(opt_.label, stage, level), frontier_.size());
        if (cluster_)
          expand_cluster(stage, level);
        else if (ooc_)
          RETRA_TRY(expand_out_of_core(stage, level));
        else if (partitions_ > 1)
          expand_partitioned(stage, level);
        else
          expand(stage, level);
        // Past the last level the expansion's values do not fit a byte: an overflow only when it
        // decided something (a last frontier whose parents are all decided is fine).
        if (next_.error()) return *next_.error();
        if (level > R::kMaxLevel && global(next_.size()) != 0) return distance_overflow();
        if constexpr (requires { R::kFarLevel; })
          if (level + 1 >= R::kFarLevel) RETRA_TRY(record_far(level + 1));
        frontier_.swap(next_);
        // Consumed: its memory or storage goes back before the next level fills it.
        next_.clear();
      }
    }
    return {};
  }

  // ---- scan_seeds: claims the undecided seeds of (stage, level) in one pass over the segment ----
  // The vector path (one-byte cells) tests 32 positions per step and looks at single positions
  // only where a lane matched.
  void scan_seeds(int stage, int level) {
    const auto t_scan = Clock::now();
    const SeedCodes code = R::seeds(stage, level);
    std::uint8_t* const values = values_;
    Cell* const state = state_;
    auto match = [&](std::uint64_t i) {
      const Cell s = state[i];
      if (s & kDecided) return false;
      const int v = values[i];
      return v == code.win || ((s & kCounter) == 0 && v == code.loss);
    };
#pragma omp parallel num_threads(threads_) if (chunks_ > 1)
    {
      auto& out = parts_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t c = own_chunks_begin(); c < own_chunks_end(); ++c) {
        const std::uint64_t begin = c * chunk_, end = std::min(size_, begin + chunk_);
        const Pin pin(*this, begin, end);
        std::uint64_t i = begin;
        // Seeds come in ascending order: a cursor that steps over short gaps with next() is
        // cheaper than unranking every seed when frontiers hold packed positions. A step costs
        // about a third of an unrank (bench/, the packed game's next and unrank), so gaps of up
        // to 3 are stepped; 16 made a pawn table's scans 20% slower, with the same entries.
        Pos cur{};
        std::uint64_t cur_i = UINT64_MAX;
        auto entry_at = [&](std::uint64_t j) -> std::uint64_t {
          if (!packed_) return j;
          if (cur_i > j || j - cur_i > 3) {
            cur = g_.unrank(seg_, j);
          } else {
            while (cur_i < j) g_.next(seg_, cur), ++cur_i;
          }
          cur_i = j;
          return entry_of(j, cur);
        };
        auto take = [&](std::uint64_t j) {
          if (match(j)) {
            state[j] = static_cast<Cell>(state[j] | kDecided);
            out.push_back(entry_at(j) | (R::is_loss(values[j]) ? kLossBit : 0));
          }
        };
        if constexpr (sizeof(Cell) == 1) {
          if (opt_.tuning.simd_scan) i = scan_vector(code, begin, end, take);
        }
        for (; i < end; ++i) take(i);
        flush_if_large(out, frontier_);
      }
    }
    frontier_.gather(parts_);
    st_.scan_seconds += std::chrono::duration<double>(Clock::now() - t_scan).count();
  }

  // 32 one-byte cells per step; returns where the scalar tail starts.
  template <class Take>
  std::uint64_t scan_vector(const SeedCodes& code, std::uint64_t i, std::uint64_t end,
                            Take& take) const {
    using V32 = std::uint8_t __attribute__((vector_size(32)));
    using M32 = signed char __attribute__((vector_size(32)));  // lane masks: 0 or -1
    const V32 win = V32{} + static_cast<std::uint8_t>(code.win);
    const V32 loss = V32{} + static_cast<std::uint8_t>(code.loss);
    M32 win_on, loss_on;
    std::memset(&win_on, code.win >= 0 ? 0xff : 0, sizeof win_on);
    std::memset(&loss_on, code.loss >= 0 ? 0xff : 0, sizeof loss_on);
    const V32 decided = V32{} + static_cast<std::uint8_t>(kDecided);
    const V32 counter = V32{} + static_cast<std::uint8_t>(kCounter);
    for (; i + 32 <= end; i += 32) {
      V32 s, v;
      std::memcpy(&s, &state_[i], 32);
      std::memcpy(&v, &values_[i], 32);
      const M32 open = (s & decided) == 0;
      const M32 no_unknown = (s & counter) == 0;
      const M32 hit = open & (((v == win) & win_on) | ((v == loss) & loss_on & no_unknown));
      std::uint64_t w[4];
      std::memcpy(w, &hit, 32);
      if (!(w[0] | w[1] | w[2] | w[3])) continue;
      for (std::uint64_t j = i; j < i + 32; ++j) take(j);
    }
    return i;
  }

  // ---- expand: decides the predecessors of one frontier level -------------------------------
  // Child lookups are random, so each task first generates the predecessors of a batch of
  // frontier entries and prefetches their cells, then decides them.
  void expand(int stage, int level) {
    const std::uint64_t n = frontier_.size();
    // Tasks of 4096 entries (fewer with tiny test chunks, so that small graphs still split).
    const std::uint64_t kTask = std::clamp<std::uint64_t>(chunk_ / 16, 4, 4096);
    constexpr std::uint64_t kBatch = 64;
    std::uint8_t* const values = values_;
    Cell* const state = state_;
    const std::uint64_t* const frontier = frontier_.data();
    const bool prefetch = opt_.tuning.prefetch;
    const bool shared = threads_ > 1 && n > kTask;  // else one thread writes every cell
    // A large level goes in eighths of whole tasks (16 pieces at least: a megaentry), and the
    // pages of each go back once it is read (Frontier::give_back): the level then holds what of
    // its frontier is still to read and what of the next one is made so far, not both frontiers
    // whole. An eighth costs a barrier, where the threads wait for the last task.
    const std::uint64_t slice =
        frontier_.concurrent()
            ? (std::max<std::uint64_t>(n / 8, 16 * opt_.frontier_piece) + kTask - 1) / kTask * kTask
            : n;
    std::uint64_t preds = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : preds) if (n > kTask)
    {
      auto& out = parts_[static_cast<std::size_t>(omp_get_thread_num())];
      std::vector<std::pair<std::uint64_t, std::uint64_t>> buf;  // (index | loss, entry)
      for (std::uint64_t s0 = 0; s0 < n; s0 += slice) {
        const std::uint64_t s1 = std::min(n, s0 + slice);
#pragma omp for schedule(dynamic, 1)
        for (std::uint64_t t = s0; t < s1; t += kTask) {
          const std::uint64_t tend = std::min(s1, t + kTask);
          for (std::uint64_t b = t; b < tend; b += kBatch) {
            buf.clear();
            for (std::uint64_t f = b; f < std::min(tend, b + kBatch); ++f) {
              const std::uint64_t loss = frontier[f] & kLossBit;
              g_.for_each_unmove(seg_, position(frontier[f] & ~kLossBit),
                                 [&](std::uint64_t p, const Pos& pp) {
                                   if (prefetch) {
                                     __builtin_prefetch(&state[p], 1);
                                     __builtin_prefetch(&values[p], 1);
                                   }
                                   buf.emplace_back(p | loss, entry_of(p, pp));
                                 });
            }
            preds += buf.size();
            if (shared)
              for (const auto& [e, p_entry] : buf) decide(e, p_entry, stage, level, out);
            else
              for (const auto& [e, p_entry] : buf)
                decide<false>(e, p_entry, stage, level, out, whole());
          }
          flush_if_large(out, next_);
          progress_advance(opt_.progress, tend - t);
        }
        // Past the loop's barrier: every entry below s1 is read.
#pragma omp single nowait
        frontier_.give_back(s1);
      }
    }
    st_.predecessors += preds;
    next_.gather(parts_);
  }

  // ---- expand, partitioned: owner computes --------------------------------------------------
  // Partition q owns the index range [q * part_size_, (q + 1) * part_size_). The unmoves of the
  // frontier become updates (parent index | loss bit, parent entry) in per-thread buckets, one per
  // owner ("send"); then each owner alone applies the updates addressed to it ("receive"), so its
  // cells are written by one thread and, with enough partitions, stay in cache while it does.
  // This is the shape in which partitions can live elsewhere, on disk or in other processes:
  // only the buckets travel. A level's updates commute (a parent is claimed a win by a lost child
  // or a loss when its last unknown child is decided, never both in one level), so the values
  // and counts are those of the unpartitioned kernel for any number of partitions. The frontier
  // is taken a slice at a time so that the buckets stay bounded (16 bytes per update).
  struct Update {
    std::uint64_t target;  // parent index | kLossBit when the child is lost for its mover
    std::uint64_t entry;   // the parent's frontier entry
  };
  static_assert(sizeof(Update) == 16);
  // Out of core, an update is its target alone, as its offset in the partition with the loss
  // bit on top: a quarter of an Update's bytes through the spill files, whose writes into the
  // page cache took 27% of the kernel's time where profiled with 8-byte updates
  // (docs/ARCHITECTURE.md, out of core), and a bucket of the same bytes holds twice the updates
  // that 8-byte ones gave (docs/PERFORMANCE.md, out of core: half the bytes spilled). The
  // parent's frontier entry is made again (an unrank, where entries are packed) only for a
  // parent the update decides, 6-8 in a hundred updates where measured.
  //   Spilled (uint32): bit 31 loss | bits 0-30 target - partition's first position
  using Spilled = std::uint32_t;
  static constexpr Spilled kSpilledLoss = Spilled{1} << 31;
  static constexpr std::uint64_t kMaxPartition = kSpilledLoss;  // positions, out of core
  static Spilled spill_of(std::uint64_t p, std::uint64_t first, std::uint64_t loss) {
    assert(p >= first && p - first < kMaxPartition);
    return static_cast<Spilled>(p - first) | (loss ? kSpilledLoss : 0);
  }
  // The update as decide() takes it (index | kLossBit) of x, spilled to the partition at first.
  static std::uint64_t unspill(Spilled x, std::uint64_t first) {
    return (first + (x & ~kSpilledLoss)) | (static_cast<std::uint64_t>(x >> 31) << 63);
  }
  // Where decide<false> finds the cells and values of the positions from `first` on: the
  // arrays themselves (first 0), or out of core a partition's copy in a thread's slot.
  struct View {
    Cell* state = nullptr;
    std::uint64_t state_first = 0;
    std::uint8_t* values = nullptr;
    std::uint64_t values_first = 0;
    // Out of core, the slot's block states (index: (p - state_first) >> kBlockShift): a decision
    // marks its block kDirty, so that only blocks whose values changed write their values back.
    std::uint8_t* blocks = nullptr;
  };
  View whole() const { return {state_, 0, values_, 0}; }

  void expand_partitioned(int stage, int level) {
    const std::uint64_t n = frontier_.size();
    const std::size_t parts = partitions_;
    constexpr std::uint64_t kSlice = std::uint64_t{1} << 20;  // frontier entries per round
    const std::uint64_t* const frontier = frontier_.data();
    std::vector<std::vector<Update>> buckets(static_cast<std::size_t>(threads_) * parts);
    std::vector<std::vector<std::uint64_t>> decided(parts);
    std::uint64_t preds = 0;
    for (std::uint64_t s0 = 0; s0 < n; s0 += kSlice) {
      const std::uint64_t s1 = std::min(n, s0 + kSlice);
      preds += send_slice(frontier, s0, s1, buckets);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
      for (std::size_t q = 0; q < parts; ++q)
        for (int t = 0; t < threads_; ++t) {
          auto& bucket = buckets[static_cast<std::size_t>(t) * parts + q];
          apply_owned(bucket.data(), bucket.size(), stage, level, decided[q], whole());
          bucket.clear();
          flush_if_large(decided[q], next_);
        }
    }
    st_.predecessors += preds;
    next_.gather(decided);
  }

  // Applies m updates (Update, or Spilled out of core to the partition at `first`) to a
  // partition the calling thread alone works on: plain loads and stores (decide<false>), the
  // targets fetched a few updates ahead.
  template <class U>
  void apply_owned(const U* u, std::size_t m, int stage, int level, std::vector<std::uint64_t>& out,
                   const View v, std::uint64_t first = 0) {
    const auto target = [&](const U& x) -> std::uint64_t {
      if constexpr (std::is_same_v<U, Spilled>)
        return unspill(x, first);
      else
        return x.target;
    };
    constexpr std::size_t kAhead = 16;
    for (std::size_t k = 0; k < m; ++k) {
      if (k + kAhead < m) {
        const std::uint64_t p = target(u[k + kAhead]) & ~kLossBit;
        __builtin_prefetch(&v.state[p - v.state_first], 1);
        __builtin_prefetch(&v.values[p - v.values_first], 1);
      }
      if constexpr (std::is_same_v<U, Spilled>) {
        const std::uint64_t e = target(u[k]);
        decide<false>(
            e, [&] { return entry_of_index(e & ~kLossBit); }, stage, level, out, v);
      } else {
        decide<false>(u[k].target, u[k].entry, stage, level, out, v);
      }
    }
  }

  // send() over the frontier entries [s0, s1) by all threads, thread t into its buckets
  // [t * partitions_, (t + 1) * partitions_); returns how many updates.
  std::uint64_t send_slice(const std::uint64_t* frontier, std::uint64_t s0, std::uint64_t s1,
                           std::vector<std::vector<Update>>& buckets) {
    const std::uint64_t kTask = std::clamp<std::uint64_t>(chunk_ / 16, 4, 4096);
    std::uint64_t preds = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : preds) if (s1 - s0 > kTask)
    {
      std::vector<Update>* const mine =
          &buckets[static_cast<std::size_t>(omp_get_thread_num()) * partitions_];
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t t = s0; t < s1; t += kTask) {
        const std::uint64_t tend = std::min(s1, t + kTask);
        preds += send(frontier, t, tend, mine);
        progress_advance(opt_.progress, tend - t);
      }
    }
    return preds;
  }

  // The unmoves of the frontier entries [b, e) as updates in the buckets of their owners (mine:
  // the calling thread's bucket per partition); returns how many. A bucket that reaches `full`
  // updates is handed to spill(partition), which empties it (out of core). Buckets of U =
  // Spilled hold the target alone, as its offset in the partition.
  template <class U, class Spill = std::nullptr_t>
  std::uint64_t send(const std::uint64_t* frontier, std::uint64_t b, std::uint64_t e,
                     std::vector<U>* mine, std::size_t full = 0, Spill&& spill = {}) const {
    std::uint64_t sent = 0;
    for (std::uint64_t f = b; f < e; ++f) {
      const std::uint64_t loss = frontier[f] & kLossBit;
      g_.for_each_unmove(seg_, position(frontier[f] & ~kLossBit),
                         [&](std::uint64_t p, const Pos& pp) {
                           const std::uint64_t q = p / part_size_;
                           if constexpr (std::is_same_v<U, Spilled>)
                             mine[q].push_back(spill_of(p, q * part_size_, loss));
                           else
                             mine[q].push_back({p | loss, entry_of(p, pp)});
                           if constexpr (!std::is_same_v<std::decay_t<Spill>, std::nullptr_t>)
                             if (mine[q].size() == full) spill(q);
                           ++sent;
                         });
    }
    return sent;
  }

  // ---- expand, over a cluster: the partitioned expansion with a rank per partition ---------
  // Rounds of at most KernelOptions::cluster_round frontier entries per rank (as many rounds on
  // every rank: the most any rank needs): the unmoves become updates bucketed by owning rank
  // (send), the batches for other ranks travel while this rank applies its own, then it applies
  // what it received. Only owned positions are decided here, so the next frontier is this rank's
  // part of it. The order of a level's updates does not matter (expand_partitioned): the values are
  // the one-process kernel's for any number of ranks.
  void expand_cluster(int stage, int level) {
    const std::uint64_t n = frontier_.size();
    const std::size_t ranks = partitions_;
    const auto me = static_cast<std::size_t>(cluster_->rank());
    const std::uint64_t kTask = std::clamp<std::uint64_t>(chunk_ / 16, 4, 4096);
    const std::uint64_t kSlice = std::max<std::uint64_t>(1, opt_.cluster_round);
    std::uint64_t rounds = (n + kSlice - 1) / kSlice;
    cluster_->max(std::span(&rounds, 1));
    const std::uint64_t* const frontier = frontier_.data();
    std::vector<std::vector<Update>> buckets(static_cast<std::size_t>(threads_) * ranks);
    // Per-round scratch, kept from round to round: the batches out and in, and received updates.
    std::vector<std::vector<Update>> out(ranks);
    std::vector<std::span<const std::uint8_t>> batches(ranks);
    std::vector<std::uint8_t> in;
    std::vector<Update> got;
    std::uint64_t preds = 0;
    const bool prefetch = opt_.tuning.prefetch;
    constexpr std::uint64_t kAhead = 16;
    auto apply = [&](const Update* u, std::uint64_t count) {
#pragma omp parallel num_threads(threads_) if (count > kTask)
      {
        auto& mine = parts_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
        for (std::uint64_t t = 0; t < count; t += kTask) {
          const std::uint64_t end = std::min(count, t + kTask);
          for (std::uint64_t k = t; k < end; ++k) {
            // The targets are random within the rank's range: fetch a few updates ahead.
            if (prefetch && k + kAhead < end) {
              const std::uint64_t p = u[k + kAhead].target & ~kLossBit;
              __builtin_prefetch(&state_[p], 1);
              __builtin_prefetch(&values_[p], 1);
            }
            decide(u[k].target, u[k].entry, stage, level, mine);
          }
          flush_if_large(mine, next_);
        }
      }
    };
    for (std::uint64_t round = 0; round < rounds; ++round) {
      const std::uint64_t s0 = std::min(n, round * kSlice), s1 = std::min(n, s0 + kSlice);
      preds += send_slice(frontier, s0, s1, buckets);
      // One batch per rank: the threads' buckets end to end (one thread's bucket as it is).
      for (std::size_t q = 0; q < ranks; ++q) {
        out[q].clear();
        if (q == me) continue;
        if (threads_ == 1) {
          out[q].swap(buckets[q]);
        } else {
          for (int t = 0; t < threads_; ++t) {
            auto& bucket = buckets[static_cast<std::size_t>(t) * ranks + q];
            out[q].insert(out[q].end(), bucket.begin(), bucket.end());
            bucket.clear();
          }
        }
        batches[q] = {reinterpret_cast<const std::uint8_t*>(out[q].data()),
                      out[q].size() * sizeof(Update)};
      }
      cluster_->exchange(batches, in, [&] {
        for (int t = 0; t < threads_; ++t) {
          auto& bucket = buckets[static_cast<std::size_t>(t) * ranks + me];
          apply(bucket.data(), bucket.size());
          bucket.clear();
        }
      });
      // Received bytes carry no alignment promise: copied into updates a piece at a time.
      constexpr std::size_t kPiece = std::size_t{1} << 16;
      for (std::size_t b = 0; b < in.size(); b += kPiece * sizeof(Update)) {
        const std::size_t bytes = std::min(in.size() - b, kPiece * sizeof(Update));
        got.resize(bytes / sizeof(Update));
        std::memcpy(got.data(), in.data() + b, bytes);
        apply(got.data(), got.size());
      }
    }
    st_.predecessors += preds;
    next_.gather(parts_);
  }
  // The segment's total of a per-rank count (the count itself without a cluster).
  std::uint64_t global(std::uint64_t x) { return cluster_ ? cluster_->total(x) : x; }
  // This rank's chunks: [own_chunks_begin(), own_chunks_end()) (all of them without a cluster).
  std::uint64_t own_chunks_begin() const { return own_begin_ / chunk_; }
  std::uint64_t own_chunks_end() const {
    return own_end_ > own_begin_ ? (own_end_ + chunk_ - 1) / chunk_ : own_chunks_begin();
  }

  // The first of the errors many threads may meet (the rest are dropped): kept by any thread,
  // read once they are done.
  struct FirstError {
    std::mutex mu;
    std::optional<Error> error;
    void keep(Status st) {
      if (st) return;
      std::lock_guard lock(mu);
      if (!error) error = std::move(st).error();
    }
  };

  // ---- expand, out of core: the partitioned expansion with spill files ----------------------
  // One round per level unless its spills would pass the budget, so that each partition is
  // applied once: the frontier is read in tasks (through storage, OutOfCore::read); a thread's
  // bucket for a partition goes to that partition's spill file whenever it is full. Then each
  // partition gets its spilled updates, then those still in the buckets (apply_round); the
  // positions it decides go to the next frontier. The order of a level's updates does not matter
  // (expand_partitioned), so the values are those of the in-memory kernel.
  Status expand_out_of_core(int stage, int level) {
    const std::uint64_t n = frontier_.size();
    const std::size_t parts = partitions_;
    const std::uint64_t kTask = std::clamp<std::uint64_t>(chunk_ / 16, 4, 4096);
    // Every bucket has the same fixed capacity, reserved once: all of them together are
    // OutOfCore::batch_bytes(), the budget the plan gave them. (Growing vectors kept, per
    // partition, the capacity of its busiest level, whichever partitions a level's updates went
    // to: 1.3 GiB at a 1 GiB limit, docs/ARCHITECTURE.md, the memory plan.) A budget of a few
    // updates a bucket makes many small writes, but stays the budget.
    const auto full = static_cast<std::size_t>(std::max<std::uint64_t>(
        1, ooc_->batch_bytes() / sizeof(Spilled) / (static_cast<std::uint64_t>(threads_) * parts)));
    const std::uint64_t* const frontier = frontier_.data();
    // Kept from level to level: freeing them would return their pages, and every level would
    // fault them in again.
    auto& buckets = ooc_buckets_;
    buckets.resize(static_cast<std::size_t>(threads_) * parts);
    for (auto& b : buckets) b.reserve(full);
    auto& spilled = ooc_spilled_;  // updates spilled this round, per bucket
    ooc_scratch_.resize(static_cast<std::size_t>(threads_));
    for (auto& read : ooc_scratch_) read.resize(kTask);
    ooc_slots_.resize(static_cast<std::size_t>(threads_));
    for (Slot& slot : ooc_slots_) {
      slot.piece.resize((std::size_t{1} << 20) / sizeof(Spilled));
      slot.values.resize(values_in_store_ ? part_size_ : 0);
      slot.state.resize(part_size_);
      slot.block.assign((part_size_ >> kBlockShift) + 1, kAbsent);
    }
    FirstError errors;
    // Rounds: each reads the frontier on from where the last stopped until its spills reach the
    // budget (the tasks under way finish: a task's updates a thread past it at most), then
    // applies every partition. One round a level unless the budget is short.
    const std::uint64_t budget = ooc_->spill_budget();
    for (std::uint64_t cursor = 0; cursor < n && !errors.error;) {
      spilled.assign(buckets.size(), 0);
      std::atomic<std::uint64_t> take{cursor}, round_bytes{0};
      std::uint64_t round_preds = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : round_preds) if (n - cursor > kTask)
      {
        const auto me = static_cast<std::size_t>(omp_get_thread_num());
        const std::size_t own = me * parts;
        std::vector<Spilled>* const mine = &buckets[own];
        std::vector<std::uint64_t>& read = ooc_scratch_[me];
        auto spill = [&](std::uint64_t q) {
          spilled[own + q] += mine[q].size();
          round_bytes.fetch_add(mine[q].size() * sizeof(Spilled), std::memory_order_relaxed);
          errors.keep(ooc_->append(q, {reinterpret_cast<const std::uint8_t*>(mine[q].data()),
                                       mine[q].size() * sizeof(Spilled)}));
          mine[q].clear();  // the capacity stays
        };
        // Tasks in frontier order, one at a time to whichever thread is free (as
        // schedule(dynamic, 1) would hand them out), until the round's spills reach the budget.
        for (;;) {
          if (budget > 0 && round_bytes.load(std::memory_order_relaxed) >= budget) break;
          const std::uint64_t t = take.fetch_add(kTask, std::memory_order_relaxed);
          if (t >= n) break;
          const std::uint64_t tend = std::min(n, t + kTask);
          // Read through storage (OutOfCore::read), as the entries were written: the
          // frontier's pages are never mapped.
          const Status got = ooc_->read(frontier + t, {reinterpret_cast<std::uint8_t*>(read.data()),
                                                       (tend - t) * sizeof(std::uint64_t)});
          if (got)
            round_preds += send(read.data(), 0, tend - t, mine, full, spill);
          else
            errors.keep(got);
          progress_advance(opt_.progress, tend - t);
        }
      }
      cursor = std::min(n, take.load());
      st_.predecessors += round_preds;
      ++st_.spill_rounds;
      apply_round(stage, level, errors);
    }
    for (Slot& slot : ooc_slots_) {
      st_.slot_read_bytes += std::exchange(slot.read_bytes, 0);
      st_.slot_written_bytes += std::exchange(slot.written_bytes, 0);
    }
    std::uint64_t held = 0;
    for (const auto& b : buckets) held += b.capacity() * sizeof(Spilled);
    st_.batch_peak_bytes = std::max(st_.batch_peak_bytes, held);
    if (errors.error) return *errors.error;
    return {};
  }

  // One round's applications: each partition with updates gets those spilled to its file, then
  // those still in the threads' buckets, in a thread's slot; the positions decided go to the
  // next frontier. A failure is kept in `errors` (the run ends with it after the round).
  void apply_round(int stage, int level, FirstError& errors) {
    const std::size_t parts = partitions_;
    auto& buckets = ooc_buckets_;
    const auto& spilled = ooc_spilled_;
    // Every partition is applied in a thread's slot, so the pages still mapped from the
    // seed scan or a checkpoint are of no use here: released, the slots stay within the budget.
    release_all();
#pragma omp parallel num_threads(threads_) if (parts > 1)
    {
      const auto me = static_cast<std::size_t>(omp_get_thread_num());
      auto& out = parts_[me];
      // Every other round backwards: the partitions written last, whose pages the page cache
      // most likely still holds, are taken first.
#pragma omp for schedule(dynamic, 1)
      for (std::size_t turn = 0; turn < parts; ++turn) {
        const std::size_t q = st_.spill_rounds % 2 ? parts - 1 - turn : turn;
        std::uint64_t updates = 0;
        for (int t = 0; t < threads_; ++t) {
          const std::size_t k = static_cast<std::size_t>(t) * parts + q;
          updates += spilled[k] + buckets[k].size();
        }
        if (updates == 0) continue;  // a fifth of the visits where counted
        const std::uint64_t first = q * part_size_, last = std::min(size_, first + part_size_);
        // Applied in the thread's slot: the blocks the updates need are read from storage
        // (pread) and written back after the visit (pwrite). A page fault on the shared mapping
        // cost 12-26 us a page where measured, pread and pwrite under half a microsecond; this
        // took the kernel measured there from 32-38 s to 19-21 s (docs/PERFORMANCE.md, out of
        // core). This thread alone applies partition q (apply_owned): the locked instructions
        // of the shared path took a third of this loop's time where profiled.
        Slot& slot = ooc_slots_[me];
        std::vector<Spilled>& piece = slot.piece;
        const View view = values_in_store_ ? View{slot.state.data(), first, slot.values.data(),
                                                  first, slot.block.data()}
                                           : View{slot.state.data(), first, values_, 0, nullptr};
        auto apply = [&](const Spilled* u, std::size_t m) {
          // A piece whose blocks could not be read is not applied; the error ends the run.
          if (const Status got = load_blocks(slot, first, last, u, m); !got)
            return errors.keep(got);
          apply_owned(u, m, stage, level, out, view, first);
          flush_if_large(out, next_);
        };
        // Read into the thread's piece (a megabyte, kept from level to level): its bytes are
        // those of the updates at its beginning.
        errors.keep(ooc_->drain(q, sizeof(Spilled),
                                std::span(reinterpret_cast<std::uint8_t*>(piece.data()),
                                          piece.size() * sizeof(Spilled)),
                                [&](std::span<const std::uint8_t> bytes) {
                                  apply(piece.data(), bytes.size() / sizeof(Spilled));
                                }));
        for (int t = 0; t < threads_; ++t) {
          auto& bucket = buckets[static_cast<std::size_t>(t) * parts + q];
          apply(bucket.data(), bucket.size());
          bucket.clear();
        }
        errors.keep(store_blocks(slot, first, last));
      }
    }
    next_.gather(parts_);
  }

  // One (child, parent) pair: a lost child makes the parent a win; otherwise the parent's counter
  // falls, and the thread that brings it to zero claims the parent as a loss if the rules say it
  // is ready. Shared: other threads may update the same cells at once (locked read-modify-write
  // instructions); not shared: this thread is the cells' only writer (an owner applying its
  // partition, or one thread), and plain loads and stores let the processor overlap the cache
  // misses of many updates, which a locked instruction forbids (docs/PERFORMANCE.md).
  // p_entry: the parent's frontier entry, or (out of core) what computes it, called only when
  // the parent is decided.
  template <bool Shared = true, class Entry = std::uint64_t>
  void decide(std::uint64_t e, Entry p_entry, int stage, int level, std::vector<std::uint64_t>& out,
              const View v = {}) {
    const auto entry = [&]() -> std::uint64_t {
      if constexpr (std::is_invocable_v<Entry&>)
        return p_entry();
      else
        return p_entry;
    };
    const std::uint64_t p = e & ~kLossBit;
    if constexpr (!Shared) {
      Cell& c = v.state[p - v.state_first];
      std::uint8_t& value = v.values[p - v.values_first];
      const Cell s = c;
      if (s & kDecided) return;
      if (e >> 63) {
        c = static_cast<Cell>(s | kDecided);
        value = R::win_value(stage, level);
        if (v.blocks) v.blocks[(p - v.state_first) >> kBlockShift] = kDirty;
        out.push_back(entry());
      } else if ((s & kCounter) == 1 && R::loss_ready(value, stage, level)) {
        c = static_cast<Cell>((s - 1) | kDecided);
        value = R::loss_value(stage, level);
        if (v.blocks) v.blocks[(p - v.state_first) >> kBlockShift] = kDirty;
        out.push_back(entry() | kLossBit);
      } else {
        c = static_cast<Cell>(s - 1);
      }
      return;
    }
    Cell& sp = state_[p];
    if (load(sp) & kDecided) return;
    if (e >> 63) {
      // The child is lost for its mover: p wins by moving there.
      if (claim(sp)) {
        store(values_[p], R::win_value(stage, level));
        out.push_back(entry());  // a win: no loss bit
      }
      return;
    }
    const Cell old = std::atomic_ref<Cell>(sp).fetch_sub(1, std::memory_order_relaxed);
    if ((old & kCounter) == 1 && !(old & kDecided) &&
        R::loss_ready(load(values_[p]), stage, level) && claim(sp)) {
      store(values_[p], R::loss_value(stage, level));
      out.push_back(entry() | kLossBit);
    }
  }

  // ---- finalize: whatever is undecided is endless play (0) or a draw (0) --------------------
  void finalize() {
    std::uint8_t* const values = values_;
    const Cell* const state = state_;
    constexpr int kShift = 8 * sizeof(Cell) - 1;
#pragma omp parallel for schedule(static) num_threads(threads_) if (chunks_ > 1)
    for (std::uint64_t c = own_chunks_begin(); c < own_chunks_end(); ++c) {
      const std::uint64_t begin = c * chunk_, end = std::min(size_, begin + chunk_);
      const Pin pin(*this, begin, end);
      for (std::uint64_t i = begin; i < end; ++i)  // branch-free, so that it vectorizes
        values[i] = static_cast<std::uint8_t>(values[i] & -static_cast<int>(state[i] >> kShift));
    }
    release_all();
  }

  // ---- out of core: which partitions are resident ------------------------------------------
  // A Pin is held while the positions [begin, end) are worked on: their partitions become the
  // most recently used, and the least recently used beyond the budget that nobody holds are
  // released. A held partition is never released: its pages would come back at once and stay,
  // untracked (with every partition held, the budget is exceeded until one is let go).
  // Releasing costs page faults, never data: the storage is a shared file mapping.
  struct Pin {
    Pin(Run& r, std::uint64_t begin, std::uint64_t end) : run(r), b(begin), e(end) {
      run.touch(b, e, +1);
    }
    ~Pin() { run.touch(b, e, -1); }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;
    Run& run;
    const std::uint64_t b, e;
  };
  void touch(std::uint64_t begin, std::uint64_t end, int pin) {
    if (!ooc_ || begin >= end) return;
    std::vector<std::size_t> out;
    {
      std::lock_guard lock(lru_mu_);
      for (std::size_t q = begin / part_size_; q <= (end - 1) / part_size_; ++q) {
        pins_[q] += pin;
        if (pin < 0) continue;
        if (resident_[q]) lru_.erase(std::find(lru_.begin(), lru_.end(), q));
        resident_[q] = 1;
        lru_.push_back(q);
      }
      for (auto it = lru_.begin(); lru_.size() > resident_limit_ && it != lru_.end();) {
        if (pins_[*it] > 0) {
          ++it;
          continue;
        }
        out.push_back(*it);
        resident_[*it] = 0;
        it = lru_.erase(it);
      }
    }
    for (std::size_t q : out) release_partition(q);
  }
  void release_partition(std::size_t q) {
    const std::uint64_t b = q * part_size_, n = std::min(size_, b + part_size_) - b;
    ooc_->release(values_ + b, n);
    ooc_->release(state_ + b, n * sizeof(Cell));
  }
  void release_all() {
    if (!ooc_) return;
    std::lock_guard lock(lru_mu_);
    for (std::size_t q : lru_) {
      resident_[q] = 0;
      release_partition(q);
    }
    lru_.clear();
  }
  // Where threads may append at once (Frontier::concurrent), a thread's output goes to the
  // frontier in pieces, not all at the end: the frontier is then held once, not once more in
  // the threads' vectors.
  void flush_if_large(std::vector<std::uint64_t>& out, Frontier& to) {
    if (to.concurrent() && out.size() >= opt_.frontier_piece) {
      to.append(out);
      out.clear();
    }
  }

  // ---- out of core: a thread's slot ----------------------------------------------------------
  // The copy of the partition a thread applies at a level: blocks of 2^kBlockShift positions
  // (16 KiB of values) are read before the first piece of updates that needs them, in runs, and
  // written back when the visit ends, so that storage holds every value between visits (the
  // seed scans, checkpoints and finalize read the mapping). Only the thread that owns the slot
  // touches it. Values that are the caller's memory stay there (values empty). A block's values
  // change only where a position is decided (decide<false> marks it kDirty); the others write
  // back their counters alone.
  //   values [part_size_] bytes | state [part_size_] cells | block [blocks] kAbsent/kWanted/
  //   kHeld/kDirty | piece [1 MiB / 4] spilled updates | bytes read and written
  static constexpr unsigned kBlockShift = 14;
  enum : std::uint8_t { kAbsent, kWanted, kHeld, kDirty };
  struct Slot {
    std::vector<std::uint8_t> values;
    std::vector<Cell> state;
    std::vector<std::uint8_t> block;
    std::vector<Spilled> piece;  // a megabyte: updates read back from a spill file
    std::uint64_t read_bytes = 0, written_bytes = 0;  // for BackwardStats
  };
  enum : unsigned { kCells = 1, kValues = 2 };
  // Reads or writes blocks [b, e) of the partition [first, last) between storage and the slot:
  // the counters (kCells) and the values (kValues, when the store holds them).
  Status transfer(Slot& slot, std::uint64_t first, std::uint64_t last, std::uint64_t b,
                  std::uint64_t e, bool write, unsigned what) {
    const std::uint64_t i = b << kBlockShift, n = std::min(last - first, e << kBlockShift) - i;
    auto* const cells = reinterpret_cast<std::uint8_t*>(slot.state.data() + i);
    const bool values = (what & kValues) && values_in_store_, counters = what & kCells;
    (write ? slot.written_bytes : slot.read_bytes) +=
        (counters ? n * sizeof(Cell) : 0) + (values ? n : 0);
    if (write) {
      if (values) RETRA_TRY(ooc_->write(values_ + first + i, {slot.values.data() + i, n}));
      return counters ? ooc_->write(state_ + first + i, {cells, n * sizeof(Cell)}) : Status{};
    }
    if (values) RETRA_TRY(ooc_->read(values_ + first + i, {slot.values.data() + i, n}));
    return counters ? ooc_->read(state_ + first + i, {cells, n * sizeof(Cell)}) : Status{};
  }
  // Makes the slot hold every block that the updates u[0, m) target.
  Status load_blocks(Slot& slot, std::uint64_t first, std::uint64_t last, const Spilled* u,
                     std::size_t m) {
    std::uint64_t lo = slot.block.size(), hi = 0;
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint64_t b = (u[k] & ~kSpilledLoss) >> kBlockShift;
      if (slot.block[b] != kAbsent) continue;
      slot.block[b] = kWanted;
      lo = std::min(lo, b);
      hi = std::max(hi, b + 1);
    }
    for (std::uint64_t b = lo; b < hi;) {
      if (slot.block[b] != kWanted) {
        ++b;
        continue;
      }
      std::uint64_t e = b;
      while (e < hi && slot.block[e] == kWanted) ++e;
      if (const Status st = transfer(slot, first, last, b, e, false, kCells | kValues); !st) {
        for (std::uint64_t x = b; x < hi; ++x)
          if (slot.block[x] == kWanted) slot.block[x] = kAbsent;
        return st;
      }
      std::fill(slot.block.begin() + static_cast<std::ptrdiff_t>(b),
                slot.block.begin() + static_cast<std::ptrdiff_t>(e), kHeld);
      b = e;
    }
    return {};
  }
  // Writes the blocks the slot holds back to storage, in runs (the counters of every block
  // held, the values of those kDirty), and empties the slot.
  Status store_blocks(Slot& slot, std::uint64_t first, std::uint64_t last) {
    Status result;
    const std::uint64_t blocks = ((last - first - 1) >> kBlockShift) + 1;
    auto runs = [&](std::uint8_t least, unsigned what) {
      for (std::uint64_t b = 0; b < blocks;) {
        if (slot.block[b] < least) {
          ++b;
          continue;
        }
        std::uint64_t e = b;
        while (e < blocks && slot.block[e] >= least) ++e;
        if (Status st = transfer(slot, first, last, b, e, true, what); !st && result)
          result = std::move(st);
        b = e;
      }
    };
    runs(kHeld, kCells);
    runs(kDirty, kValues);
    std::fill_n(slot.block.begin(), blocks, kAbsent);
    return result;
  }

  const G& g_;
  const Seg seg_;
  const std::uint64_t size_;
  std::uint8_t* const values_;
  Cell* const state_;
  Lower& lower_;
  const KernelOptions& opt_;
  const int threads_;
  const std::uint64_t chunk_, chunks_;
  bool packed_ = false;
  // Out of core: whether the values are the store's array (else the caller's memory, which the
  // slots leave in place).
  bool values_in_store_ = false;
  BackwardStats st_;
  std::array<std::uint64_t, 256> hist_{};  // positions per initial values[] byte
  Frontier frontier_, next_;
  std::vector<std::vector<std::uint64_t>> parts_;  // per-thread output of scans and expansions
  kernels::OutOfCore* const ooc_;                  // null: in memory
  kernels::Cluster* const cluster_;                // null: this process alone
  std::uint64_t own_begin_ = 0, own_end_ = size_;  // the positions this rank owns
  std::size_t partitions_;                         // 1: the unpartitioned expand()
  std::uint64_t part_size_;                        // positions per partition (the last: fewer)
  // Out of core: the partitions whose pages may be resident, least recently used first.
  std::mutex lru_mu_;
  std::vector<std::size_t> lru_;
  std::vector<char> resident_;
  std::vector<int> pins_;  // Pins held per partition
  std::size_t resident_limit_ = 0;
  std::vector<std::vector<Spilled>> ooc_buckets_;  // [thread * partitions + partition]
  std::vector<std::uint64_t> ooc_spilled_;         // the same, updates spilled this round
  // Per thread, kept from level to level (a buffer allocated per level was zeroed and faulted in
  // each time): the frontier entries of a task read back.
  std::vector<std::vector<std::uint64_t>> ooc_scratch_;
  std::vector<Slot> ooc_slots_;   // per thread
  std::size_t resume_stage_ = 0;  // restore(): where propagate() goes on
  int resume_level_ = kNotResuming;
};

}  // namespace bw

// Bytes per position of the kernel's own state array (the value byte is the caller's).
template <Game G>
constexpr std::size_t backward_state_bytes() {
  return sizeof(bw::CellFor<G>);
}

// values: segment_size(seg) bytes, any content on entry; on success it holds the segment in the
// encoding of value kind K (a game storing several kinds says which one segment seg holds).
// lower(segment, index) returns the value of a position in a finished segment (converting moves).
// The state array is allocated here, one or two bytes per position (bw::CellFor<G>), with huge
// pages when opt.tuning says so, or out of core mapped from opt.out_of_core.
template <ValueKind K, Game G, class Lower>
requires HasUnmoves<G> Result<BackwardStats> backward_as(const G& g,
                                                         const typename G::SegmentId& seg,
                                                         std::span<std::uint8_t> values,
                                                         Lower&& lower,
                                                         const BackwardOptions& opt) {
  using Cell = bw::CellFor<G>;
  assert(values.size() == g.segment_size(seg));
  Cell* cells = nullptr;
  LargeArray<Cell> state;
  if (opt.out_of_core) {
    auto a = opt.out_of_core->array("cells", values.size() * sizeof(Cell), false);
    if (!a) return std::move(a).error();
    cells = reinterpret_cast<Cell*>(a->data());
  } else {
    // Over a cluster every rank maps the whole array and touches only its own range: the
    // untouched pages never become resident (huge pages too: the range is contiguous).
    auto s = LargeArray<Cell>::allocate(values.size(), opt.tuning.huge_pages);
    Status allocated = s ? Status{} : Status(std::move(s).error());
    RETRA_TRY(agree(opt.cluster, std::move(allocated)));
    state = std::move(*s);
    cells = state.data();
  }
  bw::Run<G, K, std::remove_reference_t<Lower>, Cell> run(g, seg, values, cells, lower, opt);
  return run.run();
}

// The kernel for a game with one value kind.
template <Game G, class Lower>
requires HasUnmoves<G> Result<BackwardStats> backward(const G& g, const typename G::SegmentId& seg,
                                                      std::span<std::uint8_t> values, Lower&& lower,
                                                      const BackwardOptions& opt) {
  return backward_as<G::kValueKind>(g, seg, values, std::forward<Lower>(lower), opt);
}

}  // namespace retra::kernels
