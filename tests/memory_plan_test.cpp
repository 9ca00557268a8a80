// The memory planner: sizes parse, dependencies move to disk when only the kernel fits, builds
// that cannot fit are refused before anything is written, and a build that probes its capture
// targets block-wise from disk produces the same bytes as one that loads them.
#include <gtest/gtest.h>

#include "awari_util.hpp"
#include "src/io/file.hpp"
#include "src/memory.hpp"
#include "src/memory_plan.hpp"
#include "src/module/module.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

TEST(MemoryPlan, ParsesSizes) {
  EXPECT_EQ(*parse_memory_size("512M"), 512ull << 20);
  EXPECT_EQ(*parse_memory_size("12G"), 12ull << 30);
  EXPECT_EQ(*parse_memory_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(*parse_memory_size("64K"), 64ull << 10);
  EXPECT_EQ(*parse_memory_size("4096"), 4096u);
  EXPECT_EQ(*parse_memory_size("50%"), physical_memory_bytes() / 2);
  for (const char* bad : {"", "x", "-1G", "12Q", "150%", "0", "1GG"}) {
    auto r = parse_memory_size(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  }
}

TEST(MemoryPlan, MovesDependenciesToDiskOrRefuses) {
  const std::uint64_t G = 1ull << 30, M = 1ull << 20;
  std::vector<SegmentNeed> needs = {{"a", 100 * M, 50 * M}, {"b", G, 4 * G}};
  auto fits = plan_memory(needs, 8 * G);
  ASSERT_TRUE(fits);
  EXPECT_TRUE(fits->segments[0].dependencies_in_memory);
  EXPECT_TRUE(fits->segments[1].dependencies_in_memory);
  EXPECT_EQ(fits->peak_segment, "b");
  EXPECT_EQ(fits->peak_bytes, 5 * G);
  auto tight = plan_memory(needs, 2 * G);
  ASSERT_TRUE(tight);
  EXPECT_TRUE(tight->segments[0].dependencies_in_memory);
  EXPECT_FALSE(tight->segments[1].dependencies_in_memory);
  EXPECT_EQ(tight->peak_bytes, G + 64 * M);  // the block cache is capped at 64 MiB
  EXPECT_NE(tight->summary().find("block-wise"), std::string::npos);
  auto refused = plan_memory(needs, G / 2);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::resource);
  EXPECT_NE(refused.error().message().find("segment b"), std::string::npos);
}

TEST(MemoryPlan, BuildThatCannotFitChangesNothing) {
  test::TempDir dir;
  BuildRequest opt = test::awari_request(12, dir / "db");
  opt.memory_limit = 1 << 20;
  auto r = build(opt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::resource);
  EXPECT_NE(r.error().message().find("raise --memory"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "db")) << "refused before it starts";
}

TEST(MemoryPlan, BlockWiseCaptureTargetsGiveTheSameDatabase) {
  std::vector<std::vector<std::int8_t>> runs;
  for (bool low : {false, true}) {
    test::TempDir dir;
    BuildRequest opt = test::awari_request(11, dir.path());
    opt.low_memory = low;
    opt.block_entries = 1024;
    auto r = build(opt);
    ASSERT_TRUE(r) << r.error().message();
    auto db = Database::open(dir.path());
    EXPECT_EQ((*db)->manifest().find("11")->build["capture_targets"],
              low ? "block-wise" : "memory");
    runs.push_back(test::read_segment(**db, "11"));
  }
  EXPECT_EQ(runs[0], runs[1]);
}

// Xiangqi and chess (whose capture lookups the kernel sorts by segment and index when they are
// read block-wise) give the same files, byte for byte, with their targets in memory or on disk.
TEST(MemoryPlan, BlockWiseTargetsGiveTheSameFilesForXiangqiAndChess) {
  OptionValues three;
  three["--pieces"] = {"3"};
  const auto chess = find_module("chess")->targets(three);
  ASSERT_TRUE(chess) << chess.error().message();
  const std::vector<std::pair<std::string, std::vector<std::string>>> builds = {
      {"xiangqi", {"KRKG", "KCKG"}}, {"chess", *chess}};
  for (const auto& [game, targets] : builds) {
    test::TempDir dir;
    for (bool low : {false, true}) {
      BuildRequest r = test::build_request(game, targets, dir / (low ? "low" : "memory"));
      r.low_memory = low;
      r.block_entries = 1024;  // many blocks, and lookups that miss the cache
      auto built = build(r);
      ASSERT_TRUE(built) << built.error().message();
    }
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir / "memory")) {
      if (e.path().extension() != ".rseg") continue;
      ++files;
      EXPECT_EQ(io::read_file(e.path()).value(),
                io::read_file(dir / "low" / e.path().filename()).value())
          << game << " " << e.path().filename();
    }
    EXPECT_GT(files, 2) << game;
  }
}

}  // namespace
}  // namespace retra
