// Golden test: the six rows of the paper's Appendix A quoted in ../shared/spec/xiangqi.md, built
// from scratch and compared exactly (valid positions, KFK, draws per side, longest distance).
#include <gtest/gtest.h>

#include "src/games/xiangqi/module.hpp"
#include "src/verify/verify.hpp"
#include "test_util.hpp"

namespace retra::xiangqi {
namespace {

struct Row {
  const char* name;
  std::uint64_t paper_index, valid, kfk, draws_red, draws_black;
  int max_dtm;  // -1: none
};

TEST(XiangqiSpec, AppendixARowsExactly) {
  const Row rows[] = {
      {"KRK", 4050, 3600, 1116, 0, 54, 4},         {"KCK", 4050, 3600, 1116, 2484, 2484, -1},
      {"KPK", 2511, 2214, 684, 216, 273, 20},      {"KPGK", 11160, 9738, 2640, 1021, 1299, 22},
      {"KCGKG", 80000, 68812, 16476, 0, 1738, 28}, {"KNNK", 165645, 155340, 45030, 0, 0, 14}};
  test::TempDir dir;
  BuildRequest opt = test::build_request("xiangqi", {}, dir.path());
  for (const Row& r : rows) opt.targets.push_back(r.name);
  auto built = build(opt);
  ASSERT_TRUE(built) << built.error().message();
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  for (const Row& r : rows) {
    const auto* rec = (*db)->manifest().find(r.name);
    ASSERT_NE(rec, nullptr) << r.name;
    const auto& st = rec->stats;
    EXPECT_EQ(st["paper_index_size"], r.paper_index) << r.name;
    EXPECT_LE(st["index_size"].get<std::uint64_t>(), r.paper_index) << r.name;
    EXPECT_EQ(st["valid_positions"], r.valid) << r.name;
    EXPECT_EQ(st["kfk"], r.kfk) << r.name;
    EXPECT_EQ(st["draws"][0], r.draws_red) << r.name;
    EXPECT_EQ(st["draws"][1], r.draws_black) << r.name;
    if (r.max_dtm < 0)
      EXPECT_TRUE(st["max_dtm_plies"].is_null()) << r.name;
    else
      EXPECT_EQ(st["max_dtm_plies"], r.max_dtm) << r.name;
    // Per side, the histogram covers every valid position once.
    for (const char* side : {"red", "black"}) {
      std::uint64_t sum = 0;
      for (const auto& [v, n] : st["histogram"][side].items()) sum += n.get<std::uint64_t>();
      EXPECT_EQ(sum, r.valid) << r.name << " " << side;
    }
  }
  // The verifier agrees with everything that was built.
  auto v = verify(**db, {2, nullptr});
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_TRUE(v->ok) << (v->failure ? v->failure->message : "");
}

// Distance to conversion (Fang 3.3): the same outcome for every position as distance to mate
// (draw, win or loss for the side to move), shorter or equal distances, accepted by the verifier.
TEST(XiangqiSpec, DistanceToConversionKeepsEveryOutcome) {
  test::TempDir dir;
  BuildRequest opt = test::build_request("xiangqi", {"KRKG"}, dir / "dtm");
  ASSERT_TRUE(build(opt));
  opt.db = dir / "dtc";
  opt.metric = Metric::dtc;
  ASSERT_TRUE(build(opt));
  auto dtm = Database::open(dir / "dtm");
  auto dtc = Database::open(dir / "dtc");
  ASSERT_TRUE(dtm && dtc);
  EXPECT_EQ((*dtc)->manifest().find("KRKG")->stats["metric"], "dtc");
  for (const char* name : {"KRK", "KRKG"}) {
    const auto a = test::read_segment(**dtm, name), b = test::read_segment(**dtc, name);
    ASSERT_EQ(a.size(), b.size());
    int shorter = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const int x = static_cast<std::uint8_t>(a[i]), y = static_cast<std::uint8_t>(b[i]);
      ASSERT_EQ(x == 0, y == 0) << name << " " << i;
      ASSERT_EQ(x % 2, y % 2) << name << " " << i;
      if (x % 2 == 1) {
        EXPECT_LE(y, x) << name << " " << i;  // a win converts no later than it mates
      }
      shorter += y < x;
    }
    // KRK has no capture but the king's: there, conversion is mate.
    if (std::string(name) == "KRK")
      EXPECT_EQ(shorter, 0);
    else
      EXPECT_GT(shorter, 0) << name;
  }
  auto rep = verify(**dtc, {});
  ASSERT_TRUE(rep) << rep.error().message();
  EXPECT_TRUE(rep->ok);
}

}  // namespace
}  // namespace retra::xiangqi
