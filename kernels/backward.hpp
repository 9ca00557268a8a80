// Backward retrograde analysis (Allis; Fang, CG 2000, section 3.1; Romein & Bal) with
// unknown-children counters and level-synchronous frontiers, one code path for score,
// distance-to-mate and win/draw/loss values. A position is touched only when one of its children
// is decided, instead of once per sweep as in forward iteration.
//
// Thread safety and determinism: frontiers are processed in parallel; counters are decremented
// and positions claimed with atomic byte operations. The value a position gets depends only on the
// stage and level in which it is decided, never on which thread decides it or in what order, and
// within a level the decided set is a least fixed point, so the output is identical for any
// thread count (tests/backward_kernel_test.cpp). docs/ARCHITECTURE.md explains the stages.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"
#include "retra/game.hpp"

namespace retra::kernels {

using BackwardOptions = KernelOptions;

struct BackwardStats {
  int stages = 0;                  // score: thresholds that had work; dtm/wdl: 1
  int levels = 0;                  // frontiers processed, over all stages
  std::uint64_t decided = 0;       // positions decided by propagation (the rest are 0 / draws)
  std::uint64_t max_frontier = 0;  // largest frontier (memory: 8 bytes per entry)
  std::uint64_t predecessors = 0;  // unmoves generated
  double init_seconds = 0, propagate_seconds = 0;
  double scan_seconds = 0;  // part of propagate_seconds spent in seed scans
};

namespace bw {

// Two arrays of one byte per position. (Interleaving them into 2-byte cells, so that an update
// touches one cache line instead of two, measured no faster: both lines are prefetched together;
// docs/PERFORMANCE.md.)
//
// state[i]:
//   bit 7     decided: values[i] is final
//   bits 0-6  unknown children: non-converting moves whose child is not yet known to be good for
//             the opponent (score: in W_k; dtm/wdl: a win). A converting move to a draw adds a
//             permanent 1, so such a position never becomes a loss.
// values[i] while undecided: what the converting moves guarantee (score: the best exit value,
// -128 if none; dtm: the win value of the best converting move if any (odd), else the loss value
// forced by the converting moves (even, 0 if none); wdl: 1 if a converting move wins, else 2).
inline constexpr std::uint8_t kDecided = 0x80;
inline constexpr std::uint8_t kCounter = 0x7f;
inline constexpr int kNoExit = -128;
// Frontier entries: the position packed into 63 bits when the game can (HasPacking), else its
// index; the top bit is set when the position is lost for its mover, so that expanding it needs
// no random read of its value (and, packed, no unranking either).
inline constexpr std::uint64_t kLossBit = 1ull << 63;

template <ValueKind K>
struct Rules;

// Score (Awari): stage k = bound..1 computes W_k (mover forces >= k) and L_k (mover cannot avoid
// <= -k) as attractors; members of W_k \ W_{k+1} get k, of L_k \ L_{k+1} get -k.
// Seeds of a (stage, level): undecided positions whose byte equals the win code, or the loss code
// when no unknown child is left. A negative code matches nothing.
struct SeedCodes {
  int win, loss;
};

template <>
struct Rules<ValueKind::score> {
  static constexpr bool kSeedsEveryLevel = false;
  static int val(std::uint8_t v) { return static_cast<std::int8_t>(v); }
  static SeedCodes seeds(int k, int) { return {k, static_cast<std::uint8_t>(-k)}; }
  static bool is_loss(std::uint8_t v) { return val(v) < 0; }
  static std::uint8_t win_value(int k, int) { return static_cast<std::uint8_t>(k); }
  static bool loss_ready(std::uint8_t v, int k, int) { return val(v) <= -k; }
  static std::uint8_t loss_value(int k, int) { return static_cast<std::uint8_t>(-k); }
};

// Distance to mate (Fang's Table 1): one stage; the frontier of level d holds the positions whose
// value is d. A child at even d (a loss) makes its parents wins in d + 1; a parent whose last
// unknown child is decided at odd d loses in 1 + max(children) = max(d + 1, its converting
// floor), so it waits for the level of its floor if that is higher.
template <>
struct Rules<ValueKind::dtm> {
  static constexpr bool kSeedsEveryLevel = true;
  static SeedCodes seeds(int, int d) { return (d & 1) ? SeedCodes{d, -1} : SeedCodes{-1, d}; }
  static bool is_loss(std::uint8_t v) { return v != 0 && !(v & 1); }
  static std::uint8_t win_value(int, int d) { return static_cast<std::uint8_t>(d + 1); }
  static bool loss_ready(std::uint8_t v, int, int d) { return v <= d + 1; }
  static std::uint8_t loss_value(int, int d) { return static_cast<std::uint8_t>(d + 1); }
};

// Win/draw/loss: one stage, seeds at the start, no distances.
template <>
struct Rules<ValueKind::wdl> {
  static constexpr bool kSeedsEveryLevel = false;
  static SeedCodes seeds(int, int) { return {1, 2}; }
  static bool is_loss(std::uint8_t v) { return v == 2; }
  static std::uint8_t win_value(int, int) { return 1; }
  static bool loss_ready(std::uint8_t, int, int) { return true; }
  static std::uint8_t loss_value(int, int) { return 2; }
};

inline std::uint8_t load(const std::uint8_t& x) {
  return std::atomic_ref<const std::uint8_t>(x).load(std::memory_order_relaxed);
}
inline void store(std::uint8_t& x, std::uint8_t v) {
  std::atomic_ref<std::uint8_t>(x).store(v, std::memory_order_relaxed);
}
// Claims an undecided position; true for exactly one caller.
inline bool claim(std::uint8_t& st) {
  return !(std::atomic_ref<std::uint8_t>(st).fetch_or(kDecided, std::memory_order_relaxed) &
           kDecided);
}

// Concatenates per-thread vectors.
inline void gather(std::vector<std::vector<std::uint64_t>>& parts,
                   std::vector<std::uint64_t>& out) {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.size();
  out.clear();
  out.reserve(n);
  for (auto& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
    p.clear();
  }
}

}  // namespace bw

// values, state: segment_size(seg) bytes each, any content on entry; on success values holds the
// segment in the encoding of G::kValueKind. lower(segment, index) returns the value of a position
// in a finished segment (converting moves).
template <Game G, class Lower>
requires HasUnmoves<G> Result<BackwardStats> backward(const G& g, const typename G::SegmentId& seg,
                                                      std::span<std::uint8_t> values_span,
                                                      std::span<std::uint8_t> state_span,
                                                      Lower&& lower, const BackwardOptions& opt) {
  using Clock = std::chrono::steady_clock;
  using Pos = typename G::Position;
  constexpr ValueKind K = G::kValueKind;
  using R = bw::Rules<K>;
  const std::uint64_t size = g.segment_size(seg);
  assert(values_span.size() == size && state_span.size() == size);
  std::uint8_t* const values = values_span.data();
  std::uint8_t* const state = state_span.data();
  const int threads = std::max(1, opt.threads);
  const std::uint64_t chunk = std::max<std::uint64_t>(1, opt.chunk);
  const std::uint64_t chunks = (size + chunk - 1) / chunk;
  BackwardStats st;

  // ---- initialization: counters and what the converting moves guarantee ------------------------
  auto t0 = Clock::now();
  progress_phase(opt.progress, opt.label + ": counting moves", size);
  std::array<std::uint64_t, 256> hist{};  // positions per initial values[] byte
  int bad = 0;                            // 1: > 127 moves, 2: distance overflow
  // Converting moves read finished segments at random. Each task therefore generates the moves
  // of kInitBatch positions first, prefetching the targets' values (when the value source can),
  // and folds the values in afterwards.
  constexpr std::uint64_t kInitBatch = 32;
  constexpr int kHole = INT_MIN + 1;  // an index that is not a position
  struct Conv {
    typename G::SegmentId segment;
    std::uint64_t index;
    int gain;
    std::uint32_t owner;  // position within the batch
  };
  struct Acc {
    int fixed;  // terminal or no-move value, or INT_MIN
    int quiet, best, win, floor;
    bool draw;
  };
#pragma omp parallel num_threads(threads) if (chunks > 1)
  {
    std::array<std::uint64_t, 256> local{};
    std::vector<Conv> conv;
    std::array<Acc, kInitBatch> acc;
#pragma omp for schedule(dynamic, 1) reduction(| : bad)
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t begin = c * chunk, end = std::min(size, begin + chunk);
      Pos p = g.unrank(seg, begin);
      for (std::uint64_t first = begin; first < end; first += kInitBatch) {
        const std::uint64_t nb = std::min(kInitBatch, end - first);
        conv.clear();
        for (std::uint64_t k = 0; k < nb; ++k) {
          Acc& a = acc[k];
          a = {INT_MIN, 0, bw::kNoExit, 256, 0, false};
          bool fixed = false;
          if constexpr (HasValidity<G>) {
            if (!g.is_valid(seg, p)) {
              a.fixed = kHole;
              fixed = true;
            }
          }
          if constexpr (HasTerminalValue<G>) {
            if (!fixed)
              if (auto t = g.terminal_value(seg, p)) {
                a.fixed = *t;
                // Terminal positions have moves too; a counter that can never reach zero (and
                // never underflow into the decided bit) keeps them out of loss claims.
                a.quiet = bw::kCounter;
                fixed = true;
              }
          }
          if (!fixed) {
            auto conversion = [&](const Child<typename G::SegmentId>& m) {
              if constexpr (requires { lower.prefetch(m.segment, m.index); })
                if (opt.tuning.prefetch) lower.prefetch(m.segment, m.index);
              conv.push_back({m.segment, m.index, m.gain, static_cast<std::uint32_t>(k)});
            };
            int legal;
            if constexpr (HasConversions<G>) {
              // Non-converting moves are only counted: no need to rank their children.
              const MoveCount mc = g.for_each_conversion(seg, p, conversion);
              legal = mc.legal;
              a.quiet = mc.quiet;
            } else {
              legal = g.for_each_move(seg, p, [&](const Child<typename G::SegmentId>& m) {
                if (m.converts)
                  conversion(m);
                else
                  ++a.quiet;
              });
            }
            if (legal == 0) a.fixed = g.no_move_value(seg, p);
          }
          if (first + k + 1 < end) g.next(seg, p);
        }
        for (const Conv& m : conv) {
          Acc& a = acc[m.owner];
          const int cv = static_cast<int>(lower(m.segment, m.index));
          if constexpr (K == ValueKind::score) {
            a.best = std::max(a.best, m.gain - cv);
          } else if constexpr (K == ValueKind::dtm) {
            if (cv == 0)
              a.draw = true;
            else if (cv & 1)
              a.floor = std::max(a.floor, opt.dtc ? 2 : cv + 1);
            else
              a.win = std::min(a.win, opt.dtc ? 1 : cv + 1);
          } else {
            if (cv == 0)
              a.draw = true;
            else if (cv == 2)
              a.win = 1;
          }
        }
        for (std::uint64_t k = 0; k < nb; ++k) {
          const Acc& a = acc[k];
          int v, quiet = a.quiet;
          if (a.fixed == kHole) {
            values[first + k] = 0;
            state[first + k] = bw::kDecided;  // never a seed, never reached
            continue;
          }
          if (a.fixed != INT_MIN) {
            v = a.fixed;
          } else if constexpr (K == ValueKind::score) {
            v = a.best;
          } else if constexpr (K == ValueKind::dtm) {
            v = a.win <= 254 ? a.win : a.floor;
            if (a.win == 255 || (a.win == 256 && a.floor > 254)) bad |= 2;
          } else {
            v = a.win == 1 ? 1 : 2;
          }
          if (a.draw) ++quiet;  // a drawing escape: never a loss
          if (quiet > bw::kCounter) bad |= 1;
          const auto vb = static_cast<std::uint8_t>(v);
          values[first + k] = vb;
          state[first + k] = static_cast<std::uint8_t>(quiet);
          ++local[vb];
        }
      }
      progress_advance(opt.progress, end - begin);
    }
#pragma omp critical
    for (int k = 0; k < 256; ++k) hist[k] += local[k];
  }
  if (bad & 1)
    return Error(Errc::internal, fmt::format("{}: a position has more than {} moves inside its "
                                             "segment",
                                             opt.label, int{bw::kCounter}));
  if (bad & 2)
    return Error(Errc::resource, fmt::format("{}: a distance exceeds 254 plies, which one byte "
                                             "cannot hold",
                                             opt.label));
  st.init_seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  // ---- propagation --------------------------------------------------------------------------
  t0 = Clock::now();
  std::vector<std::uint64_t> frontier, next;
  std::vector<std::vector<std::uint64_t>> parts(static_cast<std::size_t>(threads));
  bool packed = false;
  if constexpr (HasPacking<G>) packed = opt.tuning.pack_frontier && g.packable(seg);
  auto entry_of = [&](std::uint64_t i, const Pos& pos) -> std::uint64_t {
    if constexpr (HasPacking<G>)
      if (packed) return g.pack(seg, pos);
    (void)pos;
    return i;
  };
  auto position = [&](std::uint64_t e) -> Pos {
    if constexpr (HasPacking<G>)
      if (packed) return g.unpack(seg, e);
    return g.unrank(seg, e);
  };

  // Claims the undecided seeds of (stage, level) in one pass over the segment. The vector path
  // tests 32 positions per step and looks at single positions only where a lane matched.
  auto scan_seeds = [&](int stage, int level) {
    const auto t_scan = Clock::now();
    const bw::SeedCodes code = R::seeds(stage, level);
    auto match = [&](std::uint64_t i) {
      const std::uint8_t s = state[i];
      if (s & bw::kDecided) return false;
      const int v = values[i];
      return v == code.win || ((s & bw::kCounter) == 0 && v == code.loss);
    };
#pragma omp parallel num_threads(threads) if (chunks > 1)
    {
      auto& out = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t begin = c * chunk, end = std::min(size, begin + chunk);
        std::uint64_t i = begin;
        // Seeds come in ascending order: a cursor that steps over short gaps with next() is
        // cheaper than unranking every seed when frontiers hold packed positions.
        Pos cur{};
        std::uint64_t cur_i = UINT64_MAX;
        auto entry_at = [&](std::uint64_t j) -> std::uint64_t {
          if (!packed) return j;
          if (cur_i > j || j - cur_i > 16) {
            cur = g.unrank(seg, j);
          } else {
            while (cur_i < j) g.next(seg, cur), ++cur_i;
          }
          cur_i = j;
          return entry_of(j, cur);
        };
        auto take = [&](std::uint64_t j) {
          if (match(j)) {
            state[j] = static_cast<std::uint8_t>(state[j] | bw::kDecided);
            out.push_back(entry_at(j) | (R::is_loss(values[j]) ? bw::kLossBit : 0));
          }
        };
        if (opt.tuning.simd_scan) {
          using V32 = std::uint8_t __attribute__((vector_size(32)));
          using M32 = signed char __attribute__((vector_size(32)));  // lane masks: 0 or -1
          const V32 win = V32{} + static_cast<std::uint8_t>(code.win);
          const V32 loss = V32{} + static_cast<std::uint8_t>(code.loss);
          M32 win_on, loss_on;
          std::memset(&win_on, code.win >= 0 ? 0xff : 0, sizeof win_on);
          std::memset(&loss_on, code.loss >= 0 ? 0xff : 0, sizeof loss_on);
          const V32 decided = V32{} + bw::kDecided, counter = V32{} + bw::kCounter;
          for (; i + 32 <= end; i += 32) {
            V32 s, v;
            std::memcpy(&s, &state[i], 32);
            std::memcpy(&v, &values[i], 32);
            const M32 open = (s & decided) == 0;
            const M32 no_unknown = (s & counter) == 0;
            const M32 hit = open & (((v == win) & win_on) | ((v == loss) & loss_on & no_unknown));
            std::uint64_t w[4];
            std::memcpy(w, &hit, 32);
            if (!(w[0] | w[1] | w[2] | w[3])) continue;
            for (std::uint64_t j = i; j < i + 32; ++j) take(j);
          }
        }
        for (; i < end; ++i) take(i);
      }
    }
    std::vector<std::uint64_t> seeds;
    bw::gather(parts, seeds);
    frontier.insert(frontier.end(), seeds.begin(), seeds.end());
    st.scan_seconds += std::chrono::duration<double>(Clock::now() - t_scan).count();
  };

  // Decides the predecessors of one frontier level. Child lookups are random, so each task first
  // generates the predecessors of a batch of frontier entries and prefetches their bytes.
  auto expand = [&](int stage, int level) {
    const std::uint64_t n = frontier.size();
    // Tasks of 4096 entries (fewer with tiny test chunks, so that small graphs still split).
    const std::uint64_t kTask = std::clamp<std::uint64_t>(chunk / 16, 4, 4096);
    constexpr std::uint64_t kBatch = 64;
    std::uint64_t preds = 0;
#pragma omp parallel num_threads(threads) reduction(+ : preds) if (n > kTask)
    {
      auto& out = parts[static_cast<std::size_t>(omp_get_thread_num())];
      std::vector<std::pair<std::uint64_t, std::uint64_t>> buf;  // (index | loss, entry)
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t t = 0; t < n; t += kTask) {
        const std::uint64_t tend = std::min(n, t + kTask);
        for (std::uint64_t b = t; b < tend; b += kBatch) {
          buf.clear();
          for (std::uint64_t f = b; f < std::min(tend, b + kBatch); ++f) {
            const std::uint64_t loss = frontier[f] & bw::kLossBit;
            g.for_each_unmove(seg, position(frontier[f] & ~bw::kLossBit),
                              [&](std::uint64_t p, const Pos& pp) {
                                if (opt.tuning.prefetch) {
                                  __builtin_prefetch(&state[p], 1);
                                  __builtin_prefetch(&values[p], 1);
                                }
                                buf.emplace_back(p | loss, entry_of(p, pp));
                              });
          }
          preds += buf.size();
          for (const auto& [e, p_entry] : buf) {
            const std::uint64_t p = e & ~bw::kLossBit;
            std::uint8_t& sp = state[p];
            if (bw::load(sp) & bw::kDecided) continue;
            if (e >> 63) {
              // The child is lost for its mover: p wins by moving there.
              if (bw::claim(sp)) {
                bw::store(values[p], R::win_value(stage, level));
                out.push_back(p_entry);  // a win: no loss bit
              }
            } else {
              const std::uint8_t old =
                  std::atomic_ref<std::uint8_t>(sp).fetch_sub(1, std::memory_order_relaxed);
              if ((old & bw::kCounter) == 1 && !(old & bw::kDecided) &&
                  R::loss_ready(bw::load(values[p]), stage, level) && bw::claim(sp)) {
                bw::store(values[p], R::loss_value(stage, level));
                out.push_back(p_entry | bw::kLossBit);
              }
            }
          }
        }
        progress_advance(opt.progress, tend - t);
      }
    }
    st.predecessors += preds;
    bw::gather(parts, next);
  };

  // Stages and the levels in which seeds can appear.
  std::vector<int> stages;
  int last_seed_level = 0;
  if constexpr (K == ValueKind::score) {
    for (int k = g.score_bound(seg); k >= 1; --k) stages.push_back(k);
  } else {
    stages.push_back(0);
    for (int v = 1; v < 256; ++v)
      if (hist[static_cast<std::size_t>(v)]) last_seed_level = v;
  }
  for (const int stage : stages) {
    if constexpr (K == ValueKind::score) {
      if (!hist[static_cast<std::uint8_t>(stage)] && !hist[static_cast<std::uint8_t>(-stage)])
        continue;  // nothing can be seeded at this threshold, so nothing can join W_k or L_k
    }
    ++st.stages;
    frontier.clear();
    const int first = K == ValueKind::dtm ? 1 : 0;
    for (int level = first;; ++level) {
      const bool seeds = R::kSeedsEveryLevel ? level < 256 && hist[static_cast<std::size_t>(level)]
                                             : level == first;
      if (seeds) scan_seeds(stage, level);
      if (frontier.empty()) {
        if (R::kSeedsEveryLevel && level < last_seed_level) continue;
        break;
      }
      if constexpr (K == ValueKind::dtm) {
        if (level >= 254)
          return Error(Errc::resource, fmt::format("{}: a distance exceeds 254 plies, which one "
                                                   "byte cannot hold",
                                                   opt.label));
      }
      st.decided += frontier.size();
      st.max_frontier = std::max<std::uint64_t>(st.max_frontier, frontier.size());
      ++st.levels;
      progress_phase(opt.progress,
                     K == ValueKind::score
                         ? fmt::format("{}: threshold {} level {}", opt.label, stage, level)
                         : fmt::format("{}: level {}", opt.label, level),
                     frontier.size());
      expand(stage, level);
      frontier.swap(next);
    }
  }

  // ---- final: whatever is undecided is endless play (0) or a draw (0) ---------------------------
#pragma omp parallel for schedule(static) num_threads(threads) if (chunks > 1)
  for (std::uint64_t i = 0; i < size; ++i)  // branch-free, so that it vectorizes
    values[i] = static_cast<std::uint8_t>(values[i] & -static_cast<int>(state[i] >> 7));
  st.propagate_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return st;
}

}  // namespace retra::kernels
