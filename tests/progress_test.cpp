// Progress (src/progress.hpp): the whole job's count beside the phases, the estimate of the time
// left that the CLI's bar prints from it, and the counts of build, verify and recompress.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "awari_util.hpp"
#include "src/database.hpp"
#include "src/progress.hpp"
#include "src/recompress.hpp"
#include "src/verify/verify.hpp"

namespace retra {
namespace {

TEST(Progress, DurationsReadAsPeopleSayThem) {
  EXPECT_EQ(format_duration(0), "0 s");
  EXPECT_EQ(format_duration(-3), "0 s");
  EXPECT_EQ(format_duration(44.6), "45 s");
  EXPECT_EQ(format_duration(59.4), "59 s");
  EXPECT_EQ(format_duration(60), "1 min 00 s");
  EXPECT_EQ(format_duration(27 * 60 + 3), "27 min 03 s");
  EXPECT_EQ(format_duration(3599.4), "59 min 59 s");
  EXPECT_EQ(format_duration(3600), "1 h 00 min");
  EXPECT_EQ(format_duration(2 * 3600 + 31 * 60 + 59), "2 h 31 min");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "0 s");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "277777777 h 46 min");
}

TEST(Progress, TheEstimateAssumesThePaceSoFar) {
  Progress::Snapshot s;
  EXPECT_EQ(job_estimate(s), "");  // no job counted
  s.job_total = 1000;
  s.job_seconds = 60;
  EXPECT_EQ(job_estimate(s), "");  // nothing of it done yet
  s.job_done = 5;
  EXPECT_EQ(job_estimate(s), "all 0.5%");  // too little done to tell the pace
  s.job_done = 250;
  EXPECT_EQ(job_estimate(s), "all 25.0%, about 3 min 00 s left");
  s.job_done = 500;
  EXPECT_EQ(job_estimate(s), "all 50.0%, about 1 min 00 s left");
  s.job_done = 1000;
  EXPECT_EQ(job_estimate(s), "all 100.0%");
  s.job_done = 1200;  // more than announced: never past the end
  EXPECT_EQ(job_estimate(s), "all 100.0%");
}

TEST(Progress, AJobCountsAcrossPhasesAndStartsOverWhenStartedAgain) {
  Progress p;
  EXPECT_EQ(p.snapshot().job_total, 0u);
  EXPECT_EQ(p.snapshot().job_seconds, 0.0);
  p.job(100);
  p.phase("first", 10);
  p.advance(10);
  p.job_advance(40);
  p.phase("second", 20);  // a new phase keeps the job's count
  p.job_advance(20);
  auto s = p.snapshot();
  EXPECT_EQ(s.label, "second");
  EXPECT_EQ(s.done, 0u);
  EXPECT_EQ(s.job_done, 60u);
  EXPECT_EQ(s.job_total, 100u);
  EXPECT_GE(s.job_seconds, 0.0);
  p.job(7);
  s = p.snapshot();
  EXPECT_EQ(s.job_done, 0u);
  EXPECT_EQ(s.job_total, 7u);
}

// A build counts the positions of the segments it builds, not of those it finds built.
TEST(Progress, ABuildCountsThePositionsOfWhatItBuilds) {
  test::TempDir dir;
  BuildRequest req = test::awari_request(4, dir.path());
  ASSERT_TRUE(build(req));
  Progress p;
  req.progress = &p;
  req.targets = awari::stone_range(0, 6);
  auto r = build(req);
  ASSERT_TRUE(r) << r.error().message();
  std::uint64_t built = 0;
  int skipped = 0;
  for (const auto& seg : *r) {
    if (seg.skipped)
      ++skipped;
    else
      built += seg.entries;
  }
  EXPECT_EQ(skipped, 5);  // 0..4 stones
  ASSERT_GT(built, 0u);
  const auto s = p.snapshot();
  EXPECT_EQ(s.job_total, built);
  EXPECT_EQ(s.job_done, built);
  EXPECT_EQ(job_estimate(s), "all 100.0%");
}

// verify and recompress count the positions of the segments they check or rewrite.
TEST(Progress, VerifyAndRecompressCountTheirSegmentsPositions) {
  test::TempDir dir;
  BuildRequest req = test::awari_request(6, dir.path());
  auto built = build(req);
  ASSERT_TRUE(built) << built.error().message();
  std::uint64_t all = 0, five_and_six = 0;
  for (const auto& seg : *built) {
    all += seg.entries;
    if (seg.name == "5" || seg.name == "6") five_and_six += seg.entries;
  }
  ASSERT_GT(five_and_six, 0u);
  {
    auto db = Database::open(dir.path());
    ASSERT_TRUE(db);
    Progress p;
    VerifyOptions opt;
    opt.progress = &p;
    auto rep = verify(**db, opt);
    ASSERT_TRUE(rep && rep->ok);
    EXPECT_EQ(p.snapshot().job_total, all);
    EXPECT_EQ(p.snapshot().job_done, all);
  }
  Progress p;
  RecompressOptions opt;
  opt.progress = &p;
  opt.zstd_level = 3;
  opt.segments = {"5", "6"};
  auto r = recompress(dir.path(), opt);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(p.snapshot().job_total, five_and_six);
  EXPECT_EQ(p.snapshot().job_done, five_and_six);
}

}  // namespace
}  // namespace retra
