// Chess tables against the independent solver of chess_reference.hpp (boards, explicit graphs,
// no index, no kernel): WDL50, DTZ and DTM of every legal position of every 3-piece table, in
// both colourings and with both sides to move, and of the 4-piece pawn tables (en passant
// included) that fit a unit test; plus the public facts of the spec: the longest mates of KQvK,
// KRvK, KBBvK, KBNvK, KQvKR and KRvKN. Labelled slow (release builds only).
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "chess_reference_check.hpp"
#include "retra/probe.hpp"
#include "src/build/build.hpp"
#include "src/games/chess/module.hpp"
#include "src/games/chess/values.hpp"
#include "test_util.hpp"

namespace retra::chess {
namespace {

using check::expect_equal_to_reference;

// The tables under test (and everything their captures and promotions lead to), a comma-separated
// list from tests/CMakeLists.txt, which builds them for the fixture test.
std::vector<std::string> tables() {
  std::vector<std::string> out;
  std::string_view list = RETRA_CHESS_REFERENCE_TABLES;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    out.emplace_back(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

class ChessReference : public ::testing::Test {
 protected:
  // Under ctest the tables come from the fixture test ChessReference.Build (built once for the
  // three tests, each its own process); a run of the binary alone, or one built after the
  // fixture ran, builds them here.
  static void SetUpTestSuite() {
    std::filesystem::path path = RETRA_CHESS_REFERENCE_DB;
    std::error_code ec;
    const auto built_at = std::filesystem::last_write_time(path / "complete", ec);
    if (ec || built_at < std::filesystem::last_write_time("/proc/self/exe")) {
      dir_ = new test::TempDir();
      path = dir_->path();
      BuildRequest r = test::build_request("chess", {}, path);
      OptionValues ov;
      ov["--endgame"] = tables();
      auto targets = find_module("chess")->targets(ov);
      ASSERT_TRUE(targets) << targets.error().message();
      r.targets = *targets;
      auto built = build(r);
      ASSERT_TRUE(built) << built.error().message();
    }
    path_ = new std::filesystem::path(path);
    probe::Value err;
    db_ = probe::Prober::open(path.string(), {}, &err).release();
    ASSERT_NE(db_, nullptr) << err.message;
  }
  static void TearDownTestSuite() {  // and ready for another SetUpTestSuite (--gtest_repeat)
    delete db_;
    delete path_;
    delete dir_;
    db_ = nullptr;
    path_ = nullptr;
    dir_ = nullptr;
  }
  static test::TempDir* dir_;
  static std::filesystem::path* path_;
  static probe::Prober* db_;
};
test::TempDir* ChessReference::dir_ = nullptr;
std::filesystem::path* ChessReference::path_ = nullptr;
probe::Prober* ChessReference::db_ = nullptr;

TEST_F(ChessReference, EveryThreePieceTable) {
  for (const char* name : {"KQvK", "KRvK", "KBvK", "KNvK", "KPvK"})
    expect_equal_to_reference(*db_, name);
}

TEST_F(ChessReference, KingAndPawnAgainstKingAndPawn) { expect_equal_to_reference(*db_, "KPvKP"); }

// The spec's longest mates, winner to move.
TEST_F(ChessReference, PublicLongestMates) {
  auto db = Database::open(*path_);
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
