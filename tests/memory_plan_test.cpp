// The memory planner: sizes parse, dependencies move to disk when only the kernel fits, builds
// that cannot fit are refused before anything is written, a build follows the order the plan
// counted, and a build that probes its capture targets block-wise from disk produces the same
// bytes as one that loads them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "awari_util.hpp"
#include "src/build/driver.hpp"
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
    EXPECT_NE(r.error().message().find("--memory '"), std::string::npos);
  }
  // --disk: the same sizes, no percentage (it would be of the memory).
  EXPECT_EQ(*parse_disk_size("20G"), 20ull << 30);
  EXPECT_EQ(*parse_disk_size("1.5GiB"), 3ull << 29);
  for (const char* bad : {"", "x", "50%", "0", "12Q"}) {
    auto r = parse_disk_size(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("--disk '"), std::string::npos) << r.error().message();
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

// A kernel that can run out of core does so before its dependencies go to disk, then with them
// on disk; refused only when not even that fits. Out of core by request where it would fit.
TEST(MemoryPlan, RunsTheKernelOutOfCoreBeforeRefusing) {
  const std::uint64_t G = 1ull << 30, M = 1ull << 20;
  SegmentNeed a{"a", 100 * M, 50 * M, 0, 0};
  SegmentNeed b{"b", 4 * G, G, 200 * M, 9 * G};
  auto plan = plan_memory({a, b}, 2 * G);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->segments[0].out_of_core);
  EXPECT_TRUE(plan->segments[1].out_of_core);
  EXPECT_TRUE(plan->segments[1].dependencies_in_memory);
  EXPECT_EQ(plan->peak_bytes, 200 * M + G);
  EXPECT_NE(plan->summary().find("out of core"), std::string::npos);
  auto tighter = plan_memory({a, b}, G);  // out of core with dependencies block-wise
  ASSERT_TRUE(tighter);
  EXPECT_TRUE(tighter->segments[1].out_of_core);
  EXPECT_FALSE(tighter->segments[1].dependencies_in_memory);
  EXPECT_EQ(tighter->peak_bytes, 200 * M + 64 * M);
  auto refused = plan_memory({a, b}, 200 * M);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("needs at least 200.0 MiB"), std::string::npos)
      << refused.error().message();
  b.out_of_core_bytes = 0;  // a kernel that cannot: the dependencies go to disk, then refused
  auto no = plan_memory({a, b}, 2 * G);
  ASSERT_FALSE(no);
  b.out_of_core_bytes = 200 * M;
  b.prefer_out_of_core = true;
  auto asked = plan_memory({a, b}, 64 * G);
  ASSERT_TRUE(asked);
  EXPECT_TRUE(asked->segments[1].out_of_core);
  EXPECT_TRUE(asked->segments[1].dependencies_in_memory);
}

// Out of core through the build driver, forced (--out-of-core) and chosen by --memory: the
// files of Awari, xiangqi and chess are those of the in-memory build, byte for byte; the
// manifest says which segments ran out of core and their directories are gone.
TEST(MemoryPlan, OutOfCoreBuildsGiveTheSameFiles) {
  OptionValues three;
  three["--pieces"] = {"3"};
  const auto chess = find_module("chess")->targets(three);
  ASSERT_TRUE(chess) << chess.error().message();
  const std::vector<std::pair<std::string, std::vector<std::string>>> builds = {
      {"awari", awari::stone_range(0, 12)}, {"xiangqi", {"KRKG", "KCKG"}}, {"chess", *chess}};
  for (const auto& [game, targets] : builds) {
    test::TempDir dir;
    // In memory; out of core with the writer reading a copy of the values (the budget is ample
    // here); out of core with the writer reading the file mapping (--tune copy_values=0).
    std::map<std::string, std::uint64_t> planned_disk;  // by segment
    for (const std::string mode : {"memory", "ooc", "mapped"}) {
      BuildRequest r = test::build_request(game, targets, dir / mode);
      r.out_of_core = mode != "memory";
      r.partitions = r.out_of_core ? 5 : 0;  // several partitions even where one would do
      r.block_entries = 1024;
      r.tuning.copy_values = mode != "mapped";
      r.on_plan = [&](const MemoryPlan& p) {
        for (const auto& sp : p.segments) planned_disk[sp.need.name] = sp.need.disk_bytes;
      };
      auto built = build(r);
      ASSERT_TRUE(built) << built.error().message();
    }
    for (const std::string mode : {"ooc", "mapped"}) {
      EXPECT_GT(test::expect_same_segment_files(dir / "memory", dir / mode, game), 2) << game;
      auto db = Database::open(dir / mode);
      ASSERT_TRUE(db);
      for (const auto& rec : (*db)->manifest().segments) {
        EXPECT_EQ(rec.build["arrays"], "out-of-core") << game << " " << rec.name;
        EXPECT_EQ(rec.build["writer_values"], mode == "ooc" ? "memory" : "file")
            << game << " " << rec.name;
        // Chess's holes (the only game here whose kernel marks them) are marked out of core too
        // (the budget is ample here), so its files above come from the kernel's bitmap.
        EXPECT_EQ(rec.build["kernel_stats"].value("holes", false), game == "chess")
            << game << " " << rec.name;
        // The disk the kernel's files held at most: its values and counters at least, and no
        // more than the plan counted.
        const auto& ks = rec.build["kernel_stats"];
        const std::uint64_t peak = ks.value("disk_peak_bytes", std::uint64_t{0});
        EXPECT_GE(peak, 2 * rec.entries) << game << " " << rec.name;
        EXPECT_LE(peak, planned_disk[rec.name]) << game << " " << rec.name;
        EXPECT_GE(ks.value("spill_rounds", 0), ks.value("levels", 0)) << game << " " << rec.name;
        EXPECT_GE(ks.value("spill_budget_bytes", std::uint64_t{0}), 64u << 20)
            << game << " " << rec.name;
      }
      for (const auto& e : std::filesystem::directory_iterator(dir / mode))
        EXPECT_NE(e.path().extension(), ".ooc") << e.path();
    }
  }
  // Chosen by the limit: Awari's 20-stone kernel (371 MiB) does not fit 400 MiB beside its
  // capture targets; 19 stones do, in memory.
  test::TempDir plan_dir;
  BuildRequest plan = test::awari_request(20, plan_dir / "db");
  plan.memory_limit = 400ull << 20;
  plan.plan_only = true;
  std::optional<MemoryPlan> got;
  plan.on_plan = [&](const MemoryPlan& p) { got = p; };
  ASSERT_TRUE(build(plan));
  ASSERT_TRUE(got);
  ASSERT_EQ(got->segments.size(), 21u);
  EXPECT_FALSE(got->segments[19].out_of_core);
  EXPECT_TRUE(got->segments[20].out_of_core);
  EXPECT_TRUE(got->segments[20].dependencies_in_memory);
  EXPECT_GT(got->disk_bytes, 84672315u * 2);  // at least values and counters
  EXPECT_LE(got->peak_bytes, 400ull << 20);
}

// The disk an out-of-core segment takes at most, and its spill budget: the reserve at least;
// half of what the free space leaves beyond the other files; within --disk.
TEST(MemoryPlan, DiskNeedAndSpillBudget) {
  const std::uint64_t M = 1ull << 20, G = 1ull << 30, entries = 100'000'000;
  // Values and 2-byte counters; frontiers, 10 bytes an entry and two megabytes; the reserve,
  // the bytes of the values and counters.
  EXPECT_EQ(builder::out_of_core_disk_bytes(entries, 2),
            3 * entries + 10 * entries + 2 * M + 3 * entries);
  EXPECT_EQ(builder::out_of_core_spill_reserve(entries, 2), 3 * entries);
  EXPECT_EQ(builder::out_of_core_spill_reserve(1000, 1), 64 * M);
  const std::uint64_t files = 13 * entries + 2 * M;
  EXPECT_EQ(builder::out_of_core_spill_budget(entries, 2, 0, 0), 3 * entries);
  EXPECT_EQ(builder::out_of_core_spill_budget(entries, 2, files + 20 * G, 0), 10 * G);
  EXPECT_EQ(builder::out_of_core_spill_budget(entries, 2, files + 20 * G, files + G), G);
  EXPECT_EQ(builder::out_of_core_spill_budget(entries, 2, files + 20 * G, files), 3 * entries);
}

// --disk below what an out-of-core segment needs: refused before anything is written, with the
// need and the limit in the message; at the need, built.
TEST(MemoryPlan, RefusesASegmentBeyondTheDiskLimit) {
  test::TempDir dir;
  BuildRequest r = test::awari_request(3, dir / "db");
  r.out_of_core = true;
  std::uint64_t need = 0;
  r.on_plan = [&](const MemoryPlan& p) { need = p.disk_bytes; };
  r.disk_limit = 1ull << 20;
  auto refused = build(r);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::resource);
  EXPECT_NE(refused.error().message().find("--disk allows 1.0 MiB"), std::string::npos)
      << refused.error().message();
  EXPECT_GT(need, 64u << 20);
  EXPECT_FALSE(std::filesystem::exists(dir / "db" / "manifest.json"));
  r.disk_limit = need;
  auto built = build(r);
  ASSERT_TRUE(built) << built.error().message();
}

TEST(MemoryPlan, FreeDiskBytesOfAPathNotYetMade) {
  test::TempDir dir;
  const std::uint64_t here = io::free_disk_bytes(dir.path());
  EXPECT_GT(here, 0u);
  EXPECT_NE(here, ~std::uint64_t{0});
  // A directory still to be made: its nearest existing ancestor's file system.
  const std::uint64_t there = io::free_disk_bytes(dir / "not" / "yet");
  EXPECT_NE(there, ~std::uint64_t{0});
}

// The scheduler runs the segments in the order the plan counted what is resident: with one job,
// exactly that order (of the segments ready, the first in it), not the order they became ready
// in; with more, each after its dependencies and once. Random dependency graphs of 60 nodes,
// each listed in a random order that puts dependencies first.
TEST(MemoryPlan, TheBuildFollowsThePlansOrder) {
  std::mt19937 rng(20261205);
  for (int trial = 0; trial < 20; ++trial) {
    constexpr int kNodes = 60;
    std::vector<int> order(kNodes);
    for (int i = 0; i < kNodes; ++i) order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    // Node order[k] depends on a few of order[0..k-1].
    std::vector<std::vector<int>> deps(kNodes);
    for (std::size_t k = 1; k < order.size(); ++k)
      for (int e = 0; e < 3; ++e)
        if (rng() % 2) deps[static_cast<std::size_t>(order[k])].push_back(order[rng() % k]);
    for (const int jobs : {1, 3}) {
      std::mutex mu;
      std::vector<int> ran;
      builder::schedule(
          order, kNodes, [&](int s) { return deps[static_cast<std::size_t>(s)]; },
          [&](int s) {
            std::lock_guard lock(mu);
            ran.push_back(s);
          },
          jobs);
      ASSERT_EQ(ran.size(), order.size()) << "trial " << trial << ", " << jobs << " jobs";
      if (jobs == 1) {
        EXPECT_EQ(ran, order) << "trial " << trial;
        continue;
      }
      std::vector<int> at(kNodes, -1);
      for (std::size_t k = 0; k < ran.size(); ++k)
        at[static_cast<std::size_t>(ran[k])] = static_cast<int>(k);
      for (int s = 0; s < kNodes; ++s) {
        EXPECT_GE(at[static_cast<std::size_t>(s)], 0)
            << "trial " << trial << ": " << s << " never ran (another ran twice)";
        for (int d : deps[static_cast<std::size_t>(s)])
          EXPECT_LT(at[static_cast<std::size_t>(d)], at[static_cast<std::size_t>(s)])
              << "trial " << trial << ": " << s << " ran before its dependency " << d;
      }
    }
  }
}

// More jobs than hardware threads (`--threads 4` on 2 cores): every node still runs, and nothing
// reaches stderr: TBB's arena, asked for more workers than its limit, printed "TBB Warning: The
// number of workers is currently limited to ...".
TEST(MemoryPlan, MoreJobsThanCoresPrintNothing) {
  const int jobs = static_cast<int>(std::thread::hardware_concurrency()) + 2;
  std::vector<int> order(8);
  for (int i = 0; i < 8; ++i) order[static_cast<std::size_t>(i)] = i;
  std::atomic<int> ran{0};
  ::testing::internal::CaptureStderr();
  builder::schedule(
      order, 8, [](int) { return std::vector<int>{}; }, [&](int) { ++ran; }, jobs);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ran.load(), 8);
  EXPECT_EQ(err, "") << jobs << " jobs";
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

// Xiangqi and chess (whose capture lookups the kernel sorts by segment and file block when they
// are read block-wise) give the same files, byte for byte, with their targets in memory or on disk.
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
    EXPECT_GT(test::expect_same_segment_files(dir / "memory", dir / "low", game), 2) << game;
  }
}

}  // namespace
}  // namespace retra
