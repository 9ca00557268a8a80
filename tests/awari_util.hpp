// Test helper: build an Awari database into a fresh directory and read its segments back.
#pragma once

#include <vector>

#include "src/games/awari/module.hpp"
#include "test_util.hpp"

namespace retra::test {

// Awari 0..last stones into `db` with the suite's defaults.
inline BuildRequest awari_request(int last, const std::filesystem::path& db = {}) {
  return build_request("awari", awari::stone_range(0, last), db);
}

// Builds `req` (its db is replaced by a temporary directory) and returns the values of every
// segment 0..last, indexed by stone count.
inline std::vector<std::vector<std::int8_t>> build_awari(BuildRequest req, int last) {
  TempDir dir;
  req.db = dir.path();
  auto r = build(req);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  std::vector<std::vector<std::int8_t>> segs;
  if (!r) return segs;
  auto db = Database::open(dir.path());
  for (int n = 0; n <= last; ++n) segs.push_back(read_segment(**db, std::to_string(n)));
  return segs;
}

}  // namespace retra::test
