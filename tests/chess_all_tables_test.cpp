// Every 4-piece chess table (and every 3-piece one again) against the independent solver of
// chess_reference.hpp, on every legal position, both colourings, both sides to move: one test per
// table. Labelled "long" (47 minutes on 2 cores with the other long tests; not part of
// scripts/test.sh): run it with `ctest --preset long -j2`. The tables are built afresh by the
// ctest fixture ChessAllTables.Build (`retra build chess --pieces 3-4`) into the directory
// RETRA_CHESS_DB, which it marks "complete" when the build has finished.
// Thread safety: none.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "chess_reference_check.hpp"
#include "src/games/chess/material.hpp"

namespace retra::chess {
namespace {

class ChessAllTables : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = RETRA_CHESS_DB;
    ASSERT_TRUE(std::filesystem::exists(dir + "/complete"))
        << dir << " holds no finished build: run the fixture (ctest --preset long -R "
        << "ChessAllTables) or retra build chess --pieces 3-4 --db " << dir << ", then touch "
        << dir << "/complete";
    probe::Value err;
    db_ = probe::Prober::open(RETRA_CHESS_DB, {.cache_bytes = std::size_t{512} << 20}, &err)
              .release();
    ASSERT_NE(db_, nullptr) << err.message << " (build it: retra build chess --pieces 3-4 --db "
                            << RETRA_CHESS_DB << ")";
  }
  static void TearDownTestSuite() { delete db_; }
  static probe::Prober* db_;
};
probe::Prober* ChessAllTables::db_ = nullptr;

TEST_P(ChessAllTables, EqualsTheReferenceOnEveryPosition) {
  ASSERT_NE(db_, nullptr);
  check::expect_equal_to_reference(*db_, GetParam());
}

std::vector<std::string> tables() {
  std::vector<std::string> names;
  for (int n = 3; n <= 4; ++n)
    for (const Material& m : materials_with(n)) names.push_back(m.name());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Chess, ChessAllTables, ::testing::ValuesIn(tables()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace retra::chess
