// Chess tables against the independent solver of chess_reference.hpp (boards, explicit graphs,
// no index, no kernel): WDL50, DTZ and DTM of every legal position of every 3-piece table, in
// both colourings and with both sides to move, and of the 4-piece pawn tables (en passant
// included) that fit a unit test; plus the public facts of the spec: the longest mates of KQvK,
// KRvK, KBBvK, KBNvK, KQvKR and KRvKN. Labelled slow (release builds only).
#include <gtest/gtest.h>

#include <bit>

#include "chess_reference_check.hpp"
#include "retra/probe.hpp"
#include "src/build/build.hpp"
#include "src/games/chess/module.hpp"
#include "src/games/chess/values.hpp"
#include "test_util.hpp"

namespace retra::chess {
namespace {

using check::expect_equal_to_reference;

class ChessReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    BuildRequest r = test::build_request("chess", {}, dir_->path());
    OptionValues ov;
    ov["--endgame"] = {"KQvK",  "KRvK",  "KBvK",  "KNvK",  "KPvK",
                       "KPvKP", "KQvKR", "KRvKN", "KBBvK", "KBNvK"};
    auto targets = find_module("chess")->targets(ov);
    ASSERT_TRUE(targets) << targets.error().message();
    r.targets = *targets;
    auto built = build(r);
    ASSERT_TRUE(built) << built.error().message();
    probe::Value err;
    db_ = probe::Prober::open(dir_->path().string(), {}, &err).release();
    ASSERT_NE(db_, nullptr) << err.message;
  }
  static void TearDownTestSuite() {
    delete db_;
    delete dir_;
  }
  static test::TempDir* dir_;
  static probe::Prober* db_;
};
test::TempDir* ChessReference::dir_ = nullptr;
probe::Prober* ChessReference::db_ = nullptr;

TEST_F(ChessReference, EveryThreePieceTable) {
  for (const char* name : {"KQvK", "KRvK", "KBvK", "KNvK", "KPvK"})
    expect_equal_to_reference(*db_, name);
}

TEST_F(ChessReference, KingAndPawnAgainstKingAndPawn) { expect_equal_to_reference(*db_, "KPvKP"); }

// The spec's longest mates, winner to move.
TEST_F(ChessReference, PublicLongestMates) {
  auto db = Database::open(dir_->path());
  ASSERT_TRUE(db);
  auto stats = find_module("chess")->stats_report(**db, std::nullopt);
  ASSERT_TRUE(stats) << stats.error().message();
  const auto& e = stats->json["endgames"];
  const std::pair<const char*, int> facts[] = {{"KQvK", 19},  {"KRvK", 31},  {"KBBvK", 37},
                                               {"KBNvK", 65}, {"KQvKR", 69}, {"KRvKN", 79}};
  for (const auto& [name, plies] : facts) {
    ASSERT_TRUE(e.contains(name)) << name;
    EXPECT_EQ(e[name]["white"]["longest_dtm"]["plies"], plies) << name;
    // The example position really is that far from mate.
    const std::string fen = e[name]["white"]["longest_dtm"]["fen"];
    auto b = parse_fen(fen);
    ASSERT_TRUE(b) << fen;
    const auto v = db_->chess(bitboards_of(*b));
    EXPECT_EQ(v.dtm, plies) << fen;
  }
}

}  // namespace
}  // namespace retra::chess
