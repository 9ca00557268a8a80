// Forward iteration for score games (van der Goot, CG 2000, Fig. 3): a capture phase that records
// the best converting move of every position, then sweeps over the segment in index order until a
// sweep changes nothing. Parallel over index chunks (one chunk = one compression block).
// Where memory allows, the quiet moves found by the forward move generator are kept as an explicit
// graph (children and, transposed, parents), and each round re-examines only the positions a child
// of which changed in the round before: about 4 evaluations per position instead of one per sweep
// (docs/PERFORMANCE.md). No unmove generator is needed for that.
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
#include <bit>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/kernel_options.hpp"
#include "retra/game.hpp"
#include "src/memory.hpp"

namespace retra::kernels {

inline constexpr std::int8_t kNoExit = INT8_MIN;  // no converting move and not terminal

// tuning.prefetch = false selects the straightforward sweep, one position at a time.
using ForwardOptions = KernelOptions;

struct ForwardStats {
  int iterations = 0;                  // sweeps or rounds, including the last that changed nothing
  std::vector<std::uint64_t> changed;  // values changed per sweep or round
  double capture_seconds = 0;
  double iterate_seconds = 0;
  bool graph = false;             // rounds over the explicit graph (else whole-segment sweeps)
  std::uint64_t edges = 0;        // graph: quiet moves kept
  std::uint64_t graph_bytes = 0;  // graph: bytes of its arrays
  std::uint64_t evaluations = 0;  // positions re-examined in all sweeps or rounds
  double graph_seconds = 0;       // graph: filling the children and transposing them
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

// f(child index) for each quiet (non-converting) move of p; a hole of the index has none.
template <Game G, class F>
void quiet_children(const G& g, const typename G::SegmentId& seg, const typename G::Position& p,
                    F&& f) {
  if constexpr (HasValidity<G>)
    if (!g.is_valid(seg, p)) return;
  if constexpr (HasQuietChildren<G>) {
    g.for_each_quiet_child(seg, p, f);
  } else {
    g.for_each_move(seg, p, [&](const Child<typename G::SegmentId>& m) {
      if (!m.converts) f(m.index);
    });
  }
}

// The quiet moves of a segment as an explicit graph, both ways, in compressed sparse rows of
// 32-bit indices (segments up to 2^32 positions and 2^32 moves):
//
//   child_begin [size + 1]   children of i: children[child_begin[i] .. child_begin[i + 1])
//   children    [edges]
//   parent_begin[size + 2]   parents of i:  parents[parent_begin[i] .. parent_begin[i + 1])
//   parents     [edges]      (the extra entry serves the parallel fill)
//   dirty, next [size / 64]  bitmaps: to re-examine in this round, in the next
struct QuietGraph {
  LargeArray<std::uint32_t> child_begin, children, parent_begin, parents;
  LargeArray<std::uint64_t> dirty, next;
  static std::uint64_t bytes(std::uint64_t size, std::uint64_t edges) {
    return 4 * (2 * size + 3) + 8 * edges + 16 * ((size + 63) / 64);
  }
};
static_assert(sizeof(std::uint32_t) == 4 && sizeof(std::uint64_t) == 8);

inline void mark(LargeArray<std::uint64_t>& bits, std::uint64_t i) noexcept {
  std::atomic_ref<std::uint64_t> w(bits[i >> 6]);
  const std::uint64_t b = std::uint64_t{1} << (i & 63);
  // Most marks hit a word another changed child already marked: read before the locked write.
  if (!(w.load(std::memory_order_relaxed) & b)) w.fetch_or(b, std::memory_order_relaxed);
}

// a[i] += a[i - 1] for i in 1..n-1, in parallel: each thread sums its slice, the slices' totals
// are summed once, then each thread adds its offset. The caller has checked the total fits T.
template <class T>
void inclusive_scan(T* a, std::uint64_t n, int threads) {
  if (threads <= 1 || n < (std::uint64_t{1} << 16)) {
    for (std::uint64_t i = 1; i < n; ++i) a[i] += a[i - 1];
    return;
  }
  std::vector<T> part(static_cast<std::size_t>(threads) + 1, 0);
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    const auto nt = static_cast<std::uint64_t>(omp_get_num_threads());
    const std::uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
    T sum = 0;
    for (std::uint64_t i = lo; i < hi; ++i) a[i] = sum += a[i];
    part[t + 1] = sum;
#pragma omp barrier
#pragma omp single
    for (std::uint64_t k = 1; k <= nt; ++k) part[k] += part[k - 1];
    const T offset = part[t];
    if (offset)
      for (std::uint64_t i = lo; i < hi; ++i) a[i] += offset;
  }
}

// Allocates the rest of the graph once child_begin holds the counts; turns them into offsets.
inline bool allocate_graph(QuietGraph& gr, std::uint64_t size, std::uint64_t edges, bool huge,
                           int threads) {
  auto ch = LargeArray<std::uint32_t>::allocate(edges, huge);
  auto pb = LargeArray<std::uint32_t>::allocate(size + 2, huge);
  auto pa = LargeArray<std::uint32_t>::allocate(edges, huge);
  auto d = LargeArray<std::uint64_t>::allocate((size + 63) / 64, huge);
  auto n = LargeArray<std::uint64_t>::allocate((size + 63) / 64, huge);
  if (!ch || !pb || !pa || !d || !n) return false;
  gr.children = std::move(*ch);
  gr.parent_begin = std::move(*pb);
  gr.parents = std::move(*pa);
  gr.dirty = std::move(*d);
  gr.next = std::move(*n);
  inclusive_scan(gr.child_begin.data(), size + 1, threads);
  return true;
}

// The iteration phase on the explicit graph. Round 1 examines every position; a position whose
// value changes marks its parents for the next round, so a position is left out of a round only
// if none of its children changed since it was last examined. Values are read and written in
// place as in the sweeps, so every value written is still a cut-off value of the game and a round
// that changes nothing leaves every position consistent with its children: the same fixed point
// (docs/ARCHITECTURE.md).
template <Game G>
ForwardStats iterate_on_graph(const G& g, const typename G::SegmentId& seg,
                              std::span<std::int8_t> values, std::span<const std::int8_t> exits,
                              QuietGraph& gr, const ForwardOptions& opt, ForwardStats st) {
  using Clock = std::chrono::steady_clock;
  const std::uint64_t size = values.size();
  const int threads = std::max(1, opt.threads);
  auto t0 = Clock::now();
  st.graph = true;
  st.edges = gr.child_begin[size];
  st.graph_bytes = QuietGraph::bytes(size, st.edges);

  // Children, from the move generator a second time (the first pass only counted them).
  progress_phase(opt.progress, opt.label + ": quiet moves", size);
  for_chunks(g, seg, size, opt, [&](const typename G::Position& p, std::uint64_t i) {
    std::uint32_t k = gr.child_begin[i];
    quiet_children(g, seg, p,
                   [&](std::uint64_t c) { gr.children[k++] = static_cast<std::uint32_t>(c); });
    return std::uint64_t{0};
  });
  // Parents: count into parent_begin[c + 2], sum, then fill through parent_begin[c + 1], which
  // leaves parent_begin[c] .. parent_begin[c + 1] around the parents of c.
  const auto ssize = static_cast<std::int64_t>(size);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < ssize; ++i)
    for (std::uint32_t j = gr.child_begin[i]; j < gr.child_begin[i + 1]; ++j)
      std::atomic_ref<std::uint32_t>(gr.parent_begin[gr.children[j] + 2])
          .fetch_add(1, std::memory_order_relaxed);
  inclusive_scan(gr.parent_begin.data(), size + 2, threads);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < ssize; ++i)
    for (std::uint32_t j = gr.child_begin[i]; j < gr.child_begin[i + 1]; ++j) {
      const std::uint32_t at = std::atomic_ref<std::uint32_t>(gr.parent_begin[gr.children[j] + 1])
                                   .fetch_add(1, std::memory_order_relaxed);
      gr.parents[at] = static_cast<std::uint32_t>(i);
    }
  st.graph_seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  t0 = Clock::now();
  const std::uint64_t words = (size + 63) / 64;
  const auto swords = static_cast<std::int64_t>(words);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t w = 0; w < swords; ++w) gr.dirty[w] = ~std::uint64_t{0};
  if (size % 64) gr.dirty[words - 1] = (std::uint64_t{1} << (size % 64)) - 1;
  // A task is one chunk of positions, so a round's progress advances as the sweeps' did.
  const std::uint64_t task_words = std::max<std::uint64_t>(1, opt.chunk / 64);
  const auto tasks = static_cast<std::int64_t>((words + task_words - 1) / task_words);
  while (true) {
    progress_phase(opt.progress, opt.label + ": round " + std::to_string(st.iterations + 1), size);
    std::uint64_t changed = 0, examined = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) \
    reduction(+ : changed, examined) if (tasks > 1)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::uint64_t w0 = static_cast<std::uint64_t>(t) * task_words;
      const std::uint64_t w1 = std::min(words, w0 + task_words);
      for (std::uint64_t w = w0; w < w1; ++w) {
        std::uint64_t bits = gr.dirty[w];
        if (!bits) continue;
        gr.dirty[w] = 0;  // this task owns the word; marks of this round go to `next`
        examined += static_cast<std::uint64_t>(std::popcount(bits));
        do {
          const std::uint64_t i = w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
          bits &= bits - 1;
          int v = exits[i];
          for (std::uint32_t j = gr.child_begin[i]; j < gr.child_begin[i + 1]; ++j)
            v = std::max(v, -static_cast<int>(load(values[gr.children[j]])));
          if (v == load(values[i])) continue;
          store(values[i], static_cast<std::int8_t>(v));
          ++changed;
          for (std::uint32_t j = gr.parent_begin[i]; j < gr.parent_begin[i + 1]; ++j)
            mark(gr.next, gr.parents[j]);
        } while (bits);
      }
      progress_advance(opt.progress, std::min(size, w1 * 64) - w0 * 64);
    }
    std::swap(gr.dirty, gr.next);  // `next` is all zero again: every task cleared its words
    ++st.iterations;
    st.changed.push_back(changed);
    st.evaluations += examined;
    if (changed == 0) break;
  }
  st.iterate_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return st;
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

  // The graph is tried where its smallest possible size fits; the capture phase then also counts
  // each position's quiet moves (child_begin[i + 1]), which settles whether it fits.
  detail::QuietGraph graph;
  bool use_graph = opt.tuning.graph && size < (std::uint64_t{1} << 32) &&
                   detail::QuietGraph::bytes(size, 0) <= opt.graph_bytes;
  if (use_graph) {
    auto a = LargeArray<std::uint32_t>::allocate(size + 1, opt.tuning.huge_pages);
    if (a) graph.child_begin = std::move(*a);
    use_graph = static_cast<bool>(a);
  }

  // Capture phase: exits[i] = best value over converting moves, or the no-move value.
  auto t0 = Clock::now();
  progress_phase(opt.progress, opt.label + ": capture phase", size);
  detail::for_chunks(g, seg, size, opt, [&](const typename G::Position& p, std::uint64_t i) {
    if (use_graph) {
      std::uint32_t quiet = 0;
      detail::quiet_children(g, seg, p, [&](std::uint64_t) { ++quiet; });
      graph.child_begin[i + 1] = quiet;
    }
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

  if (use_graph) {
    std::uint64_t edges = 0;
    const auto ssize = static_cast<std::int64_t>(size);
#pragma omp parallel for schedule(static) num_threads(std::max(1, opt.threads)) reduction(+ : edges)
    for (std::int64_t i = 1; i <= ssize; ++i) edges += graph.child_begin[i];
    use_graph =
        edges < (std::uint64_t{1} << 32) &&
        detail::QuietGraph::bytes(size, edges) <= opt.graph_bytes &&
        detail::allocate_graph(graph, size, edges, opt.tuning.huge_pages, std::max(1, opt.threads));
    if (use_graph) return detail::iterate_on_graph(g, seg, values, exits, graph, opt, st);
    graph = {};  // too large after all: sweep the whole segment
  }

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
    int v = exits[i];  // a hole of the index: 0 and no children, so it never changes
    detail::quiet_children(g, seg, p, [&](std::uint64_t child) {
      v = std::max(v, -static_cast<int>(detail::load(values[child])));
    });
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
      st.evaluations += size;
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
            detail::quiet_children(g, seg, p, collect);  // a hole has none: it stays 0
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
    st.evaluations += size;
    st.changed.push_back(changed);
    if (changed == 0) break;
  }
  st.iterate_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return st;
}

}  // namespace retra::kernels
