// The forward-iteration kernel: hand-solved toy graphs (cycles with and without exits, where
// the Bellman equations have many solutions and only the one grounded in real play is right),
// each solved by whole-segment sweeps and by rounds over the explicit graph; identical Awari
// output for 1, 2 and 3 threads and for both modes; the fallback to sweeps where the graph does
// not fit; and the spec's golden histograms.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "awari_util.hpp"
#include "kernels/forward_iteration.hpp"

namespace retra {
namespace {

// A score game given as an explicit graph: position i has quiet moves to `quiet[i]` and
// converting moves worth `exits[i]` (already the mover's value). No moves: `end[i]`.
struct ToyGame {
  using Position = std::uint64_t;
  using SegmentId = int;
  static constexpr std::string_view kName = "toy";
  static constexpr std::string_view kVariant = "test", kIndexer = "identity", kValueEncoding = "i8";
  static constexpr ValueKind kValueKind = ValueKind::score;
  std::vector<std::vector<std::uint64_t>> quiet;
  std::vector<std::vector<int>> exits;
  std::vector<int> end;

  std::uint64_t segment_size(int) const { return quiet.size(); }
  Position unrank(int, std::uint64_t i) const { return i; }
  std::uint64_t rank(int, const Position& p) const { return p; }
  bool next(int, Position& p) const { return ++p < quiet.size(); }
  int no_move_value(int, const Position& p) const { return end[p]; }
  template <class F>
  int for_each_move(int, const Position& p, F&& f) const {
    for (auto c : quiet[p]) f(Child<int>{0, c, 0, false});
    // Exits are modelled as captures of `value` stones into a lower segment worth 0.
    for (int v : exits[p]) f(Child<int>{-1, 0, v, true});
    return static_cast<int>(quiet[p].size() + exits[p].size());
  }
};
static_assert(Game<ToyGame>);

std::vector<int> solve_with(const ToyGame& g, int threads, bool graph) {
  std::vector<std::int8_t> values(g.quiet.size(), 0), exits(g.quiet.size(), 0);
  kernels::ForwardOptions opt;
  opt.threads = threads;
  opt.chunk = 2;
  opt.graph_bytes = graph ? std::uint64_t{1} << 30 : 0;
  const auto st = kernels::forward_iteration(
      g, 0, values, exits, [](int, std::uint64_t) { return 0; }, opt);
  EXPECT_EQ(st.graph, graph);
  return {values.begin(), values.end()};
}

// Both modes, which must agree.
std::vector<int> solve(const ToyGame& g, int threads) {
  auto sweeps = solve_with(g, threads, false);
  EXPECT_EQ(solve_with(g, threads, true), sweeps) << "graph rounds and sweeps differ";
  return sweeps;
}

TEST(ForwardKernel, PureCycleIsWorthZero) {
  ToyGame g{{{1}, {0}}, {{}, {}}, {0, 0}};
  EXPECT_EQ(solve(g, 1), (std::vector<int>{0, 0}));
}

TEST(ForwardKernel, CycleWithOneExitIsGroundedByTheExit) {
  // 0 can take +1 or go to 1; 1 can only go back. Any v(0) >= 1 solves the equations, the right
  // value is 1 (0 takes the exit; circling forever is worth 0 < 1).
  ToyGame g{{{1}, {0}}, {{1}, {}}, {0, 0}};
  EXPECT_EQ(solve(g, 1), (std::vector<int>{1, -1}));
}

TEST(ForwardKernel, OpponentPrefersEndlessPlayToALoss) {
  // 0 -> 1 -> 0 cycle; 1 may also exit with -2 for itself. It circles instead: both 0.
  ToyGame g{{{1}, {0}}, {{}, {-2}}, {0, 0}};
  EXPECT_EQ(solve(g, 1), (std::vector<int>{0, 0}));
}

TEST(ForwardKernel, ChainToTerminalAlternatesSigns) {
  // 0 -> 1 -> 2 -> 3 (no moves, worth -3 to its mover).
  ToyGame g{{{1}, {2}, {3}, {}}, {{}, {}, {}, {}}, {0, 0, 0, -3}};
  EXPECT_EQ(solve(g, 2), (std::vector<int>{3, -3, 3, -3}));
}

TEST(ForwardKernel, BestOfSeveralMoves) {
  // 0 chooses between child 1 (worth -2 to 1's mover, so +2), exit +1 and child 2 (worth 5 to 2).
  ToyGame g{{{1, 2}, {}, {}}, {{1}, {}, {}}, {0, -2, 5}};
  EXPECT_EQ(solve(g, 3)[0], 2);
}

class AwariForward : public ::testing::Test {};

TEST_F(AwariForward, IdenticalForOneTwoAndThreeThreads) {
  std::vector<std::vector<std::vector<std::int8_t>>> runs;
  for (int threads : {1, 2, 3}) {
    BuildRequest opt = test::awari_request(10);
    opt.threads = threads;
    opt.kernel = Kernel::forward;
    opt.block_entries = 1024;  // many chunks so that the threads interleave
    runs.push_back(test::build_awari(opt, 10));
  }
  for (int n = 0; n <= 10; ++n) {
    EXPECT_EQ(runs[0][n], runs[1][n]) << "1 vs 2 threads differ at " << n << " stones";
    EXPECT_EQ(runs[0][n], runs[2][n]) << "1 vs 3 threads differ at " << n << " stones";
  }
}

TEST(ForwardKernel, RandomCyclicGraphsAgreeInBothModes) {
  // Dense random graphs with cycles, exits and dead ends; values checked against the sweeps.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 200);
    ToyGame g;
    g.quiet.resize(n);
    g.exits.resize(n);
    g.end.resize(n);
    for (int i = 0; i < n; ++i) {
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) g.quiet[i].push_back(rng() % n);
      if (rng() % 3 == 0) g.exits[i].push_back(static_cast<int>(rng() % 21) - 10);
      g.end[i] = static_cast<int>(rng() % 21) - 10;
    }
    for (int threads : {1, 3}) solve(g, threads);
  }
}

TEST_F(AwariForward, GraphRoundsEqualSweepsAndTheBackwardKernel) {
  // Up to 12 stones (a full pit laps the board); under the sanitizers, which run this code 4-6
  // times slower, up to 11 (AwariBackward.BitIdenticalToForwardUpToTwelveStones still goes to 12).
#ifdef RETRA_SANITIZE
  constexpr int kStones = 11;
#else
  constexpr int kStones = 12;
#endif
  BuildRequest req = test::awari_request(kStones);
  req.threads = 2;
  req.block_entries = 4096;
  req.kernel = Kernel::backward;
  const auto backward = test::build_awari(req, kStones);
  req.kernel = Kernel::forward;
  const auto graph = test::build_awari(req, kStones);
  req.tuning.graph = false;
  const auto sweeps = test::build_awari(req, kStones);
  ASSERT_EQ(backward.size(), std::size_t{kStones + 1});
  EXPECT_EQ(graph, backward);
  EXPECT_EQ(sweeps, backward);
}

TEST_F(AwariForward, TheGraphIsUsedWhereItFitsAndSweepsWhereItDoesNot) {
  awari::Game g;
  const int n = 9;
  const auto size = g.segment_size(n);
  std::vector<std::vector<std::int8_t>> lower =
      test::build_awari(test::awari_request(n - 1), n - 1);
  auto lookup = [&](int s, std::uint64_t i) { return lower[static_cast<std::size_t>(s)][i]; };
  std::vector<std::vector<std::int8_t>> out;
  // Room for everything; room for the offsets only (the capture phase counts the moves, then the
  // kernel sweeps); none.
  const std::uint64_t all = std::uint64_t{1} << 30,
                      offsets = kernels::detail::QuietGraph::bytes(size, 0) + 1024;
  for (std::uint64_t budget : {all, offsets, std::uint64_t{0}}) {
    std::vector<std::int8_t> values(size, 0), exits(size, 0);
    kernels::ForwardOptions opt;
    opt.threads = 2;
    opt.chunk = 1000;  // not a multiple of 64: tasks share bitmap words
    opt.graph_bytes = budget;
    const auto st = kernels::forward_iteration(g, n, values, exits, lookup, opt);
    EXPECT_EQ(st.graph, budget == all) << budget;
    if (st.graph) {
      EXPECT_LE(st.graph_bytes, budget);
      EXPECT_EQ(st.graph_bytes, kernels::detail::QuietGraph::bytes(size, st.edges));
      EXPECT_LT(st.evaluations, size * static_cast<std::uint64_t>(st.iterations) / 2);
    } else {
      EXPECT_EQ(st.evaluations, size * static_cast<std::uint64_t>(st.iterations));
    }
    out.push_back(values);
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(out[0], out[2]);
}

TEST_F(AwariForward, GoldenHistogramsInTheManifest) {
  test::TempDir dir;
  auto r = build(test::awari_request(4, dir.path()));
  ASSERT_TRUE(r) << r.error().message();
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  // counts from value -n to +n (spec: ../shared/spec/awari.md)
  const std::vector<std::vector<std::uint64_t>> spec = {{1},
                                                        {7, 0, 5},
                                                        {40, 0, 13, 0, 25},
                                                        {177, 0, 1, 63, 7, 0, 116},
                                                        {532, 0, 110, 0, 143, 0, 165, 0, 415}};
  for (int n = 0; n <= 4; ++n) {
    const auto* rec = (*db)->manifest().find(std::to_string(n));
    ASSERT_NE(rec, nullptr);
    EXPECT_EQ(rec->stats["counts"].get<std::vector<std::uint64_t>>(), spec[n]) << "n=" << n;
    EXPECT_EQ(rec->stats["value_min"].get<int>(), -n);
  }
}

}  // namespace
}  // namespace retra
