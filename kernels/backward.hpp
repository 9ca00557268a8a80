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
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "retra/error.hpp"
#include "retra/game.hpp"
#include "retra/progress.hpp"

namespace retra::kernels {

struct BackwardOptions {
  int threads = 1;
  std::uint64_t chunk = 1u << 16;  // positions per task in the passes over the whole segment
  Progress* progress = nullptr;
  std::string label;
};

struct BackwardStats {
  int stages = 0;                  // score: thresholds that had work; dtm/wdl: 1
  int levels = 0;                  // frontiers processed, over all stages
  std::uint64_t decided = 0;       // positions decided by propagation (the rest are 0 / draws)
  std::uint64_t max_frontier = 0;  // largest frontier (memory: 8 bytes per entry)
  std::uint64_t predecessors = 0;  // unmoves generated
  double init_seconds = 0, propagate_seconds = 0;
};

namespace bw {

// state[i], one byte per position:
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

template <ValueKind K>
struct Rules;

// Score (Awari): stage k = bound..1 computes W_k (mover forces >= k) and L_k (mover cannot avoid
// <= -k) as attractors; members of W_k \ W_{k+1} get k, of L_k \ L_{k+1} get -k.
template <>
struct Rules<ValueKind::score> {
  static constexpr bool kSeedsEveryLevel = false;
  static int val(std::uint8_t v) { return static_cast<std::int8_t>(v); }
  static bool win_seed(std::uint8_t v, int k, int) { return val(v) == k; }
  static bool loss_seed(std::uint8_t v, int k, int) { return val(v) == -k; }
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
  static bool win_seed(std::uint8_t v, int, int d) { return (d & 1) && v == d; }
  static bool loss_seed(std::uint8_t v, int, int d) { return !(d & 1) && v == d; }
  static bool is_loss(std::uint8_t v) { return v != 0 && !(v & 1); }
  static std::uint8_t win_value(int, int d) { return static_cast<std::uint8_t>(d + 1); }
  static bool loss_ready(std::uint8_t v, int, int d) { return v <= d + 1; }
  static std::uint8_t loss_value(int, int d) { return static_cast<std::uint8_t>(d + 1); }
};

// Win/draw/loss: one stage, seeds at the start, no distances.
template <>
struct Rules<ValueKind::wdl> {
  static constexpr bool kSeedsEveryLevel = false;
  static bool win_seed(std::uint8_t v, int, int) { return v == 1; }
  static bool loss_seed(std::uint8_t v, int, int) { return v == 2; }
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
                                                      std::span<std::uint8_t> values,
                                                      std::span<std::uint8_t> state, Lower&& lower,
                                                      const BackwardOptions& opt) {
  using Clock = std::chrono::steady_clock;
  using Pos = typename G::Position;
  constexpr ValueKind K = G::kValueKind;
  using R = bw::Rules<K>;
  const std::uint64_t size = g.segment_size(seg);
  const int threads = std::max(1, opt.threads);
  const std::uint64_t chunk = std::max<std::uint64_t>(1, opt.chunk);
  const std::uint64_t chunks = (size + chunk - 1) / chunk;
  BackwardStats st;

  // ---- initialization: counters and what the converting moves guarantee ------------------------
  auto t0 = Clock::now();
  progress_phase(opt.progress, opt.label + ": counting moves", size);
  std::array<std::uint64_t, 256> hist{};  // positions per initial values[] byte
  int bad = 0;                            // 1: > 127 moves, 2: distance overflow
#pragma omp parallel num_threads(threads)
  {
    std::array<std::uint64_t, 256> local{};
#pragma omp for schedule(dynamic, 1) reduction(| : bad)
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t begin = c * chunk, end = std::min(size, begin + chunk);
      Pos p = g.unrank(seg, begin);
      for (std::uint64_t i = begin;;) {
        int v = 0, quiet = 0;
        bool fixed = false;
        if constexpr (HasTerminalValue<G>) {
          if (auto t = g.terminal_value(seg, p)) {
            v = *t;
            fixed = true;
          }
        }
        if (!fixed) {
          int best = bw::kNoExit, win = 256, floor = 0;
          bool draw = false;
          const int legal = g.for_each_move(seg, p, [&](const Child<typename G::SegmentId>& m) {
            if (!m.converts) {
              ++quiet;
              return;
            }
            const int cv = static_cast<int>(lower(m.segment, m.index));
            if constexpr (K == ValueKind::score) {
              best = std::max(best, m.gain - cv);
            } else if constexpr (K == ValueKind::dtm) {
              if (cv == 0)
                draw = true;
              else if (cv & 1)
                floor = std::max(floor, cv + 1);
              else
                win = std::min(win, cv + 1);
            } else {
              if (cv == 0)
                draw = true;
              else if (cv == 2)
                win = 1;
            }
          });
          if (legal == 0) {
            v = g.no_move_value(seg, p);
          } else if constexpr (K == ValueKind::score) {
            v = best;
          } else if constexpr (K == ValueKind::dtm) {
            v = win <= 254 ? win : floor;
            if (win == 255 || (win == 256 && floor > 254)) bad |= 2;
          } else {
            v = win == 1 ? 1 : 2;
          }
          if (draw) ++quiet;  // a drawing escape: never a loss
        }
        if (quiet > bw::kCounter) bad |= 1;
        const auto vb = static_cast<std::uint8_t>(v);
        values[i] = vb;
        state[i] = static_cast<std::uint8_t>(quiet);
        ++local[vb];
        if (++i == end) break;
        g.next(seg, p);
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

  // Claims the undecided seeds of (stage, level) in one pass over the segment.
  auto scan_seeds = [&](int stage, int level) {
#pragma omp parallel num_threads(threads)
    {
      auto& out = parts[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t begin = c * chunk, end = std::min(size, begin + chunk);
        for (std::uint64_t i = begin; i < end; ++i) {
          const std::uint8_t s = state[i];
          if (s & bw::kDecided) continue;
          const std::uint8_t v = values[i];
          if (R::win_seed(v, stage, level) ||
              ((s & bw::kCounter) == 0 && R::loss_seed(v, stage, level))) {
            state[i] = static_cast<std::uint8_t>(s | bw::kDecided);
            out.push_back(i);
          }
        }
      }
    }
    std::vector<std::uint64_t> seeds;
    bw::gather(parts, seeds);
    frontier.insert(frontier.end(), seeds.begin(), seeds.end());
  };

  // Decides the predecessors of one frontier level. Child lookups are random, so each task first
  // generates the predecessors of a batch of frontier entries and prefetches their bytes.
  auto expand = [&](int stage, int level) {
    const std::uint64_t n = frontier.size();
    constexpr std::uint64_t kTask = 4096, kBatch = 64;
    std::uint64_t preds = 0;
#pragma omp parallel num_threads(threads) reduction(+ : preds)
    {
      auto& out = parts[static_cast<std::size_t>(omp_get_thread_num())];
      std::vector<std::uint64_t> buf;
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t t = 0; t < n; t += kTask) {
        const std::uint64_t tend = std::min(n, t + kTask);
        for (std::uint64_t b = t; b < tend; b += kBatch) {
          buf.clear();
          for (std::uint64_t f = b; f < std::min(tend, b + kBatch); ++f) {
            const std::uint64_t q = frontier[f];
            const std::uint64_t loss = R::is_loss(bw::load(values[q])) ? 1ull << 63 : 0;
            g.for_each_unmove(seg, g.unrank(seg, q), [&](std::uint64_t p) {
              __builtin_prefetch(&state[p], 1);
              buf.push_back(p | loss);
            });
          }
          preds += buf.size();
          for (const std::uint64_t e : buf) {
            const std::uint64_t p = e & ~(1ull << 63);
            std::uint8_t& sp = state[p];
            if (bw::load(sp) & bw::kDecided) continue;
            if (e >> 63) {
              // The child is lost for its mover: p wins by moving there.
              if (bw::claim(sp)) {
                bw::store(values[p], R::win_value(stage, level));
                out.push_back(p);
              }
            } else {
              const std::uint8_t old =
                  std::atomic_ref<std::uint8_t>(sp).fetch_sub(1, std::memory_order_relaxed);
              if ((old & bw::kCounter) == 1 && !(old & bw::kDecided) &&
                  R::loss_ready(bw::load(values[p]), stage, level) && bw::claim(sp)) {
                bw::store(values[p], R::loss_value(stage, level));
                out.push_back(p);
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
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::uint64_t i = 0; i < size; ++i)
    if (!(state[i] & bw::kDecided)) values[i] = 0;
  st.propagate_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return st;
}

}  // namespace retra::kernels
