// Forward iteration for score games (van der Goot, CG 2000, Fig. 3): a capture phase that records
// the best converting move of every position, then sweeps over the segment in index order until a
// sweep changes nothing. Parallel over index chunks (one chunk = one compression block).
//
// Thread safety and determinism: values are updated in place (Gauss-Seidel) while other threads
// read them, through relaxed atomic byte loads and stores. The final values do not depend on the
// interleaving: starting from 0 (the value of endless play), every value seen by any schedule is
// the value of the game cut off at some horizon >= the sweep count, which is bounded by the true
// value and reaches it after as many sweeps as the longest forced line; a sweep that changes
// nothing proves a fixed point within those bounds, and that fixed point is unique
// (docs/ARCHITECTURE.md gives the argument). Only the number of sweeps depends on the schedule.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/kernel_options.hpp"
#include "retra/game.hpp"

namespace retra::kernels {

inline constexpr std::int8_t kNoExit = INT8_MIN;  // no converting move and not terminal

// tuning.prefetch = false selects the straightforward sweep, one position at a time.
using ForwardOptions = KernelOptions;

struct ForwardStats {
  int iterations = 0;                  // sweeps, including the last one that changed nothing
  std::vector<std::uint64_t> changed;  // values changed per sweep
  double capture_seconds = 0;
  double iterate_seconds = 0;
};

namespace detail {
inline std::int8_t load(const std::int8_t& v) noexcept {
  return std::atomic_ref<const std::int8_t>(v).load(std::memory_order_relaxed);
}
inline void store(std::int8_t& v, std::int8_t x) noexcept {
  std::atomic_ref<std::int8_t>(v).store(x, std::memory_order_relaxed);
}

// Runs body(position, index) over [0, size) in chunks, in parallel; returns the sum of
// body's results. A chunk starts with one unrank and then steps with next().
template <Game G, class Body>
std::uint64_t for_chunks(const G& g, const typename G::SegmentId& seg, std::uint64_t size,
                         const ForwardOptions& opt, Body&& body) {
  const std::uint64_t chunk = std::max<std::uint64_t>(1, opt.chunk);
  const std::uint64_t chunks = (size + chunk - 1) / chunk;
  std::uint64_t total = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads)) \
    reduction(+ : total) if (chunks > 1)
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const std::uint64_t begin = c * chunk, end = std::min(size, begin + chunk);
    typename G::Position p = g.unrank(seg, begin);
    std::uint64_t sum = 0;
    for (std::uint64_t i = begin;;) {
      sum += body(p, i);
      if (++i == end) break;
      g.next(seg, p);
    }
    total += sum;
    progress_advance(opt.progress, end - begin);
  }
  return total;
}
}  // namespace detail

// values: output, segment_size(seg) entries, must be zero on entry (0 = endless play).
// exits: scratch of the same size (the paper's capture database).
// lower(segment, index): value of a position in an already finished segment.
template <Game G, class Lower>
requires(G::kValueKind == ValueKind::score) ForwardStats
    forward_iteration(const G& g, const typename G::SegmentId& seg, std::span<std::int8_t> values,
                      std::span<std::int8_t> exits, Lower&& lower, const ForwardOptions& opt) {
  using Clock = std::chrono::steady_clock;
  ForwardStats st;
  const std::uint64_t size = g.segment_size(seg);

  // Capture phase: exits[i] = best value over converting moves, or the no-move value.
  auto t0 = Clock::now();
  progress_phase(opt.progress, opt.label + ": capture phase", size);
  detail::for_chunks(g, seg, size, opt, [&](const typename G::Position& p, std::uint64_t i) {
    if constexpr (HasValidity<G>) {
      if (!g.is_valid(seg, p)) {  // a hole of the index: 0, never visited again
        exits[i] = 0;
        return std::uint64_t{0};
      }
    }
    int best = kNoExit;
    auto conversion = [&](const Child<typename G::SegmentId>& c) {
      best = std::max(best, c.gain - static_cast<int>(lower(c.segment, c.index)));
    };
    int legal;
    if constexpr (HasConversions<G>) {
      legal = g.for_each_conversion(seg, p, conversion).legal;
    } else {
      legal = g.for_each_move(seg, p, [&](const Child<typename G::SegmentId>& c) {
        if (c.converts) conversion(c);
      });
    }
    if (legal == 0) best = g.no_move_value(seg, p);
    exits[i] = static_cast<std::int8_t>(best);
    return std::uint64_t{0};
  });
  st.capture_seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  // Iteration phase: v(p) = max(exit(p), max over quiet children -v(q)) until stable.
  // Child lookups are random reads in an array larger than the caches, so the sweep works in
  // batches: first compute the child indices of kBatch positions and prefetch their values, then
  // take the maxima. Reads may see values written later in the same sweep; the result is still
  // the same fixed point (see the file comment).
  t0 = Clock::now();
  constexpr std::uint64_t kBatch = 32;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, opt.chunk);
  const std::uint64_t chunks = (size + chunk - 1) / chunk;
  auto relax_one = [&](const typename G::Position& p, std::uint64_t i) {
    if constexpr (HasValidity<G>)
      if (!g.is_valid(seg, p)) return std::uint64_t{0};
    int v = exits[i];
    auto relax = [&](std::uint64_t child) {
      v = std::max(v, -static_cast<int>(detail::load(values[child])));
    };
    if constexpr (HasQuietChildren<G>) {
      g.for_each_quiet_child(seg, p, relax);
    } else {
      g.for_each_move(seg, p, [&](const Child<typename G::SegmentId>& m) {
        if (!m.converts) relax(m.index);
      });
    }
    if (v == detail::load(values[i])) return std::uint64_t{0};
    detail::store(values[i], static_cast<std::int8_t>(v));
    return std::uint64_t{1};
  };
  while (true) {
    progress_phase(opt.progress, opt.label + ": sweep " + std::to_string(st.iterations + 1), size);
    std::uint64_t changed = 0;
    if (!opt.tuning.prefetch) {
      changed = detail::for_chunks(g, seg, size, opt, relax_one);
      ++st.iterations;
      st.changed.push_back(changed);
      if (changed == 0) break;
      continue;
    }
#pragma omp parallel num_threads(std::max(1, opt.threads)) reduction(+ : changed) if (chunks > 1)
    {
      std::vector<std::uint64_t> kids;
      kids.reserve(kBatch * 8);
      std::uint32_t start[kBatch + 1];
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t begin = c * chunk, end = std::min(size, begin + chunk);
        typename G::Position p = g.unrank(seg, begin);
        for (std::uint64_t i = begin; i < end;) {
          const std::uint64_t first = i;
          std::uint64_t nb = 0;
          kids.clear();
          for (; nb < kBatch && i < end; ++nb) {
            start[nb] = static_cast<std::uint32_t>(kids.size());
            auto collect = [&](std::uint64_t child) {
              __builtin_prefetch(&values[child]);
              kids.push_back(child);
            };
            bool hole = false;
            if constexpr (HasValidity<G>) hole = !g.is_valid(seg, p);
            if (hole) {
              // no children: its value stays exits[i] = 0
            } else if constexpr (HasQuietChildren<G>) {
              g.for_each_quiet_child(seg, p, collect);
            } else {
              g.for_each_move(seg, p, [&](const Child<typename G::SegmentId>& m) {
                if (!m.converts) collect(m.index);
              });
            }
            if (++i < end) g.next(seg, p);
          }
          start[nb] = static_cast<std::uint32_t>(kids.size());
          for (std::uint64_t k = 0; k < nb; ++k) {
            int v = exits[first + k];
            for (std::uint32_t j = start[k]; j < start[k + 1]; ++j)
              v = std::max(v, -static_cast<int>(detail::load(values[kids[j]])));
            if (v != detail::load(values[first + k])) {
              detail::store(values[first + k], static_cast<std::int8_t>(v));
              ++changed;
            }
          }
        }
        progress_advance(opt.progress, end - begin);
      }
    }
    ++st.iterations;
    st.changed.push_back(changed);
    if (changed == 0) break;
  }
  st.iterate_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return st;
}

}  // namespace retra::kernels
