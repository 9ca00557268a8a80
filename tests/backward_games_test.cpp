// The backward kernel on real games through the build driver: Awari's databases identical for
// any partitions and threads and bit-identical to the forward kernel's up to 12 stones; and the
// holes the kernel marks in a chess table.
#include <gtest/gtest.h>

#include <vector>

#include "awari_util.hpp"
#include "kernels/backward.hpp"
#include "src/build/finished.hpp"
#include "src/games/chess/game.hpp"

namespace retra {
namespace {

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
