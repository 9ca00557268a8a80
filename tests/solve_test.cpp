// The proof-number solvers: every algorithm returns the database value on sampled positions that
// lie inside the databases, searched with the databases cut one and two stones lower (so the
// search must play down to the cut through captures, must-feed endings and repetitions).
// Samples are 12-stone positions drawn by index from a fixed seed, keeping those that plain PN
// solves within 20 000 nodes (sparse positions with long capture-free play need far more, which
// belongs in bench/solver_experiment, not in the suite); every algorithm must then solve each of
// them and agree with the database.
#include <gtest/gtest.h>

#include <random>

#include "retra/games/awari/database.hpp"
#include "retra/games/awari/index.hpp"
#include "retra/solve.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

class Solve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    awari::BuildOptions a;
    a.last = 12;
    a.db = dir_->path();
    a.threads = 2;
    ASSERT_TRUE(awari::build(a));
    probe::Value err;
    db_ = probe::Prober::open(dir_->path().string(), {}, &err).release();
    ASSERT_NE(db_, nullptr) << err.message;
  }
  static void TearDownTestSuite() {
    delete db_;
    delete dir_;
  }
  // Reproducible samples: positions with n stones drawn by index, kept when plain PN solves
  // them with the databases cut at `cut` within a small budget.
  static std::vector<std::array<int, 12>> sample(int n, int cut, int count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::array<int, 12>> out;
    solve::Options o;
    o.max_nodes = o.max_work = 20'000;
    solve::AwariSolver pn(*db_, cut, o);
    for (int tries = 0; static_cast<int>(out.size()) < count && tries < 2000; ++tries) {
      const auto b = awari::unrank(n, rng() % awari::positions(n));
      std::array<int, 12> p;
      for (int i = 0; i < 12; ++i) p[i] = b.pit[i];
      auto r = pn.solve(p);
      if (r && r->solved) out.push_back(p);
    }
    EXPECT_EQ(static_cast<int>(out.size()), count);
    return out;
  }
  static test::TempDir* dir_;
  static probe::Prober* db_;
};
test::TempDir* Solve::dir_ = nullptr;
probe::Prober* Solve::db_ = nullptr;

void expect_database_values(const probe::Prober& db, int cut,
                            const std::vector<std::array<int, 12>>& positions) {
  for (solve::Algorithm alg : solve::kAlgorithms) {
    solve::Options o;
    o.algorithm = alg;
    o.max_nodes = 300'000;
    o.max_work = 1'000'000;
    solve::AwariSolver s(db, cut, o);
    for (const auto& p : positions) {
      const auto want = db.awari(p);
      ASSERT_TRUE(want) << want.message;
      auto got = s.solve(p);
      ASSERT_TRUE(got) << got.error().message();
      ASSERT_TRUE(got->solved) << solve::name(alg) << ": not solved within the limits";
      EXPECT_EQ(got->value, want.value) << solve::name(alg) << " cut " << cut;
      EXPECT_GT(got->stats.searches, 0u);
    }
  }
}

TEST_F(Solve, EveryAlgorithmMatchesTheDatabaseOneStoneBelow) {
  expect_database_values(*db_, 11, sample(12, 11, 5, 1));
}

TEST_F(Solve, EveryAlgorithmMatchesTheDatabaseTwoStonesBelow) {
  expect_database_values(*db_, 10, sample(12, 10, 5, 2));
}

TEST_F(Solve, ProveAgreesWithTheValueOnBothSidesOfIt) {
  solve::Options o;
  o.algorithm = solve::Algorithm::dfpn;
  solve::AwariSolver s(*db_, 10, o);
  for (const auto& p : sample(12, 10, 5, 3)) {
    const int v = db_->awari(p).value;
    EXPECT_EQ(s.prove(p, v, nullptr), solve::Outcome::proven);
    EXPECT_EQ(s.prove(p, v + 1, nullptr), solve::Outcome::disproven);
  }
}

TEST_F(Solve, LimitsGiveBoundsNotWrongValues) {
  solve::Options o;
  o.algorithm = solve::Algorithm::pn;
  o.max_nodes = 3;  // far too small to solve a 9-stone position from 2-stone leaves
  solve::AwariSolver s(*db_, 2, o);
  std::array<int, 12> p = {2, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 0};
  auto r = s.solve(p);
  ASSERT_TRUE(r);
  if (!r->solved) {
    const int v = db_->awari(p).value;
    EXPECT_LE(r->lower, v);
    EXPECT_GE(r->upper, v);
  }
  EXPECT_FALSE(solve::parse_algorithm("alpha-beta"));
  EXPECT_TRUE(solve::parse_algorithm("ef-pn2"));
}

}  // namespace
}  // namespace retra
