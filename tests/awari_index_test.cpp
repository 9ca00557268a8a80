// The Awari indexer is a bijection onto [0, C(n+11, 11)): exhaustive round trips for n <= 10,
// next() walks the index order, random round trips for every n up to 48 (property tests), and the
// extreme indices at 48 stones do not overflow.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "src/games/awari/index.hpp"

namespace retra::awari {
namespace {

TEST(AwariIndex, PositionCountsMatchTheSpec) {
  EXPECT_EQ(positions(0), 1u);
  EXPECT_EQ(positions(12), 1'352'078u);
  EXPECT_EQ(positions(20), 84'672'315u);
  EXPECT_EQ(positions(35), 13'340'783'196u);
  EXPECT_EQ(positions(48), 279'871'768'995u);
}

TEST(AwariIndex, ExhaustiveRoundTripAndOrderUpToTenStones) {
  for (int n = 0; n <= 10; ++n) {
    const std::uint64_t count = positions(n);
    Board b = unrank(n, 0);
    for (std::uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(b.stones(), n);
      ASSERT_EQ(rank(b), i) << format_board(b);
      ASSERT_EQ(unrank(n, i), b) << i;
      ASSERT_EQ(unrank_bisect(n, i), b) << i;
      ASSERT_EQ(unrank_branchless(n, i), b) << i;
      Board copy = b;
      const bool more_bytewise = next_bytewise(copy);
      const bool more = next(b);
      ASSERT_EQ(more, more_bytewise);
      ASSERT_EQ(b, copy);
      ASSERT_EQ(more, i + 1 < count) << "n=" << n << " i=" << i;
    }
  }
}

TEST(AwariIndex, DistinctPositionsGetDistinctIndices) {
  // Enumerate every 5-stone position by brute force (not through the indexer) and check that the
  // ranks cover [0, C(16, 11)) exactly once.
  std::vector<int> seen(positions(5), 0);
  Board b;
  std::function<void(int, int)> rec = [&](int pit, int left) {
    if (pit == 11) {
      b.pit[11] = static_cast<std::uint8_t>(left);
      ++seen.at(rank(b));
      return;
    }
    for (int s = 0; s <= left; ++s) {
      b.pit[pit] = static_cast<std::uint8_t>(s);
      rec(pit + 1, left - s);
    }
  };
  rec(0, 5);
  for (int c : seen) ASSERT_EQ(c, 1);
}

TEST(AwariIndex, ExtremesAtFortyEightStones) {
  const std::uint64_t last = positions(48) - 1;
  Board first = unrank(48, 0), final = unrank(48, last);
  EXPECT_EQ(first.pit[11], 48);  // colex order starts with every stone in the last pit
  EXPECT_EQ(final.pit[0], 48);   // and ends with every stone in the first
  EXPECT_EQ(rank(final), last);
  EXPECT_FALSE(next(final));
  EXPECT_EQ(rank(unrank(48, last - 1)), last - 1);
}

RC_GTEST_PROP(AwariIndexProperty, RandomPositionsRoundTripForEveryStoneCount, ()) {
  const int n = *rc::gen::inRange(0, 49);
  // A random composition of n into 12 pits: 11 sorted cut points.
  auto cuts = *rc::gen::container<std::vector<int>>(11, rc::gen::inRange(0, n + 1));
  std::sort(cuts.begin(), cuts.end());
  Board b;
  int prev = 0;
  for (int k = 0; k < 11; ++k) {
    b.pit[k] = static_cast<std::uint8_t>(cuts[k] - prev);
    prev = cuts[k];
  }
  b.pit[11] = static_cast<std::uint8_t>(n - prev);
  const std::uint64_t r = rank(b);
  RC_ASSERT(r < positions(n));
  RC_ASSERT(unrank(n, r) == b);
}

RC_GTEST_PROP(AwariIndexProperty, RandomIndicesRoundTripAndStepByOne, ()) {
  const int n = *rc::gen::inRange(0, 49);
  const std::uint64_t count = positions(n);
  const std::uint64_t i = *rc::gen::inRange<std::uint64_t>(0, count);
  Board b = unrank(n, i);
  RC_ASSERT(b.stones() == n);
  RC_ASSERT(rank(b) == i);
  if (i + 1 < count) {
    RC_ASSERT(next(b));
    RC_ASSERT(rank(b) == i + 1);
  } else {
    RC_ASSERT(!next(b));
  }
}

}  // namespace
}  // namespace retra::awari
