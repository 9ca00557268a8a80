// The generic backward kernel on random graph games for every value kind, each against a naive
// solver written differently (score: one least fixed point per threshold by repeated sweeps;
// distance to mate, distance to zeroing and win/draw/loss: "wins / loses within t plies"
// recomputed for every t), with 1 to 5 threads; Awari: backward equals forward bit for bit
// on 0..12 stones; and the holes the kernel marks in a chess table.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

#include "awari_util.hpp"
#include "kernels/backward.hpp"
#include "local_cluster.hpp"
#include "src/build/finished.hpp"
#include "src/build/out_of_core.hpp"
#include "src/games/chess/game.hpp"

namespace retra {
namespace {

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

// Score by definition: for each k, W_k and L_k as least fixed points by repeated sweeps.
std::vector<int> naive_score(const Graph<ValueKind::score>& g) {
  const std::size_t n = g.quiet.size();
  std::vector<int> value(n, 0);
  for (int k = 1; k <= g.bound; ++k) {
    std::vector<char> w(n, 0), l(n, 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t p = 0; p < n; ++p) {
        if (w[p] || l[p]) continue;
        const bool moves = !g.quiet[p].empty() || !g.exits[p].empty();
        bool win = false, lose = true;
        if (!moves) {
          win = g.no_move[p] >= k;
          lose = g.no_move[p] <= -k;
        }
        for (const auto& e : g.exits[p]) {
          const int v = e.gain - g.exit_value[e.target];
          win |= v >= k;
          lose &= v <= -k;
        }
        for (auto c : g.quiet[p]) {
          win |= l[c] != 0;
          lose &= w[c] != 0;
        }
        if (win)
          w[p] = 1;
        else if (lose)
          l[p] = 1;
        changed |= win || lose;
      }
    }
    for (std::size_t p = 0; p < n; ++p) {
      if (w[p])
        value[p] = k;
      else if (l[p])
        value[p] = -k;
    }
  }
  return value;
}

// Distance to zeroing by definition: W(p, t) "wins with the next zeroing within t plies", L(p, t)
// "loses so", from scratch for every t; a conversion counts 1 ply, or 101 when the position it
// leads to is decided beyond the 100-ply horizon. The value is the first t at which either holds.
std::vector<int> naive_dtz(const Graph<ValueKind::dtz>& g, int most = 126) {
  const std::size_t n = g.quiet.size();
  std::vector<int> value(n, 0);
  std::vector<char> w(n, 0), l(n, 0);
  for (int t = 0; t <= most; ++t) {
    std::vector<char> w2(n, 0), l2(n, 0);
    for (std::size_t p = 0; p < n; ++p) {
      if (g.quiet[p].empty() && g.exits[p].empty()) {
        l2[p] = g.no_move[p] == 2;
        continue;
      }
      bool win = false, lose = true;
      for (const auto& e : g.exits[p]) {
        const int v = g.exit_value[e.target];
        const int level = v == 0 ? 0 : (v & 1 ? (v - 1) / 2 : (v - 2) / 2) <= 100 ? 1 : 101;
        if (v == 0) lose = false;  // a drawing escape
        if (v && !(v & 1)) {       // into a lost position: a win (never a loss)
          win = win || level <= t;
          lose = false;
        }
        if (v & 1) lose = lose && level <= t;  // into a won position
      }
      for (auto c : g.quiet[p]) {
        win |= t >= 1 && l[c] != 0;
        lose = lose && t >= 1 && w[c] != 0;
      }
      w2[p] = win;
      l2[p] = !win && lose;
    }
    for (std::size_t p = 0; p < n; ++p)
      if (!value[p] && (w2[p] || l2[p])) value[p] = w2[p] ? 2 * t + 1 : 2 * t + 2;
    w.swap(w2);
    l.swap(l2);
  }
  return value;
}

// Distance to mate by definition: W(p, t) "wins within t plies", L(p, t) "loses within t plies",
// recomputed from scratch for every t; the value is the first t at which either holds.
template <ValueKind K>
std::vector<int> naive_dtm(const Graph<K>& g) {
  const std::size_t n = g.quiet.size();
  std::vector<int> value(n, 0);
  std::vector<char> w(n, 0), l(n, 0);
  auto exit_dtm = [&](int j) {  // exit values in dtm terms (wdl: 1 win, 2 loss)
    return g.exit_value[static_cast<std::size_t>(j)];
  };
  for (int t = 1; t <= 254; ++t) {
    std::vector<char> w2(n, 0), l2(n, 0);
    for (std::size_t p = 0; p < n; ++p) {
      if (g.terminal[p]) {
        w2[p] = 1;
        continue;
      }
      const bool moves = !g.quiet[p].empty() || !g.exits[p].empty();
      bool win = false, lose = t >= 2;
      for (const auto& e : g.exits[p]) {
        const int v = exit_dtm(static_cast<int>(e.target));
        const bool child_win = K == ValueKind::dtm ? (v & 1) && v <= t - 1 : v == 1;
        const bool child_loss = K == ValueKind::dtm ? v && !(v & 1) && v <= t - 1 : v == 2;
        win |= child_loss;
        lose &= child_win;
      }
      for (auto c : g.quiet[p]) {
        win |= l[c] != 0;
        lose &= w[c] != 0;
      }
      (void)moves;
      w2[p] = win;
      l2[p] = !win && lose;
    }
    for (std::size_t p = 0; p < n; ++p)
      if (!value[p] && (w2[p] || l2[p])) value[p] = t;
    w.swap(w2);
    l.swap(l2);
  }
  if constexpr (K == ValueKind::wdl)
    for (auto& v : value) v = v == 0 ? 0 : (v & 1) ? 1 : 2;
  return value;
}

// Threads 1..3 use the default (vector scans, prefetch); 4 and 5 switch both off. Chunks are
// tiny so that even these small graphs are split between threads.
template <class G>
std::vector<int> kernel(const G& g, int threads,
                        std::vector<std::pair<std::uint64_t, std::uint32_t>>* far = nullptr) {
  constexpr ValueKind K = G::kValueKind;
  std::vector<std::uint8_t> values(g.quiet.size());
  kernels::BackwardOptions opt;
  opt.threads = threads > 3 ? threads - 3 : threads;
  opt.tuning.simd_scan = opt.tuning.prefetch = threads <= 3;
  opt.chunk = threads > 3 ? 7 : 16;
  auto st = kernels::backward(
      g, 0, std::span(values), [&](int, std::uint64_t j) { return g.exit_value[j]; }, opt);
  EXPECT_TRUE(st) << (st ? "" : st.error().message());
  std::vector<int> out;
  for (std::size_t i = 0; i < g.quiet.size(); ++i)
    out.push_back(K == ValueKind::score ? static_cast<std::int8_t>(values[i]) : values[i]);
  if (st && far) *far = st->far;
  if (st && !far) {
    EXPECT_TRUE(st->far.empty());
  }
  return out;
}

TEST(BackwardKernel, ScoreGamesMatchTheDefinition) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto g = random_graph<ValueKind::score>(seed, 40 + seed * 5);
    const auto want = naive_score(g);
    for (int threads : {1, 2, 3, 4, 5}) ASSERT_EQ(kernel(g, threads), want) << "seed " << seed;
  }
}

TEST(BackwardKernel, DistanceToMateMatchesTheDefinition) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto g = random_graph<ValueKind::dtm>(seed, 40 + seed * 5);
    const auto want = naive_dtm(g);
    for (int threads : {1, 2, 3, 4, 5}) ASSERT_EQ(kernel(g, threads), want) << "seed " << seed;
  }
}

TEST(BackwardKernel, WinDrawLossMatchesTheDefinition) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto g = random_graph<ValueKind::wdl>(seed, 40 + seed * 5);
    const auto want = naive_dtm(g);
    for (int threads : {1, 2, 3, 4, 5}) ASSERT_EQ(kernel(g, threads), want) << "seed " << seed;
  }
}

TEST(BackwardKernel, DistanceToZeroingMatchesTheDefinition) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto g = random_graph<ValueKind::dtz>(seed, 40 + seed * 5);
    const auto want = naive_dtz(g);
    for (int threads : {1, 2, 3, 4, 5}) {
      const auto got = kernel(g, threads);
      for (std::size_t p = 0; p < got.size(); ++p)
        ASSERT_EQ(got[p], want[p])
            << "seed " << seed << " position " << p << " threads " << threads << " quiet "
            << g.quiet[p].size() << " exits " << g.exits[p].size() << " no_move " << g.no_move[p];
    }
  }
}

// Distances to zeroing beyond a byte: random graphs with a chain of up to 300 quiet moves to a
// mate grafted on (its first 60 nodes reach back into the random part now and then, which may
// cut the chain there). Positions 127 plies
// or more from zeroing keep 253 (a win) or 254 (a loss) in their byte, and the run lists their
// exact codes, in index order, and no others.
TEST(BackwardKernel, DistanceToZeroingBeyondAByte) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    auto g = random_graph<ValueKind::dtz>(seed, 60 + seed * 5);
    std::mt19937_64 rng(seed);
    const std::size_t base = g.quiet.size(), chain = 150 + 15 * seed;
    for (std::size_t k = 0; k < chain; ++k) {
      g.quiet.emplace_back();
      g.exits.emplace_back();
      g.no_move.push_back(2);
      g.terminal.emplace_back();
      if (k > 0) g.quiet.back().push_back(base + k - 1);
      if (k > 0 && k < 60 && rng() % 8 == 0) g.quiet.back().push_back(rng() % base);
    }
    g.preds.assign(g.quiet.size(), {});
    for (std::size_t i = 0; i < g.quiet.size(); ++i)
      for (auto c : g.quiet[i]) g.preds[c].push_back(i);
    const auto want = naive_dtz(g, 400);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> want_far;
    for (std::size_t p = 0; p < want.size(); ++p)
      if (want[p] > 254) want_far.emplace_back(p, static_cast<std::uint32_t>(want[p]));
    if (seed == 12) {
      EXPECT_GT(want_far.size(), 50u);  // the test reaches far codes at all
    }
    for (int threads : {1, 2, 3, 4, 5}) {
      std::vector<std::pair<std::uint64_t, std::uint32_t>> far;
      const auto got = kernel(g, threads, &far);
      EXPECT_EQ(far, want_far) << "seed " << seed << " threads " << threads;
      for (std::size_t p = 0; p < got.size(); ++p)
        ASSERT_EQ(got[p], want[p] > 254 ? (want[p] & 1 ? 253 : 254) : want[p])
            << "seed " << seed << " position " << p << " threads " << threads;
    }
  }
}

TEST(BackwardKernel, WideCountersForGamesWithManyMoves) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    WideGraph<ValueKind::score> s;
    static_cast<Graph<ValueKind::score>&>(s) = random_graph<ValueKind::score>(seed, 300, true);
    const auto want_s = naive_score(s);
    WideGraph<ValueKind::dtm> d;
    static_cast<Graph<ValueKind::dtm>&>(d) = random_graph<ValueKind::dtm>(seed, 300, true);
    const auto want_d = naive_dtm(d);
    for (int threads : {1, 2, 4}) {
      ASSERT_EQ(kernel(s, threads), want_s) << "seed " << seed;
      ASSERT_EQ(kernel(d, threads), want_d) << "seed " << seed;
    }
  }
  // A game that does not declare them overflows one-byte counters: a typed error, no wrong value.
  const auto g = random_graph<ValueKind::dtm>(3, 300, true);
  std::vector<std::uint8_t> values(g.quiet.size());
  auto st = kernels::backward(
      g, 0, std::span(values), [&](int, std::uint64_t j) { return g.exit_value[j]; },
      kernels::BackwardOptions{});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().cause(), Cause::counter_overflow);
}

// A game without a king capture (kMatedCode 1): every distance to mate is one byte lower than in
// Fang's encoding, losses odd.
template <ValueKind K>
struct MatedOneGraph : Graph<K> {
  static constexpr int kMatedCode = 1;
};

TEST(BackwardKernel, MatedCodeOneCountsTheSameDistances) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto fang = random_graph<ValueKind::dtm>(seed, 60 + seed * 5);
    for (auto& t : fang.terminal) t.reset();  // no king captures
    for (auto& v : fang.exit_value) v = v == 1 ? 3 : v;
    MatedOneGraph<ValueKind::dtm> g;
    static_cast<Graph<ValueKind::dtm>&>(g) = fang;
    for (auto& v : g.exit_value) v = v ? v - 1 : 0;
    for (auto& v : g.no_move) v = 1;
    auto want = naive_dtm(fang);
    for (auto& v : want) v = v ? v - 1 : 0;
    for (int threads : {1, 2, 4}) ASSERT_EQ(kernel(g, threads), want) << "seed " << seed;
  }
}

// A chain 0 -> 1 -> ... -> n - 1, the last position mated: position 0 is n - 1 plies from mate.
template <class G>
G mate_chain(std::size_t n, int mated) {
  G g;
  g.quiet.assign(n, {});
  g.preds.assign(n, {});
  for (std::size_t i = 0; i + 1 < n; ++i) {
    g.quiet[i].push_back(i + 1);
    g.preds[i + 1].push_back(i);
  }
  g.exits.assign(n, {});
  g.no_move.assign(n, mated);
  g.terminal.assign(n, std::nullopt);
  return g;
}

// The longest distance a byte holds, and one ply more: a typed error, never a wrapped value.
TEST(BackwardKernel, DistancesToMateUpToTheLastByte) {
  auto run = [](const auto& g) {
    std::vector<std::uint8_t> values(g.quiet.size());
    auto st = kernels::backward(
        g, 0, std::span(values), [](int, std::uint64_t) { return 0; }, kernels::BackwardOptions{});
    return std::make_pair(std::move(st), values.empty() ? 0 : int{values[0]});
  };
  {  // Fang's encoding: 252 plies is byte 254, the last one (255 is reserved).
    auto [st, v] = run(mate_chain<Graph<ValueKind::dtm>>(253, 2));
    ASSERT_TRUE(st) << st.error().message();
    EXPECT_EQ(v, 254);
    auto [over, w] = run(mate_chain<Graph<ValueKind::dtm>>(254, 2));
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error().cause(), Cause::distance_overflow);
  }
  {  // Mated byte 1: 254 plies is byte 255.
    auto [st, v] = run(mate_chain<MatedOneGraph<ValueKind::dtm>>(255, 1));
    ASSERT_TRUE(st) << st.error().message();
    EXPECT_EQ(v, 255);
    auto [over, w] = run(mate_chain<MatedOneGraph<ValueKind::dtm>>(256, 1));
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error().cause(), Cause::distance_overflow);
    EXPECT_NE(over.error().message().find("254 plies"), std::string::npos)
        << over.error().message();
  }
}

TEST(BackwardKernel, HandSolvedDistances) {
  // 0 -> 1 -> 2, 2 is checkmated (no moves: 2); 3 can capture the king (1); 4 -> 3 only: 4 must
  // move into a position where the opponent takes its king: loses in 2.
  Graph<ValueKind::dtm> g;
  g.quiet = {{1}, {2}, {}, {}, {3}};
  g.exits.assign(5, {});
  g.no_move.assign(5, 2);
  g.terminal = {std::nullopt, std::nullopt, std::nullopt, 1, std::nullopt};
  g.preds.assign(5, {});
  for (std::uint64_t i = 0; i < 5; ++i)
    for (auto c : g.quiet[i]) g.preds[c].push_back(i);
  EXPECT_EQ(kernel(g, 2), (std::vector<int>{4, 3, 2, 1, 2}));
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
  return kernels::backward(
      g, 0, std::span(values), [&](int, std::uint64_t j) { return g.exit_value[j]; }, opt);
}

// The counts of a run equal those of an uninterrupted, unpartitioned one.
void expect_same_counts(const kernels::BackwardStats& got, const kernels::BackwardStats& want) {
  EXPECT_EQ(got.stages, want.stages);
  EXPECT_EQ(got.levels, want.levels);
  EXPECT_EQ(got.decided, want.decided);
  EXPECT_EQ(got.predecessors, want.predecessors);
  EXPECT_EQ(got.max_frontier, want.max_frontier);
}

// A run killed at any level boundary and run again resumes there and ends with the values and
// counts of a run that was never killed, whatever the threads of either run.
template <ValueKind K>
void resume_everywhere(std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto g = random_graph<K>(seed, 60 + seed * 7);
    std::vector<std::uint8_t> want(g.quiet.size());
    const auto clean = run_kernel(g, want, 1, nullptr);
    ASSERT_TRUE(clean);
    for (int crash_at = 1;; ++crash_at) {
      MemoryCheckpoints ck;
      ck.crash_at = crash_at;
      std::vector<std::uint8_t> values(g.quiet.size(), 0xAB);
      const auto killed = run_kernel(g, values, 1 + crash_at % 3, &ck);
      if (killed) {  // fewer boundaries than crash_at: nothing was killed
        EXPECT_EQ(values, want);
        ASSERT_GT(crash_at, 1);
        break;
      }
      std::fill(values.begin(), values.end(), std::uint8_t{0xCD});
      ck.crash_at = 0;
      const auto resumed = run_kernel(g, values, 1 + static_cast<int>(seed % 3), &ck);
      ASSERT_TRUE(resumed) << resumed.error().message();
      ASSERT_EQ(values, want) << "seed " << seed << " killed at save " << crash_at;
      EXPECT_GE(resumed->resumed_level, 0);
      EXPECT_EQ(resumed->init_seconds, 0.0);  // it did not count moves again
      expect_same_counts(*resumed, *clean);
    }
  }
}

TEST(BackwardCheckpoints, ScoreResumesAtEveryLevelBoundary) {
  resume_everywhere<ValueKind::score>(8);
}
TEST(BackwardCheckpoints, DistanceToMateResumesAtEveryLevelBoundary) {
  resume_everywhere<ValueKind::dtm>(8);
}
TEST(BackwardCheckpoints, WinDrawLossResumesAtEveryLevelBoundary) {
  resume_everywhere<ValueKind::wdl>(8);
}
TEST(BackwardCheckpoints, DistanceToZeroingResumesAtEveryLevelBoundary) {
  resume_everywhere<ValueKind::dtz>(8);
}

// A saved state that does not fit (another graph's, of another size) is not taken over.
TEST(BackwardCheckpoints, AStateOfAnotherSizeIsNotUsed) {
  const auto a = random_graph<ValueKind::dtm>(3, 90), b = random_graph<ValueKind::dtm>(4, 120);
  MemoryCheckpoints ck;
  ck.crash_at = 3;
  std::vector<std::uint8_t> va(a.quiet.size()), vb(b.quiet.size()), want(b.quiet.size());
  ASSERT_FALSE(run_kernel(a, va, 2, &ck));
  ck.crash_at = 0;
  ASSERT_TRUE(run_kernel(b, want, 1, nullptr));
  const auto st = run_kernel(b, vb, 2, &ck);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->resumed_level, -1);
  EXPECT_EQ(vb, want);
}

// The partitioned kernel (owner computes, updates bucketed by owner) gives the values and counts
// of the unpartitioned one for 1, 2, 3 and 7 partitions and for more partitions than positions.
template <ValueKind K>
void partitions_agree(std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto g = random_graph<K>(seed, 50 + seed * 9);
    std::vector<std::uint8_t> want(g.quiet.size());
    const auto clean = run_kernel(g, want, 1, nullptr);
    ASSERT_TRUE(clean);
    for (std::uint64_t parts : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3},
                                std::uint64_t{7}, std::uint64_t{g.quiet.size() + 5}}) {
      std::vector<std::uint8_t> values(g.quiet.size(), 0xEE);
      const auto st =
          run_kernel(g, values, 1 + static_cast<int>((seed + parts) % 3), nullptr, parts);
      ASSERT_TRUE(st);
      ASSERT_EQ(values, want) << "seed " << seed << ", " << parts << " partitions";
      expect_same_counts(*st, *clean);
    }
  }
}

TEST(BackwardPartitions, ScoreValuesDoNotDependOnThePartitions) {
  partitions_agree<ValueKind::score>(30);
}
TEST(BackwardPartitions, DistanceToMateValuesDoNotDependOnThePartitions) {
  partitions_agree<ValueKind::dtm>(30);
}
TEST(BackwardPartitions, WinDrawLossValuesDoNotDependOnThePartitions) {
  partitions_agree<ValueKind::wdl>(30);
}
TEST(BackwardPartitions, DistanceToZeroingValuesDoNotDependOnThePartitions) {
  partitions_agree<ValueKind::dtz>(30);
}

// Out of core (files, partitions of one chunk, one resident per thread and one more, updates
// spilled after every few): the values and counts of the in-memory kernel, for every kind, with
// and without a kill at a level boundary.
template <ValueKind K>
void out_of_core_agrees(std::uint64_t seeds) {
  const test::TempDir dir;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto g = random_graph<K>(seed, 60 + seed * 11);
    std::vector<std::uint8_t> want(g.quiet.size());
    const auto clean = run_kernel(g, want, 1, nullptr);
    ASSERT_TRUE(clean);
    for (std::uint64_t batch : {std::uint64_t{16}, std::uint64_t{1} << 20}) {
      const int threads = 1 + static_cast<int>((seed + batch) % 3);
      auto store = builder::FileOutOfCore::create(dir.path() / "a", 64, batch);
      ASSERT_TRUE(store) << store.error().message();
      auto mapped = (*store)->array("values", g.quiet.size(), false);
      ASSERT_TRUE(mapped);
      std::fill(mapped->begin(), mapped->end(), std::uint8_t{0xEE});
      std::vector<std::uint8_t> values(g.quiet.size());
      // The kernel writes the mapped values; the test compares a copy.
      kernels::BackwardOptions opt;
      opt.threads = threads;
      opt.chunk = 16;
      opt.out_of_core = store->get();
      const auto st = kernels::backward(
          g, 0, *mapped, [&](int, std::uint64_t j) { return g.exit_value[j]; }, opt);
      ASSERT_TRUE(st) << st.error().message();
      std::copy(mapped->begin(), mapped->end(), values.begin());
      ASSERT_EQ(values, want) << "seed " << seed << ", batch " << batch;
      expect_same_counts(*st, *clean);
      EXPECT_EQ(st->partitions, (g.quiet.size() + 15) / 16);
      if (batch == 16 && st->predecessors > 0) {
        EXPECT_GT(st->spilled_bytes, 0u);
      }
      // Killed at its third level boundary, resumed out of core: the same values.
      MemoryCheckpoints ck;
      ck.crash_at = 3;
      std::vector<std::uint8_t> again(g.quiet.size());
      auto other = builder::FileOutOfCore::create(dir.path() / "b", 64, batch);
      ASSERT_TRUE(other);
      if (run_kernel(g, again, threads, &ck, 0, other->get())) continue;  // fewer boundaries
      other = builder::FileOutOfCore::create(dir.path() / "c", 64, batch);
      ASSERT_TRUE(other);
      ck.crash_at = 0;
      const auto resumed = run_kernel(g, again, threads, &ck, 0, other->get());
      ASSERT_TRUE(resumed) << resumed.error().message();
      EXPECT_EQ(again, want) << "seed " << seed << " resumed";
    }
  }
}

TEST(BackwardOutOfCore, ScoreValuesEqualInMemory) { out_of_core_agrees<ValueKind::score>(20); }
TEST(BackwardOutOfCore, DistanceToMateValuesEqualInMemory) {
  out_of_core_agrees<ValueKind::dtm>(20);
}
TEST(BackwardOutOfCore, WinDrawLossValuesEqualInMemory) { out_of_core_agrees<ValueKind::wdl>(20); }
TEST(BackwardOutOfCore, DistanceToZeroingValuesEqualInMemory) {
  out_of_core_agrees<ValueKind::dtz>(20);
}

// Over a cluster (ranks as threads here, MPI ranks in the build): 1, 2, 3 and 7 ranks and more
// ranks than chunks, each owning a range of whole chunks, rounds of 3 frontier entries so that
// ranks need different numbers of rounds: every rank ends with the counts of the one-process
// kernel and its values (shared), or rank 0 with all of them and the others with their own range
// (gathered to rank 0).
template <ValueKind K>
void cluster_agrees(std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto g = random_graph<K>(seed, 60 + seed * 13);
    std::vector<std::uint8_t> want(g.quiet.size());
    const auto clean = run_kernel(g, want, 1, nullptr);
    ASSERT_TRUE(clean);
    const int chunks = static_cast<int>((g.quiet.size() + 15) / 16);
    for (int ranks : {1, 2, 3, 7, chunks + 2}) {
      std::vector<std::vector<std::uint8_t>> values(
          static_cast<std::size_t>(ranks), std::vector<std::uint8_t>(g.quiet.size(), 0xEE));
      std::vector<std::optional<Result<kernels::BackwardStats>>> stats(values.size());
      test::run_ranks(ranks, [&](kernels::Cluster& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        kernels::BackwardOptions opt;
        opt.threads = 1 + static_cast<int>((seed + r) % 2);
        opt.chunk = 16;
        opt.cluster = &c;
        opt.cluster_round = 3;
        opt.cluster_share = seed % 2 == 0;
        stats[r] = kernels::backward(
            g, 0, std::span(values[r]), [&](int, std::uint64_t j) { return g.exit_value[j]; }, opt);
      });
      const std::size_t own =
          (static_cast<std::size_t>(chunks) + static_cast<std::size_t>(ranks) - 1) /
          static_cast<std::size_t>(ranks) * 16;
      for (std::size_t r = 0; r < values.size(); ++r) {
        ASSERT_TRUE(*stats[r]) << stats[r]->error().message();
        if (r == 0 || seed % 2 == 0) {
          ASSERT_EQ(values[r], want) << "seed " << seed << ", rank " << r << " of " << ranks;
        } else {
          const std::size_t b = std::min(want.size(), r * own), e = std::min(want.size(), b + own);
          ASSERT_TRUE(std::equal(want.begin() + static_cast<std::ptrdiff_t>(b),
                                 want.begin() + static_cast<std::ptrdiff_t>(e),
                                 values[r].begin() + static_cast<std::ptrdiff_t>(b)))
              << "seed " << seed << ", rank " << r << " of " << ranks << ": its own range";
        }
        expect_same_counts(**stats[r], *clean);
        EXPECT_EQ((*stats[r])->partitions, static_cast<std::uint64_t>(ranks));
      }
    }
  }
}

TEST(BackwardCluster, ScoreValuesEqualOneProcess) { cluster_agrees<ValueKind::score>(15); }
TEST(BackwardCluster, DistanceToMateValuesEqualOneProcess) { cluster_agrees<ValueKind::dtm>(15); }
TEST(BackwardCluster, WinDrawLossValuesEqualOneProcess) { cluster_agrees<ValueKind::wdl>(15); }
TEST(BackwardCluster, DistanceToZeroingValuesEqualOneProcess) {
  cluster_agrees<ValueKind::dtz>(15);
}

// Over a cluster every rank saves its own range at the same level boundaries; killed at any of
// them, the ranks resume together and end with the one-process values; when one rank has lost
// its state, all of them start over.
TEST(BackwardCluster, RanksResumeTogether) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto g = random_graph<ValueKind::dtm>(seed, 80 + seed * 17);
    std::vector<std::uint8_t> want(g.quiet.size());
    ASSERT_TRUE(run_kernel(g, want, 1, nullptr));
    const int ranks = 2 + static_cast<int>(seed % 2);
    for (int crash_at = 1;; ++crash_at) {
      std::vector<MemoryCheckpoints> ck(static_cast<std::size_t>(ranks));
      std::vector<std::vector<std::uint8_t>> values(ck.size(),
                                                    std::vector<std::uint8_t>(g.quiet.size()));
      std::vector<std::optional<Result<kernels::BackwardStats>>> got(ck.size());
      auto run = [&](bool lose_one) {
        test::run_ranks(ranks, [&](kernels::Cluster& c) {
          const auto r = static_cast<std::size_t>(c.rank());
          if (lose_one && r == 1) ck[r].meta.reset();
          std::fill(values[r].begin(), values[r].end(), std::uint8_t{0xCD});
          kernels::BackwardOptions opt;
          opt.chunk = 16;
          opt.cluster = &c;
          opt.cluster_round = 5;
          opt.checkpoints = &ck[r];
          got[r] = kernels::backward(
              g, 0, std::span(values[r]), [&](int, std::uint64_t j) { return g.exit_value[j]; },
              opt);
        });
      };
      for (auto& k : ck) k.crash_at = crash_at;
      run(false);
      if (*got[0]) {  // fewer boundaries than crash_at: nothing was killed
        ASSERT_GT(crash_at, 1);
        break;
      }
      for (std::size_t r = 0; r < ck.size(); ++r) {
        ASSERT_FALSE(*got[r]) << "every rank stops at the same save";
        ck[r].crash_at = 0;
      }
      const bool lose_one = crash_at % 3 == 0;
      run(lose_one);
      for (std::size_t r = 0; r < ck.size(); ++r) {
        ASSERT_TRUE(*got[r]) << got[r]->error().message();
        ASSERT_EQ(values[r], want) << "seed " << seed << " killed at save " << crash_at;
        EXPECT_EQ((*got[r])->resumed_level >= 0, !lose_one) << "rank " << r;
      }
    }
  }
}

// Spill files: appended pieces come back in order, in whole records, and a drained partition is
// empty; the store's directory goes with it.
TEST(BackwardOutOfCore, SpillFilesKeepOrderAndEmptyWhenDrained) {
  const test::TempDir dir;
  std::filesystem::path where;
  {
    auto store = builder::FileOutOfCore::create(dir.path() / "s", 1 << 20, 1 << 20);
    ASSERT_TRUE(store);
    where = (*store)->dir();
    std::vector<std::uint8_t> all;
    for (int k = 0; k < 300; ++k) {
      std::vector<std::uint8_t> piece(static_cast<std::size_t>(16 * (k % 7 + 1) * 997));
      for (std::size_t i = 0; i < piece.size(); ++i)
        piece[i] = static_cast<std::uint8_t>(i * 31 + static_cast<std::size_t>(k));
      ASSERT_TRUE((*store)->append(3, piece));
      all.insert(all.end(), piece.begin(), piece.end());
    }
    EXPECT_EQ((*store)->spilled_bytes(), all.size());
    std::vector<std::uint8_t> got;
    ASSERT_TRUE((*store)->drain(3, 16, [&](std::span<const std::uint8_t> b) {
      EXPECT_EQ(b.size() % 16, 0u);
      got.insert(got.end(), b.begin(), b.end());
    }));
    EXPECT_EQ(got, all);
    int calls = 0;
    ASSERT_TRUE((*store)->drain(3, 16, [&](std::span<const std::uint8_t>) { ++calls; }));
    ASSERT_TRUE((*store)->drain(5, 16, [&](std::span<const std::uint8_t>) { ++calls; }));
    EXPECT_EQ(calls, 0);
    EXPECT_TRUE(std::filesystem::exists(where));
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

// Awari through the build driver: 0..12 stones byte-identical for 1, 2, 3 and 7 partitions.
TEST(AwariBackward, IdenticalForOneTwoThreeAndSevenPartitions) {
  std::vector<std::vector<std::vector<std::int8_t>>> runs;
  for (std::uint64_t parts : {1, 2, 3, 7}) {
    BuildRequest opt = test::awari_request(12);
    opt.threads = 2;
    opt.partitions = parts;
    runs.push_back(test::build_awari(opt, 12));
  }
  for (std::size_t k = 1; k < runs.size(); ++k) EXPECT_EQ(runs[0], runs[k]) << k;
}

TEST(AwariBackward, BitIdenticalToForwardUpToTwelveStones) {
  BuildRequest opt = test::awari_request(12);
  opt.kernel = Kernel::forward;
  const auto forward = test::build_awari(opt, 12);
  opt.kernel = Kernel::backward;
  const auto backward = test::build_awari(opt, 12);
  ASSERT_EQ(forward.size(), 13u);
  for (int n = 0; n <= 12; ++n) EXPECT_EQ(forward[n], backward[n]) << n << " stones";
}

TEST(AwariBackward, IdenticalForOneTwoAndThreeThreads) {
  std::vector<std::vector<std::vector<std::int8_t>>> runs;
  for (int threads : {1, 2, 3}) {
    BuildRequest opt = test::awari_request(10);
    opt.threads = threads;
    opt.block_entries = 1024;
    runs.push_back(test::build_awari(opt, 10));
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

// The holes the kernel marks while it counts moves (KernelOptions::holes, which the build's
// writer and statistics use instead of stepping through every position again) are exactly the
// positions the game calls invalid, with tasks whose ends share bitmap words (chunks of 1,000
// entries, two threads), and marking them changes no value.
TEST(ChessBackward, MarksExactlyTheHoles) {
  auto material = chess::parse_material("KQvK");
  ASSERT_TRUE(material);
  auto game = chess::Game::closure({*material}, false);
  ASSERT_TRUE(game);
  const chess::Game& g = **game;
  const int s = g.find("KQvK");
  ASSERT_GE(s, 0);
  const std::uint64_t n = g.segment_size(s);
  builder::Lookup<chess::Game, ValueKind::dtz> lookup(g, g.segments());
  kernels::KernelOptions opt;
  opt.threads = 2;
  opt.chunk = 1000;
  std::vector<std::uint8_t> plain(n), marked(n);
  auto st = kernels::backward_as<ValueKind::dtz>(g, s, std::span(plain), lookup, opt);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_FALSE(st->holes_marked);
  std::vector<std::uint64_t> holes((n + 63) / 64, 0);
  opt.holes = holes.data();
  st = kernels::backward_as<ValueKind::dtz>(g, s, std::span(marked), lookup, opt);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_TRUE(st->holes_marked);
  EXPECT_EQ(plain, marked);
  std::uint64_t wrong = 0, count = 0;
  chess::Position p = g.unrank(s, 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i) g.next(s, p);
    const bool hole = (holes[i >> 6] >> (i & 63)) & 1;
    count += hole;
    if (hole == p.valid) ++wrong;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(count, 0u);
  EXPECT_LT(count, n);
}

}  // namespace
}  // namespace retra
