// The synthetic game of the backward kernel's tests: a game given as an explicit random graph,
// for every value kind, and the helpers that run the kernel on it (with checkpoints kept in
// memory, partitions or out of core). Header for tests only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "kernels/backward.hpp"

namespace retra::graph_test {

// A game given as an explicit graph. Quiet moves stay in segment 0; a converting move leads to
// position j of segment 1, whose (already known) value is exit_value[j], and earns `gain`.
template <ValueKind K>
struct Graph {
  using Position = std::uint64_t;
  using SegmentId = int;
  static constexpr std::string_view kName = "graph";
  static constexpr std::string_view kVariant = "test", kIndexer = "identity", kValueEncoding = "u8";
  static constexpr ValueKind kValueKind = K;
  struct Exit {
    std::uint64_t target;
    int gain;
  };
  std::vector<std::vector<std::uint64_t>> quiet, preds;
  std::vector<std::vector<Exit>> exits;
  std::vector<int> exit_value;
  std::vector<int> no_move;
  std::vector<std::optional<int>> terminal;
  int bound = 0;

  std::uint64_t segment_size(int) const { return quiet.size(); }
  Position unrank(int, std::uint64_t i) const { return i; }
  std::uint64_t rank(int, const Position& p) const { return p; }
  bool next(int, Position& p) const { return ++p < quiet.size(); }
  int no_move_value(int, const Position& p) const { return no_move[p]; }
  int score_bound(int) const { return bound; }
  std::optional<int> terminal_value(int, const Position& p) const { return terminal[p]; }
  template <class F>
  int for_each_move(int, const Position& p, F&& f) const {
    for (auto c : quiet[p]) f(Child<int>{0, c, 0, false});
    for (const auto& e : exits[p]) f(Child<int>{1, e.target, e.gain, true});
    return static_cast<int>(quiet[p].size() + exits[p].size());
  }
  template <class F>
  void for_each_unmove(int, const Position& q, F&& f) const {
    for (auto p : preds[q]) f(p, p);
  }
};

// The same game declaring positions with hundreds of moves: the kernel must count them in
// 16-bit cells.
template <ValueKind K>
struct WideGraph : Graph<K> {
  static constexpr int kMaxMoves = 1000;
};
static_assert(sizeof(kernels::bw::CellFor<Graph<ValueKind::dtm>>) == 1);
static_assert(sizeof(kernels::bw::CellFor<WideGraph<ValueKind::dtm>>) == 2);

// wide: about one position in five gets 128..300 quiet moves (more than a 7-bit counter holds).
template <ValueKind K>
Graph<K> random_graph(std::uint64_t seed, std::size_t n, bool wide = false) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return static_cast<int>(lo + rng() % (hi - lo + 1)); };
  Graph<K> g;
  g.quiet.resize(n);
  g.preds.resize(n);
  g.exits.resize(n);
  g.no_move.resize(n);
  g.terminal.resize(n);
  for (int j = 0; j < 40; ++j) {
    if constexpr (K == ValueKind::score) {
      g.exit_value.push_back(pick(-6, 6));
    } else if constexpr (K == ValueKind::dtz) {
      // Children decided near the start and around the 100-ply horizon, or drawn.
      const int l = pick(0, 1) ? pick(0, 6) : pick(98, 103);
      g.exit_value.push_back(pick(0, 3) == 0 ? 0 : pick(0, 1) && l ? 2 * l + 1 : 2 * l + 2);
    } else if constexpr (K == ValueKind::dtm)
      g.exit_value.push_back(pick(0, 3) == 0 ? 0 : pick(1, 30));
    else
      g.exit_value.push_back(pick(0, 2));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const int q = wide && pick(0, 4) == 0 ? pick(128, 300) : pick(0, 3);
    const int e = pick(0, 3) == 0 ? pick(1, 2) : 0;
    for (int k = 0; k < q; ++k) g.quiet[i].push_back(rng() % n);  // duplicates allowed
    for (int k = 0; k < e; ++k)
      g.exits[i].push_back({rng() % g.exit_value.size(), K == ValueKind::score ? pick(0, 3) : 0});
    if constexpr (K == ValueKind::score) {
      g.no_move[i] = pick(-8, 8);
    } else if constexpr (K == ValueKind::dtz) {
      g.no_move[i] = pick(0, 2) ? 2 : 0;  // mated, or stalemate
    } else {
      g.no_move[i] = 2;
      if (pick(0, 19) == 0) g.terminal[i] = 1;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (auto c : g.quiet[i]) g.preds[c].push_back(i);
  int b = 8;
  for (int v : g.exit_value) b = std::max(b, std::abs(v) + 3);
  g.bound = b;
  return g;
}

// Checkpoints kept in memory. Save number crash_at (counting from 1) is kept and then fails, as
// a kill right after it would; every level boundary is due.
struct MemoryCheckpoints : kernels::Checkpoints {
  int crash_at = 0, saves = 0;
  std::optional<std::vector<std::uint8_t>> meta;
  std::vector<std::vector<std::uint8_t>> arrays;
  bool due() override { return true; }
  Status save(std::span<const std::uint8_t> m, std::span<const std::span<const std::uint8_t>> a,
              const kernels::CheckpointPoint&) override {
    meta.emplace(m.begin(), m.end());
    arrays.clear();
    for (const auto& x : a) arrays.emplace_back(x.begin(), x.end());
    if (++saves == crash_at) return Error(Errc::internal, "killed");
    return {};
  }
  std::optional<std::vector<std::uint8_t>> load_meta() override { return meta; }
  Status load_arrays(std::span<const std::span<std::uint8_t>> a) override {
    if (a.size() != arrays.size()) return Error(Errc::mismatch, "arrays");
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (a[k].size() != arrays[k].size()) return Error(Errc::mismatch, "array size");
      std::copy(arrays[k].begin(), arrays[k].end(), a[k].begin());
    }
    return {};
  }
};

// The converting moves' values, one type for every run of the kernel on a graph: each (game,
// lookup) pair instantiates the whole kernel, which is most of these tests' compile time.
template <class G>
struct ExitValues {
  const G* g;
  int operator()(int, std::uint64_t j) const { return g->exit_value[j]; }
};

// The kernel on segment 0 of a graph game. The plain graphs' instantiations are compiled once,
// in backward_graph.cpp, for both test files that run them.
template <class G>
Result<kernels::BackwardStats> backward_on(const G& g, std::span<std::uint8_t> values,
                                           const kernels::BackwardOptions& opt) {
  return kernels::backward(g, 0, values, ExitValues<G>{&g}, opt);
}
#define RETRA_GRAPH_TEST_RUNS(prefix)                                                            \
  prefix template Result<kernels::BackwardStats> backward_on(                                    \
      const Graph<ValueKind::score>&, std::span<std::uint8_t>, const kernels::BackwardOptions&); \
  prefix template Result<kernels::BackwardStats> backward_on(                                    \
      const Graph<ValueKind::dtm>&, std::span<std::uint8_t>, const kernels::BackwardOptions&);   \
  prefix template Result<kernels::BackwardStats> backward_on(                                    \
      const Graph<ValueKind::wdl>&, std::span<std::uint8_t>, const kernels::BackwardOptions&);   \
  prefix template Result<kernels::BackwardStats> backward_on(                                    \
      const Graph<ValueKind::dtz>&, std::span<std::uint8_t>, const kernels::BackwardOptions&);
RETRA_GRAPH_TEST_RUNS(extern)

template <class G>
Result<kernels::BackwardStats> run_kernel(const G& g, std::vector<std::uint8_t>& values,
                                          int threads, kernels::Checkpoints* ck,
                                          std::uint64_t partitions = 0,
                                          kernels::OutOfCore* ooc = nullptr) {
  kernels::BackwardOptions opt;
  opt.threads = threads;
  opt.chunk = 16;
  opt.checkpoints = ck;
  opt.partitions = partitions;
  opt.out_of_core = ooc;
  // On two threads the frontiers in memory start with room for one entry: they grow while
  // filled, and a checkpoint's frontier is restored into a grown one.
  opt.frontier_room = threads == 2 ? 1 : 0;
  return backward_on(g, std::span(values), opt);
}

// A random graph game with the values and counts of an uninterrupted, unpartitioned run on one
// thread: what the runs under test must reproduce.
template <ValueKind K>
struct Solved {
  Graph<K> g;
  std::vector<std::uint8_t> want;
  Result<kernels::BackwardStats> clean;
};
template <ValueKind K>
Solved<K> solved_graph(std::uint64_t seed, std::size_t n) {
  Graph<K> g = random_graph<K>(seed, n);
  std::vector<std::uint8_t> want(g.quiet.size());
  auto clean = run_kernel(g, want, 1, nullptr);
  return {std::move(g), std::move(want), std::move(clean)};
}

// The counts of a run equal those of an uninterrupted, unpartitioned one.
inline void expect_same_counts(const kernels::BackwardStats& got,
                               const kernels::BackwardStats& want) {
  EXPECT_EQ(got.stages, want.stages);
  EXPECT_EQ(got.levels, want.levels);
  EXPECT_EQ(got.decided, want.decided);
  EXPECT_EQ(got.predecessors, want.predecessors);
  EXPECT_EQ(got.max_frontier, want.max_frontier);
}

}  // namespace retra::graph_test
