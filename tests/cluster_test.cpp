// Cluster builds through the build driver, with ranks as threads (tests/local_cluster.hpp): the
// files of Awari, xiangqi and chess over 3 ranks are those of a one-process build byte for byte;
// a failure on one rank stops all of them; what a cluster build cannot spread is refused. The
// same builds over real MPI ranks run in tests/mpi_build_test.sh.
#include <gtest/gtest.h>

#include <optional>

#include "awari_util.hpp"
#include "local_cluster.hpp"
#include "src/module/module.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

std::vector<std::pair<std::string, std::vector<std::string>>> small_builds() {
  OptionValues three;
  three["--pieces"] = {"3"};
  auto chess = find_module("chess")->targets(three);
  EXPECT_TRUE(chess) << chess.error().message();
  return {{"awari", awari::stone_range(0, 12)},
          {"xiangqi", {"KRKG", "KCKG"}},
          {"chess", chess ? *chess : std::vector<std::string>{}}};
}

// Over 3 ranks, with the capture targets in memory (kept on every rank) and read block-wise from
// the files rank 0 wrote (the other ranks read the manifest again after each segment).
TEST(ClusterBuild, SegmentFilesEqualOneProcess) {
  constexpr int kRanks = 3;
  for (const auto& [game, targets] : small_builds()) {
    test::TempDir dir;
    BuildRequest alone = test::build_request(game, targets, dir / "alone");
    alone.block_entries = 1024;
    auto built = build(alone);
    ASSERT_TRUE(built) << built.error().message();
    for (bool low_memory : {false, true}) {
      const auto db_dir = dir / (low_memory ? "ranks-block-wise" : "ranks");
      std::vector<std::optional<Result<std::vector<SegmentReport>>>> got(kRanks);
      test::run_ranks(kRanks, [&](kernels::Cluster& c) {
        BuildRequest r = alone;
        r.db = db_dir;
        r.threads = 1;
        r.cluster = &c;
        r.low_memory = low_memory;
        got[static_cast<std::size_t>(c.rank())] = build(r);
      });
      for (int r = 0; r < kRanks; ++r) {
        const auto& res = *got[static_cast<std::size_t>(r)];
        ASSERT_TRUE(res) << game << " rank " << r << ": " << res.error().message();
        // Every rank built every segment; rank 0 alone reports and writes.
        EXPECT_EQ(res->size(), r == 0 ? built->size() : 0u) << game << " rank " << r;
      }
      EXPECT_GT(test::expect_same_segment_files(dir / "alone", db_dir, game), 2) << game;
      auto db = Database::open(db_dir);
      ASSERT_TRUE(db);
      EXPECT_EQ((*db)->manifest().segments.size(), built->size());
      for (const auto& rec : (*db)->manifest().segments) {
        EXPECT_EQ(rec.build["ranks"], kRanks) << game << " " << rec.name;
        EXPECT_EQ(rec.build["capture_targets"], low_memory ? "block-wise" : "memory") << game;
      }
    }
  }
}

TEST(ClusterBuild, AFailureOnOneRankStopsEveryRank) {
  std::vector<std::optional<Status>> got(3);
  test::run_ranks(3, [&](kernels::Cluster& c) {
    const auto r = static_cast<std::size_t>(c.rank());
    got[r] = kernels::agree(&c, r == 1 ? Status(Error(Errc::resource, "no memory")) : Status{});
  });
  for (std::size_t r = 0; r < got.size(); ++r) {
    ASSERT_FALSE(*got[r]) << r;
    EXPECT_EQ(got[r]->error().code(), Errc::resource);
    EXPECT_EQ(got[r]->error().cause(), r == 1 ? Cause::none : Cause::peer_failed);
  }
  // Rank 0 cannot use the directory: the others learn it before they touch it.
  test::TempDir dir;
  { std::ofstream(dir / "db") << "a file, not a directory"; }
  std::vector<std::optional<Result<std::vector<SegmentReport>>>> builds(2);
  test::run_ranks(2, [&](kernels::Cluster& c) {
    BuildRequest r = test::awari_request(6, dir / "db");
    r.cluster = &c;
    builds[static_cast<std::size_t>(c.rank())] = build(r);
  });
  ASSERT_FALSE(*builds[0]);
  EXPECT_EQ(builds[0]->error().code(), Errc::invalid_argument);
  ASSERT_FALSE(*builds[1]);
  EXPECT_EQ(builds[1]->error().cause(), Cause::peer_failed);
}

// A cluster build keeps the kernel's arrays in memory on every rank and runs the backward
// kernel: the rest is refused on every rank, before anything is written.
TEST(ClusterBuild, RefusesWhatItCannotSpread) {
  test::TempDir dir;
  for (int what = 0; what < 3; ++what) {
    std::vector<std::optional<Result<std::vector<SegmentReport>>>> got(2);
    test::run_ranks(2, [&](kernels::Cluster& c) {
      BuildRequest r = test::awari_request(20, dir / "db");
      r.cluster = &c;
      if (what == 0) r.out_of_core = true;
      if (what == 1) r.kernel = Kernel::forward;
      if (what == 2) r.memory_limit = 400ull << 20;  // 20 stones would run out of core
      got[static_cast<std::size_t>(c.rank())] = build(r);
    });
    for (const auto& res : got) {
      ASSERT_FALSE(*res) << what;
      EXPECT_EQ(res->error().code(), what == 2 ? Errc::resource : Errc::invalid_argument);
      EXPECT_NE(res->error().message().find("mpirun"), std::string::npos) << res->error().message();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "db"));
}

}  // namespace
}  // namespace retra
