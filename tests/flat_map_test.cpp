// FlatMap64 (src/util/flat_map.hpp) against std::unordered_map: random inserts, overwrites,
// erases and finds, with keys drawn from a small range so that probe runs collide, wrap around the
// end of the table and are shifted back by erases.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "src/util/flat_map.hpp"

namespace retra {
namespace {

TEST(FlatMap64, FindsWhatWasInsertedAndNotWhatWasErased) {
  FlatMap64<int> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find(0), nullptr);
  EXPECT_TRUE(m.insert(0, 7));  // key 0 is a key like any other
  EXPECT_FALSE(m.insert(0, 8));
  ASSERT_NE(m.find(0), nullptr);
  EXPECT_EQ(*m.find(0), 7);
  m.assign(0, 9);
  EXPECT_EQ(*m.find(0), 9);
  m.assign(~std::uint64_t{0}, 1);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_TRUE(m.erase(0));
  EXPECT_FALSE(m.erase(0));
  EXPECT_EQ(m.find(0), nullptr);
  EXPECT_EQ(*m.find(~std::uint64_t{0}), 1);
  // Growth keeps every entry.
  for (std::uint64_t k = 0; k < 10000; ++k) m.assign(k * 977, static_cast<int>(k));
  for (std::uint64_t k = 0; k < 10000; ++k) ASSERT_EQ(*m.find(k * 977), static_cast<int>(k));
  EXPECT_EQ(m.size(), 10001u);
}

RC_GTEST_PROP(FlatMap64, BehavesAsAnUnorderedMap, ()) {
  const auto ops = *rc::gen::container<std::vector<std::pair<int, std::uint64_t>>>(
      rc::gen::pair(rc::gen::inRange(0, 4), rc::gen::inRange<std::uint64_t>(0, 64)));
  FlatMap64<std::uint32_t> m;
  std::unordered_map<std::uint64_t, std::uint32_t> ref;
  std::uint32_t next = 0;
  for (const auto& [op, k] : ops) {
    const std::uint64_t key = k * 0x100000001ull;  // spread over the 64 bits
    switch (op) {
      case 0:
        RC_ASSERT(m.insert(key, next) == ref.emplace(key, next).second);
        break;
      case 1:
        m.assign(key, next);
        ref[key] = next;
        break;
      case 2:
        RC_ASSERT(m.erase(key) == (ref.erase(key) == 1));
        break;
      default:
        break;
    }
    ++next;
    RC_ASSERT(m.size() == ref.size());
    for (std::uint64_t j = 0; j < 64; ++j) {
      const std::uint64_t q = j * 0x100000001ull;
      const auto it = ref.find(q);
      const std::uint32_t* v = m.find(q);
      RC_ASSERT((v != nullptr) == (it != ref.end()));
      if (v) RC_ASSERT(*v == it->second);
    }
  }
}

}  // namespace
}  // namespace retra
