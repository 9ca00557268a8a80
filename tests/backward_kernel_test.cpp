// The generic backward kernel on random graph games (tests/backward_graph.hpp) for every value
// kind, each against a naive solver written differently (score: one least fixed point per
// threshold by repeated sweeps; distance to mate, distance to zeroing and win/draw/loss: "wins /
// loses within t plies" recomputed for every t), with 1 to 5 threads; resumed from checkpoints
// at every level boundary; partitioned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backward_graph.hpp"
#include "child_process.hpp"

namespace retra {
namespace {

using namespace graph_test;

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

// Threads 1..3 use the default (vector scans, prefetch, frontiers filled in place, each thread
// handing its entries over a few at a time; 2 and 3 start the frontiers with room for two
// entries, so that threads grow them while others copy in, as under ulimit -v); 4 and 5 switch
// all of them off (frontiers gathered from the threads' vectors). Chunks are tiny so that even
// these small graphs are split between threads.
template <class G>
std::vector<int> kernel(const G& g, int threads,
                        std::vector<std::pair<std::uint64_t, std::uint32_t>>* far = nullptr) {
  constexpr ValueKind K = G::kValueKind;
  std::vector<std::uint8_t> values(g.quiet.size());
  kernels::BackwardOptions opt;
  opt.threads = threads > 3 ? threads - 3 : threads;
  opt.tuning.simd_scan = opt.tuning.prefetch = opt.tuning.frontier_in_place = threads <= 3;
  opt.frontier_piece = 3;
  opt.frontier_room = threads == 2 || threads == 3 ? 2 : 0;
  opt.chunk = threads > 3 ? 7 : 16;
  auto st = backward_on(g, std::span(values), opt);
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
  auto st = backward_on(g, std::span(values), kernels::BackwardOptions{});
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
    auto st = backward_on(g, std::span(values), kernels::BackwardOptions{});
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

// A frontier in memory grows past its room as entries come; a growth the address space limit
// refuses drops the entries and is kept as an error that says what to do, which the kernel
// returns after the level (no crash). In a child, which lowers its own ulimit -v to what it maps
// now and 64 MiB, then appends 512 KiB at a time.
TEST(BackwardFrontier, AGrowthTheLimitRefusesIsKeptAsAnError) {
#ifdef RETRA_TSAN
  GTEST_SKIP() << "ThreadSanitizer maps its own memory as the child runs; the release and "
                  "ASan builds run this";
#else
  EXPECT_EQ(test::in_child([] {
              kernels::bw::Frontier f;
              if (!f.reserve(std::uint64_t{1} << 30, 1)) return 2;
              const std::vector<std::uint64_t> piece(std::size_t{1} << 16, 7);
              f.append(piece);  // grown from one entry, within any limit
              if (f.error() || f.size() != piece.size() || f.data()[piece.size() - 1] != 7)
                return 3;
              if (!test::limit_address_space(64u << 20)) return 4;
              for (int i = 0; i < 2000 && !f.error(); ++i) f.append(piece);  // up to 1 GiB
              const bool ok = f.error() && f.error()->code() == Errc::resource &&
                              f.error()->message().find("does not fit the address space") !=
                                  std::string::npos &&
                              f.error()->message().find("ulimit -v") != std::string::npos;
              return ok ? 0 : 1;
            }),
            0);
#endif
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

// A run killed at any level boundary and run again resumes there and ends with the values and
// counts of a run that was never killed, whatever the threads of either run.
template <ValueKind K>
void resume_everywhere(std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto s = solved_graph<K>(seed, 60 + seed * 7);
    ASSERT_TRUE(s.clean);
    for (int crash_at = 1;; ++crash_at) {
      MemoryCheckpoints ck;
      ck.crash_at = crash_at;
      std::vector<std::uint8_t> values(s.g.quiet.size(), 0xAB);
      const auto killed = run_kernel(s.g, values, 1 + crash_at % 3, &ck);
      if (killed) {  // fewer boundaries than crash_at: nothing was killed
        EXPECT_EQ(values, s.want);
        ASSERT_GT(crash_at, 1);
        break;
      }
      std::fill(values.begin(), values.end(), std::uint8_t{0xCD});
      ck.crash_at = 0;
      const auto resumed = run_kernel(s.g, values, 1 + static_cast<int>(seed % 3), &ck);
      ASSERT_TRUE(resumed) << resumed.error().message();
      ASSERT_EQ(values, s.want) << "seed " << seed << " killed at save " << crash_at;
      EXPECT_GE(resumed->resumed_level, 0);
      EXPECT_EQ(resumed->init_seconds, 0.0);  // it did not count moves again
      expect_same_counts(*resumed, *s.clean);
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
    const auto s = solved_graph<K>(seed, 50 + seed * 9);
    ASSERT_TRUE(s.clean);
    for (std::uint64_t parts : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3},
                                std::uint64_t{7}, std::uint64_t{s.g.quiet.size() + 5}}) {
      std::vector<std::uint8_t> values(s.g.quiet.size(), 0xEE);
      const auto st =
          run_kernel(s.g, values, 1 + static_cast<int>((seed + parts) % 3), nullptr, parts);
      ASSERT_TRUE(st);
      ASSERT_EQ(values, s.want) << "seed " << seed << ", " << parts << " partitions";
      expect_same_counts(*st, *s.clean);
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

}  // namespace
}  // namespace retra
