// The probe cache's block arena (src/probe/block_arena.hpp): footprints are powers of two,
// buffers never overlap and keep what is written to them, chunks start on huge-page boundaries,
// a released buffer serves the next one of its size, and buffers larger than a chunk get their
// own mapping; threads allocating and releasing at once get distinct buffers.
#include "src/probe/block_arena.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace retra::probe::detail {
namespace {

TEST(BlockArena, FootprintsArePowersOfTwoFromACacheLine) {
  EXPECT_EQ(BlockArena::footprint(1), BlockArena::kMinBuffer);
  EXPECT_EQ(BlockArena::footprint(64), 64u);
  EXPECT_EQ(BlockArena::footprint(65), 128u);
  EXPECT_EQ(BlockArena::footprint(std::size_t{1} << 20), std::size_t{1} << 20);
  EXPECT_EQ(BlockArena::footprint((std::size_t{1} << 20) + 1), std::size_t{2} << 20);
}

TEST(BlockArena, BuffersAreDistinctAlignedAndReused) {
  BlockArena arena;
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // The first buffer starts a chunk: on a 2 MiB boundary.
  std::uint8_t* first = arena.allocate(kMiB);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % (2 * kMiB), 0u);
  // Mixed sizes over more than one chunk: no two overlap, and each keeps its own bytes.
  std::vector<std::pair<std::uint8_t*, std::size_t>> held{{first, kMiB}};
  for (int i = 0; i < 100; ++i) {
    const std::size_t size = i % 3 == 0 ? kMiB : i % 3 == 1 ? 256 << 10 : 1000 + i;
    std::uint8_t* p = arena.allocate(size);
    ASSERT_NE(p, nullptr);
    held.emplace_back(p, size);
  }
  for (std::size_t i = 0; i < held.size(); ++i)
    std::memset(held[i].first, static_cast<int>(i & 0xff), held[i].second);
  for (std::size_t i = 0; i < held.size(); ++i) {
    const auto [p, n] = held[i];
    EXPECT_TRUE(std::all_of(p, p + n, [&](std::uint8_t b) { return b == (i & 0xff); })) << i;
  }
  std::vector<std::pair<std::uint8_t*, std::size_t>> sorted = held;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    EXPECT_GE(sorted[i].first, sorted[i - 1].first + BlockArena::footprint(sorted[i - 1].second));
  // A released buffer is the next one of its footprint.
  arena.release(held[5].first, held[5].second);
  EXPECT_EQ(arena.allocate(held[5].second), held[5].first);
  // Larger than a chunk: a mapping of its own (the chunk in use goes on after it), usable to
  // its end, reused after release.
  const std::size_t big = BlockArena::kChunk + 1;
  std::uint8_t* before = arena.allocate(4096);
  std::uint8_t* p = arena.allocate(big);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(arena.allocate(4096), before + 4096);
  p[0] = 1;
  p[big - 1] = 2;
  arena.release(p, big);
  EXPECT_EQ(arena.allocate(big), p);
}

TEST(BlockArena, ThreadsGetDistinctBuffers) {
  BlockArena arena;
  constexpr int kThreads = 4, kRounds = 2000;
  std::vector<std::vector<std::uint8_t*>> kept(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        std::uint8_t* p = arena.allocate(4096);
        ASSERT_NE(p, nullptr);
        std::memset(p, t, 4096);
        if (r % 2) {
          arena.release(p, 4096);
        } else {
          kept[static_cast<std::size_t>(t)].push_back(p);
        }
      }
    });
  for (auto& th : threads) th.join();
  std::vector<std::uint8_t*> all;
  for (int t = 0; t < kThreads; ++t) {
    for (std::uint8_t* p : kept[static_cast<std::size_t>(t)])
      EXPECT_TRUE(std::all_of(p, p + 4096, [&](std::uint8_t b) { return b == t; }));
    all.insert(all.end(), kept[static_cast<std::size_t>(t)].begin(),
               kept[static_cast<std::size_t>(t)].end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), std::size_t{kThreads} * kRounds / 2);
}

}  // namespace
}  // namespace retra::probe::detail
