// Every 4-piece chess table (and every 3-piece one again) against the independent solver of
// chess_reference.hpp, on every legal position, both colourings, both sides to move: one test per
// table. Labelled "long" (about an hour on 2 cores; not part of scripts/test.sh): run it with
// `ctest --test-dir build/release -L long -j2`. The tables are built once by the ctest fixture
// ChessAllTables.Build (`retra build chess --pieces 3-4`) into the directory RETRA_CHESS_DB.
// Thread safety: none.
#include <gtest/gtest.h>

#include <string>

#include "chess_reference_check.hpp"
#include "src/games/chess/material.hpp"

namespace retra::chess {
namespace {

class ChessAllTables : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
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
