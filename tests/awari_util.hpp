// Test helper: build an Awari database into a fresh directory and read its segments back.
#pragma once

#include <vector>

#include "src/games/awari/database.hpp"
#include "test_util.hpp"

namespace retra::test {

// Builds 0..opt.last stones with `opt` (its db is replaced by a temporary directory) and returns
// the values of every segment, index by stone count.
inline std::vector<std::vector<std::int8_t>> build_awari(awari::BuildOptions opt) {
  TempDir dir;
  opt.db = dir.path();
  auto r = awari::build(opt);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  std::vector<std::vector<std::int8_t>> segs;
  if (!r) return segs;
  auto db = Database::open(dir.path());
  for (int n = 0; n <= opt.last; ++n) segs.push_back(read_segment(**db, awari::segment_name(n)));
  return segs;
}

}  // namespace retra::test
