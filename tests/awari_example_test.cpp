// The spec's public 16-stone example (Romein & Bal): builds 0..16 stones, probes the example and
// verifies the database. Labelled slow: about a minute on two cores in a release build.
#include <gtest/gtest.h>

#include "awari_util.hpp"
#include "src/verify/verify.hpp"

namespace retra::awari {
namespace {

TEST(AwariSpecExample, SixteenStones) {
  test::TempDir dir;
  auto built = build(test::awari_request(16, dir.path()));
  ASSERT_TRUE(built) << built.error().message();
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  auto r = Module::probe_report(**db, "1,1,1,1,1,2,4,2,3,0,0,0");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->json["value"], 0);
  const std::vector<int> spec = {-1, -1, -2, -2, -2, 0};
  for (int pit = 0; pit < 6; ++pit) {
    ASSERT_TRUE(r->json["moves"][pit]["legal"].get<bool>()) << pit;
    EXPECT_EQ(r->json["moves"][pit]["value"], spec[pit]) << "pit " << pit;
  }
  EXPECT_EQ(r->json["best"], nlohmann::json::array({5}));
  auto v = verify(**db, {2, nullptr});
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_TRUE(v->ok) << (v->failure ? v->failure->message : "");
  EXPECT_EQ(v->segments.size(), 17u);
}

}  // namespace
}  // namespace retra::awari
