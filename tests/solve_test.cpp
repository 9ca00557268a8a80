// The proof-number solvers: every algorithm returns the database value on sampled positions that
// lie inside the databases, searched with the databases cut one and two stones (xiangqi: pieces)
// lower (so the search must play down to the cut through captures, must-feed endings, mates and
// repetitions).
// Samples are 12-stone positions drawn by index from a fixed seed, keeping those that plain PN
// solves within 20 000 nodes (sparse positions with long capture-free play need far more, which
// belongs in bench/solver_experiment, not in the suite); every algorithm must then solve each of
// them and agree with the database.
#include <gtest/gtest.h>

#include <random>

#include "retra/solve.hpp"
#include "src/games/awari/module.hpp"
#include "src/games/xiangqi/module.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

// A solver over `db` with leaves cut at `cut` (the test fails when it cannot be made).
std::unique_ptr<solve::Solver> solver(const probe::Prober& db, const solve::Options& o, int cut) {
  auto s = solve::Solver::open(db, o, cut);
  EXPECT_TRUE(s) << (s ? "" : s.error().message());
  return s ? std::move(*s) : nullptr;
}

class Solve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    ASSERT_TRUE(build(test::build_request("awari", awari::stone_range(0, 12), dir_->path())));
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
  static std::vector<std::string> sample(int n, int cut, int count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> out;
    solve::Options o;
    o.max_nodes = o.max_work = 20'000;
    auto pn = solver(*db_, o, cut);
    for (int tries = 0; static_cast<int>(out.size()) < count && tries < 2000; ++tries) {
      const std::string p = awari::format_board(awari::unrank(n, rng() % awari::positions(n)));
      auto r = pn->solve(p);
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
                            const std::vector<std::string>& positions) {
  ASSERT_FALSE(positions.empty());
  for (solve::Algorithm alg : solve::kAlgorithms) {
    solve::Options o;
    o.algorithm = alg;
    o.max_nodes = 300'000;
    o.max_work = 1'000'000;
    auto s = solver(db, o, cut);
    ASSERT_EQ(s->leaf_max(), cut);
    for (const auto& p : positions) {
      const auto want = db.probe(p);
      ASSERT_TRUE(want) << want.message;
      auto got = s->solve(p);
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
  auto s = solver(*db_, o, 10);
  const auto positions = sample(12, 10, 5, 3);
  ASSERT_FALSE(positions.empty());
  for (const auto& p : positions) {
    const int v = db_->probe(p).value;
    EXPECT_EQ(s->prove(p, v, nullptr), solve::Outcome::proven);
    EXPECT_EQ(s->prove(p, v + 1, nullptr), solve::Outcome::disproven);
  }
  // A malformed position: unknown, and the error says why.
  EXPECT_EQ(s->prove("1,1", 0, nullptr), solve::Outcome::unknown);
  ASSERT_TRUE(s->last_error());
  EXPECT_EQ(s->last_error()->code(), Errc::invalid_argument);
  // Leaves beyond the database are capped at what it covers; limits outside the game's are errors.
  auto capped = solve::Solver::open(*db_, o, 40);
  ASSERT_TRUE(capped);
  EXPECT_EQ((*capped)->leaf_max(), 12);
  EXPECT_FALSE(solve::Solver::open(*db_, o, 49));
}

TEST_F(Solve, LimitsGiveBoundsNotWrongValues) {
  solve::Options o;
  o.algorithm = solve::Algorithm::pn;
  o.max_nodes = 3;  // far too small to solve a 9-stone position from 2-stone leaves
  auto s = solver(*db_, o, 2);
  const std::string p = "2,1,1,0,1,1,1,0,1,1,0,0";
  auto r = s->solve(p);
  ASSERT_TRUE(r);
  // Unsolved for sure, so the bounds below are what is being checked, not a solved value.
  ASSERT_FALSE(r->solved) << "three nodes cannot solve it";
  const int v = db_->probe(p).value;
  EXPECT_LE(r->lower, v);
  EXPECT_GE(r->upper, v);
  EXPECT_LT(r->lower, r->upper) << "an unsolved search leaves a gap";
  EXPECT_FALSE(solve::parse_algorithm("alpha-beta"));
  EXPECT_TRUE(solve::parse_algorithm("ef-pn2"));
}

// Xiangqi: KRKG (mates within 10 plies, draws with Black to move) and KNKG (mates up to 38 plies,
// draws both ways) with their supporting endgames. Samples are taken per outcome (win, draw,
// loss of the side to move), so the search must find mates, escapes and endless play.
struct XiangqiSample {
  xiangqi::Board board;
  xiangqi::Color side;
  int value;  // +1, 0, -1 for the side to move, from the database
};

class XiangqiSolve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    ASSERT_TRUE(build(test::build_request("xiangqi", {"KRKG", "KNKG"}, dir_->path())));
    probe::Value err;
    db_ = probe::Prober::open(dir_->path().string(), {}, &err).release();
    ASSERT_NE(db_, nullptr) << err.message;
  }
  static void TearDownTestSuite() {
    delete db_;
    delete dir_;
  }
  static int outcome(int stored) { return stored == 0 ? 0 : (stored & 1) ? 1 : -1; }
  using Sample = XiangqiSample;
  // Up to `per` positions of each outcome, drawn by index, that PN solves with the leaves cut to
  // `cut` pieces within a small budget.
  static std::vector<Sample> sample(const std::string& endgame, int cut, int per,
                                    std::uint64_t seed) {
    auto g = xiangqi::Game::closure({*xiangqi::parse_material(endgame)});
    EXPECT_TRUE(g);
    const xiangqi::Game& game = **g;
    const int s = game.find(endgame);
    std::mt19937_64 rng(seed);
    solve::Options o;
    o.max_nodes = o.max_work = 20'000;
    auto pn = solver(*db_, o, cut);
    std::vector<Sample> out;
    int have[3] = {};
    for (int tries = 0; tries < 3000 && have[0] + have[1] + have[2] < 3 * per; ++tries) {
      const auto pos = game.unrank(s, rng() % game.segment_size(s));
      if (!pos.valid) continue;
      const xiangqi::Board b = game.board(s, pos);
      const auto v = db_->xiangqi_board(b, pos.side);
      EXPECT_TRUE(v) << v.message;
      const int want = outcome(v.value);
      if (v.value == 1 || have[want + 1] >= per) continue;  // capturing the king is no search
      auto r = pn->solve(xiangqi::to_fen(b, pos.side));
      if (r && r->solved) {
        out.push_back({b, pos.side, want});
        ++have[want + 1];
      }
    }
    EXPECT_EQ(out.size(), static_cast<std::size_t>(3 * per)) << endgame << ": samples found";
    return out;
  }
  static test::TempDir* dir_;
  static probe::Prober* db_;
};
test::TempDir* XiangqiSolve::dir_ = nullptr;
probe::Prober* XiangqiSolve::db_ = nullptr;

void expect_database_outcomes(const probe::Prober& db, int cut,
                              const std::vector<XiangqiSample>& positions) {
  ASSERT_FALSE(positions.empty());
  for (solve::Algorithm alg : solve::kAlgorithms) {
    solve::Options o;
    o.algorithm = alg;
    o.max_nodes = 300'000;
    o.max_work = 1'000'000;
    o.mc_la = 10;  // shorter random sequences keep MC-PNS (~0.2 ms per expansion) quick here
    auto s = solver(db, o, cut);
    for (const auto& p : positions) {
      const std::string fen = xiangqi::to_fen(p.board, p.side);
      auto got = s->solve(fen);
      ASSERT_TRUE(got) << got.error().message();
      ASSERT_TRUE(got->solved) << solve::name(alg) << ": not solved within the limits: " << fen;
      EXPECT_EQ(got->value, p.value) << solve::name(alg) << " cut " << cut << ": " << fen;
    }
  }
}

TEST_F(XiangqiSolve, EveryAlgorithmMatchesTheDatabaseOnePieceBelow) {
  auto krkg = sample("KRKG", 3, 2, 1);
  auto knkg = sample("KNKG", 3, 2, 2);
  krkg.insert(krkg.end(), knkg.begin(), knkg.end());
  int classes[3] = {};
  for (const auto& p : krkg) ++classes[p.value + 1];
  EXPECT_GE(classes[0], 2) << "losses";
  EXPECT_GE(classes[1], 2) << "draws";
  EXPECT_GE(classes[2], 2) << "wins";
  expect_database_outcomes(*db_, 3, krkg);
}

TEST_F(XiangqiSolve, EveryAlgorithmMatchesTheDatabaseTwoPiecesBelow) {
  expect_database_outcomes(*db_, 2, sample("KRKG", 2, 2, 3));
}

TEST_F(XiangqiSolve, ProveBothSidesAndBadInput) {
  solve::Options o;
  o.algorithm = solve::Algorithm::dfpn;
  auto s = solver(*db_, o, 3);
  const auto positions = sample("KNKG", 3, 1, 4);
  ASSERT_FALSE(positions.empty());
  for (const auto& p : positions) {
    // The side to move reaches its value and nothing better.
    const std::string fen = xiangqi::to_fen(p.board, p.side);
    EXPECT_EQ(s->prove(fen, p.value, nullptr), solve::Outcome::proven);
    EXPECT_EQ(s->prove(fen, p.value + 1, nullptr), solve::Outcome::disproven);
  }
  // Two red kings: an impossible board is unknown, with the reason.
  EXPECT_EQ(s->prove("3k5/9/9/9/9/9/9/9/9/3KK4 w", 1, nullptr), solve::Outcome::unknown);
  ASSERT_TRUE(s->last_error());
  EXPECT_EQ(s->last_error()->code(), Errc::invalid_argument);
  auto bad = s->solve("4k4/9 w");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::invalid_argument);
  // A position the database holds is answered without search.
  auto r = s->solve("3k5/9/9/9/9/9/9/9/4R4/4K4 w");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->solved);
  EXPECT_EQ(r->value, 1);
  EXPECT_EQ(r->stats.expanded, 0u);
}

}  // namespace
}  // namespace retra
