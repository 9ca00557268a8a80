// Entry orders: the digit permutation is a bijection with its walks in step, the writer measures
// and picks the order that compresses best, and an ordered file reads back every value (by
// index, whole, with the rules' entries restored) and refuses a damaged order section.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "src/format/entry_order.hpp"
#include "src/format/segment.hpp"
#include "test_util.hpp"

namespace retra::format {
namespace {

EntryOrder order(std::vector<std::uint64_t> radices, std::vector<std::uint8_t> stored) {
  std::uint64_t n = 1;
  for (auto r : radices) n *= r;
  auto o = EntryOrder::make(std::move(radices), std::move(stored), n);
  EXPECT_TRUE(o) << o.error().message();
  return o ? *o : EntryOrder();
}

TEST(EntryOrder, BadOrdersAreRefused) {
  EXPECT_FALSE(EntryOrder::make({2, 3}, {0, 0}, 6));                    // not a permutation
  EXPECT_FALSE(EntryOrder::make({2, 3}, {0, 2}, 6));                    // digit out of range
  EXPECT_FALSE(EntryOrder::make({2, 3}, {1}, 6));                       // one place missing
  EXPECT_FALSE(EntryOrder::make({2, 3}, {1, 0}, 7));                    // product != entries
  EXPECT_FALSE(EntryOrder::make({2, 0}, {1, 0}, 0));                    // zero radix
  EXPECT_FALSE(EntryOrder::make({1ull << 40, 1ull << 40}, {1, 0}, 0));  // overflow
  EXPECT_FALSE(
      EntryOrder::make(std::vector<std::uint64_t>(17, 1), std::vector<std::uint8_t>(17, 0), 1));
  EXPECT_TRUE(EntryOrder::make({2, 3}, {1, 0}, 6));
}

TEST(EntryOrder, PositionsAreABijectionAndTheWalksAgree) {
  const std::vector<std::uint64_t> radices{3, 4, 5, 2};
  std::vector<std::uint8_t> perm{0, 1, 2, 3};
  int orders = 0;
  do {
    const EntryOrder o = order(radices, perm);
    const std::uint64_t n = 3 * 4 * 5 * 2;
    EXPECT_EQ(o.identity(), perm == std::vector<std::uint8_t>({0, 1, 2, 3}));
    std::vector<bool> hit(n, false);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t p = o.position(i);
      ASSERT_LT(p, n);
      EXPECT_FALSE(hit[p]);
      hit[p] = true;
      EXPECT_EQ(o.index(p), i);
    }
    // The stored order really has perm's last digit fastest.
    const std::size_t last = perm.back();
    std::uint64_t place = 1;
    for (std::size_t j = last + 1; j < radices.size(); ++j) place *= radices[j];
    EXPECT_EQ(o.index(1), place);
    for (std::uint64_t start : {0ull, 7ull, 59ull}) {
      EntryOrder::Walk by_index(o, start, true), by_position(o, start, false);
      for (std::uint64_t k = start; k < n; ++k) {
        ASSERT_EQ(by_index.other(), o.position(k));
        ASSERT_EQ(by_position.other(), o.index(k));
        by_index.step();
        by_position.step();
      }
      // A run at a time (gather_block): run() entries at stride() apart, then skip() past them,
      // also stopping short of a run's end.
      EntryOrder::Walk runs(o, start, false);
      for (std::uint64_t k = start; k < n;) {
        const std::uint64_t len = std::min(runs.run(), n - k);
        ASSERT_GE(len, 1u);
        const std::uint64_t part = len > 1 && k % 2 ? len - 1 : len;
        for (std::uint64_t r = 0; r < part; ++r)
          ASSERT_EQ(runs.other() + r * runs.stride(), o.index(k + r));
        k += part;
        runs.skip(part);
        if (k < n) {
          ASSERT_EQ(runs.other(), o.index(k));
        }
      }
    }
    ++orders;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(orders, 24);
  // Wide segments (2^32 entries or more) take the 64-bit path: the same map.
  const EntryOrder wide = order({1ull << 20, 3, 1ull << 13}, {2, 0, 1});
  const EntryOrder narrow = order({1ull << 10, 3, 1ull << 13}, {2, 0, 1});
  for (std::uint64_t i : {0ull, 1ull, 8191ull, 8192ull, 3ull << 13, (3ull << 23) - 1}) {
    EXPECT_EQ(wide.index(wide.position(i)), i);
    EXPECT_EQ(narrow.index(narrow.position(i)), i);
    EXPECT_EQ(narrow.position(i) % 3, wide.position(i) % 3);
  }
  EXPECT_EQ(wide.index(wide.position((3ull << 33) - 5)), (3ull << 33) - 5);
  // No digits at all: index order, also for the walks.
  EntryOrder::Walk plain(EntryOrder(), 41, true);
  for (std::uint64_t k = 41; k < 50; ++k, plain.step()) EXPECT_EQ(plain.other(), k);
  plain.skip(5);
  EXPECT_EQ(plain.other(), 55u);
  EXPECT_EQ(plain.stride(), 1u);
  EXPECT_EQ(EntryOrder().position(77), 77u);
  // Digits of radix 1 do not move anything.
  EXPECT_TRUE(order({1, 6, 1, 5}, {2, 1, 0, 3}).identity());
  EXPECT_EQ(order({2, 3}, {1, 0}).describe(), "2x3 stored 1,0");
  EXPECT_EQ(entry_order_text(EntryOrder()), "index");
}

// Tiles (read_all's permutation) move every entry to where position() and index() say, in any
// split of the tiles, for every stored order; they decline the orders a walk copies as well.
TEST(EntryOrder, TilesPermuteLikeThePositionMap) {
  const std::vector<std::uint64_t> radices{9, 1, 3, 10, 8};
  const std::uint64_t n = 9 * 3 * 10 * 8;
  std::vector<std::uint8_t> by_index(n), by_stored(n);
  for (std::uint64_t i = 0; i < n; ++i) by_index[i] = static_cast<std::uint8_t>(i * 7 + i / 251);
  std::vector<std::uint8_t> perm{0, 1, 2, 3, 4};
  int tiled = 0;
  do {
    const EntryOrder o = order(radices, perm);
    for (std::uint64_t i = 0; i < n; ++i) by_stored[o.position(i)] = by_index[i];
    const EntryOrder::Tiles tiles(o);
    // The fastest digit with radix > 1 on each side: tiles only where they differ (both >= 8).
    const std::uint8_t s = perm.back() == 4 ? 4 : perm.back() == 1 ? perm[3] : perm.back();
    const bool expect = !o.identity() && s != 4 && radices[s] >= EntryOrder::Tiles::kMinRadix;
    ASSERT_EQ(tiles.usable(), expect) << o.describe();
    if (!tiles.usable()) continue;
    ++tiled;
    ASSERT_EQ(tiles.count() * tiles.entries_per_tile(), n);
    for (std::uint64_t cut : {std::uint64_t{1}, tiles.count() / 3, tiles.count() - 1}) {
      std::vector<std::uint8_t> back(n, 0xEE), there(n, 0xEE);
      tiles.to_index(by_stored.data(), back.data(), 0, cut);
      tiles.to_index(by_stored.data(), back.data(), cut, tiles.count());
      ASSERT_EQ(back, by_index) << o.describe() << " cut " << cut;
      auto to_stored = [&](std::uint64_t t0, std::uint64_t t1) {
        tiles.visit(t0, t1, [&](std::uint64_t i, std::uint64_t p) { there[p] = by_index[i]; });
      };
      to_stored(cut, tiles.count());
      to_stored(0, cut);
      ASSERT_EQ(there, by_stored) << o.describe() << " cut " << cut;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_GT(tiled, 20);
  // Tiles pay where a walk in index order comes back to a stored line after more than
  // kWalkReuse entries: KRBvKR's order (the king pair stored fastest), not KQRvKR's.
  const auto krb = EntryOrder::make({2, 462, 62, 61, 60}, {3, 0, 4, 2, 1}, 209674080);
  const auto kqr = EntryOrder::make({2, 462, 62, 61, 60}, {2, 0, 4, 1, 3}, 209674080);
  ASSERT_TRUE(krb && kqr);
  EXPECT_TRUE(EntryOrder::Tiles(*krb).pays());
  EXPECT_TRUE(EntryOrder::Tiles(*kqr).usable());
  EXPECT_FALSE(EntryOrder::Tiles(*kqr).pays());
}

SegmentInfo info(std::uint64_t entries, std::uint32_t block) {
  return {"xiangqi", "fang", "test", "dtm-u8", "T", entries, 1, block};
}

// Values that depend on digits 0 and 2 only (radices 2 x 32 x 8192): in index order every
// 1024-entry block holds 1024 random values; with digit 1 fastest, runs of 32 equal ones.
std::vector<std::uint64_t> kDigits{2, 32, 8192};
std::vector<std::uint8_t> digit_data() {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> noise(2 * 8192);
  for (auto& x : noise) x = static_cast<std::uint8_t>(rng() % 16);
  std::vector<std::uint8_t> v(2 * 32 * 8192);
  for (std::uint64_t i = 0; i < v.size(); ++i) v[i] = noise[(i / (32 * 8192)) * 8192 + i % 8192];
  return v;
}

// Entries whose index is a multiple of 5 are the rules': value index % 3.
struct FifthsRules final : EntryRules {
  void rule_values(std::uint64_t first, std::span<std::int16_t> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = (first + i) % 5 == 0 ? static_cast<std::int16_t>((first + i) % 3) : kStored;
  }
};

TEST(EntryOrderSegment, TheWriterPicksTheOrderThatCompresses) {
  test::TempDir dir;
  const auto data = digit_data();
  WriteOptions by_index(3, 2);
  by_index.digits = kDigits;
  by_index.order = OrderChoice::index;
  auto a = write_segment(dir / "a.rseg", info(data.size(), 1024), data, by_index);
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_TRUE(a->order.identity());
  WriteOptions automatic(3, 2);
  automatic.digits = kDigits;
  auto b = write_segment(dir / "b.rseg", info(data.size(), 1024), data, automatic);
  ASSERT_TRUE(b) << b.error().message();
  ASSERT_FALSE(b->order.identity());
  EXPECT_EQ(b->order.stored().back(), 1) << b->order.describe();
  EXPECT_LT(b->file_bytes * 4, a->file_bytes);
  auto ra = SegmentReader::open(dir / "a.rseg"), rb = SegmentReader::open(dir / "b.rseg");
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ((*ra)->version(), 2u) << "index order stays version 2";
  EXPECT_EQ((*rb)->version(), 3u);
  EXPECT_EQ((*rb)->order().describe(), b->order.describe());
  std::vector<std::uint8_t> all(data.size());
  ASSERT_TRUE((*rb)->read_all(all, 2));
  EXPECT_EQ(all, data);
}

TEST(EntryOrderSegment, EveryCodecReadsBackWithRules) {
  test::TempDir dir;
  auto data = digit_data();
  for (std::uint64_t i = 0; i < data.size(); i += 5) data[i] = static_cast<std::uint8_t>(i % 3);
  auto rules = std::make_shared<FifthsRules>();
  for (auto codec : {CodecChoice::zstd, CodecChoice::zstd_dict, CodecChoice::rans_o1}) {
    WriteOptions opt(3, 2, codec, rules.get());
    opt.digits = kDigits;
    opt.stored_order = {2, 0, 1};
    auto w = write_segment(dir / "o.rseg", info(data.size(), 4096), data, opt);
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(w->rule_entries, (data.size() + 4) / 5);
    EXPECT_EQ(w->order.describe(), "2x32x8192 stored 2,0,1");
    auto r = SegmentReader::open(dir / "o.rseg", 16, rules);
    ASSERT_TRUE(r) << r.error().message();
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, data);
    for (std::uint64_t i = 0; i < data.size(); i += 37) {
      auto v = (*r)->byte_at(i);
      ASSERT_TRUE(v) << v.error().message();
      ASSERT_EQ(*v, data[i]) << i;
    }
    // A stored block: consecutive positions, every value restored.
    std::vector<std::uint8_t> block((*r)->raw_bytes(3));
    ASSERT_TRUE((*r)->read_block(3, block));
    for (std::size_t k = 0; k < block.size(); ++k)
      ASSERT_EQ(block[k], data[(*r)->order().index(3 * 4096 + k)]) << k;
    // Without the rules nothing is read.
    auto bare = SegmentReader::open(dir / "o.rseg");
    ASSERT_TRUE(bare);
    EXPECT_FALSE((*bare)->read_all(all, 1));
  }
  // A contradicting value is refused, as in index order.
  data[10] = 2;
  WriteOptions opt(3, 2, CodecChoice::zstd, rules.get());
  opt.digits = kDigits;
  opt.stored_order = {2, 0, 1};
  auto w = write_segment(dir / "bad.rseg", info(data.size(), 4096), data, opt);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), Errc::internal);
  EXPECT_NE(w.error().message().find("entry 10 holds 2"), std::string::npos) << w.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.rseg"));
}

// The writer gathers a stored block either by runs of consecutive indices (the index's last
// digit, when the stored order puts it above its fastest digit and a block holds enough of its
// values) or by a walk in stored order: every stored order, with and without rules, blocks that
// cut the digits' cycles anywhere, reads back as written.
TEST(EntryOrderSegment, EveryStoredOrderRoundTripsWithBlocksAcrossDigitCycles) {
  test::TempDir dir;
  const std::vector<std::uint64_t> radices{3, 20, 7, 24};  // the last one >= 16: runs pay
  std::vector<std::uint8_t> data(3 * 20 * 7 * 24);
  std::mt19937 rng(11);
  for (auto& x : data) x = static_cast<std::uint8_t>(rng() % 251);
  for (std::uint64_t i = 0; i < data.size(); i += 5) data[i] = static_cast<std::uint8_t>(i % 3);
  auto rules = std::make_shared<FifthsRules>();
  std::vector<std::uint8_t> perm{0, 1, 2, 3};
  do {
    for (const EntryRules* with :
         {static_cast<const EntryRules*>(nullptr), static_cast<const EntryRules*>(rules.get())}) {
      for (std::uint32_t block : {1000u, 4096u}) {
        WriteOptions opt(1, 2, CodecChoice::zstd, with);
        opt.digits = radices;
        opt.stored_order = perm;
        const auto path = dir / "p.rseg";
        auto w = write_segment(path, info(data.size(), block), data, opt);
        ASSERT_TRUE(w) << w.error().message();
        auto r = SegmentReader::open(path, 16, rules);
        ASSERT_TRUE(r) << r.error().message();
        std::vector<std::uint8_t> all(data.size());
        ASSERT_TRUE((*r)->read_all(all, 2));
        ASSERT_EQ(all, data) << (*r)->order().describe() << " block " << block
                             << (with ? " with rules" : "");
        std::vector<std::uint8_t> stored((*r)->raw_bytes(1));
        ASSERT_TRUE((*r)->read_block(1, stored));
        for (std::size_t k = 0; k < stored.size(); ++k)
          ASSERT_EQ(stored[k], data[(*r)->order().index(block + k)]) << k;
      }
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

// Holes given as a bit set (EntryRules::zero_bits, as the builds' KnownHoles): every marked
// entry holds 0.
struct HoleBits final : EntryRules {
  std::vector<std::uint64_t> bits;
  void rule_values(std::uint64_t first, std::span<std::int16_t> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = is_hole(first + i) ? std::int16_t{0} : kStored;
  }
  bool holes_only() const override { return true; }
  std::span<const std::uint64_t> zero_bits() const override { return bits; }
  bool is_hole(std::uint64_t x) const { return (bits[x >> 6] >> (x & 63)) & 1; }
};

// Stored block b as the file must hold it, computed the plain way: the entries at its positions,
// each one the rules answer (is_rule) replaced by the last stored entry before it in the block,
// or by the block's first other entry at its start (0 if it has none).
template <class IsRule>
std::vector<std::uint8_t> filled_block(const std::vector<std::uint8_t>& data, const EntryOrder& o,
                                       std::uint64_t first, std::uint64_t len,
                                       const IsRule& is_rule) {
  std::vector<std::uint8_t> v(len);
  std::vector<bool> rule(len);
  for (std::uint64_t k = 0; k < len; ++k) {
    const std::uint64_t i = o.index(first + k);
    v[k] = data[i];
    rule[k] = is_rule(i);
  }
  std::uint8_t fill = 0;
  for (std::uint64_t k = 0; k < len; ++k)
    if (!rule[k]) {
      fill = v[k];
      break;
    }
  for (std::uint64_t k = 0; k < len; ++k) {
    if (rule[k])
      v[k] = fill;
    else
      fill = v[k];
  }
  return v;
}

// The writer gathers each stored block and fills its rule entries (segment.cpp: runs of the
// index's last digit, a walk in stored order with whole runs of consecutive indices, slabs by
// tiles; the fill 8 entries a step). Every stored block of every order must hold exactly what
// the plain computation gives, with rules asked entry by entry and with holes as a bit set:
// scattered holes and runs of them longer than a 64-bit word, blocks of a size that is not a
// multiple of 8.
TEST(EntryOrderSegment, EveryStoredBlockHoldsItsEntriesWithTheRuleEntriesFilled) {
  test::TempDir dir;
  struct Shape {
    std::vector<std::uint64_t> radices;
    std::vector<std::vector<std::uint8_t>> orders;  // empty: every permutation
    std::uint32_t block;
  };
  const std::vector<Shape> shapes{
      {{3, 20, 7, 70}, {}, 1000},
      {{3, 20, 7, 70}, {}, 4096},
      {{3, 20, 30, 30, 24}, {{0, 4, 2, 3, 1}}, 8192},  // by slabs (the test above)
  };
  for (const Shape& shape : shapes) {
    const std::uint64_t n = std::accumulate(shape.radices.begin(), shape.radices.end(),
                                            std::uint64_t{1}, std::multiplies<>());
    std::mt19937 rng(23);
    std::vector<std::uint8_t> data(n);
    for (auto& x : data) x = static_cast<std::uint8_t>(1 + rng() % 5);
    auto holes = std::make_shared<HoleBits>();
    holes->bits.assign((n + 63) / 64, 0);
    for (std::uint64_t i = 0; i < n; ++i)
      if (rng() % 7 == 0 || (i / 150) % 9 == 4) {  // scattered, and runs of 150
        holes->bits[i >> 6] |= 1ull << (i & 63);
        data[i] = 0;
      }
    std::uint64_t hole_count = 0;
    for (const auto w : holes->bits) hole_count += static_cast<std::uint64_t>(std::popcount(w));
    auto fifths = std::make_shared<FifthsRules>();
    std::vector<std::uint8_t> fifths_data = data;
    for (std::uint64_t i = 0; i < n; i += 5) fifths_data[i] = static_cast<std::uint8_t>(i % 3);
    std::vector<std::vector<std::uint8_t>> orders = shape.orders;
    if (orders.empty()) {
      std::vector<std::uint8_t> perm(shape.radices.size());
      std::iota(perm.begin(), perm.end(), std::uint8_t{0});
      do orders.push_back(perm);
      while (std::next_permutation(perm.begin(), perm.end()));
    }
    for (const auto& stored : orders)
      for (const bool bits : {true, false}) {
        const std::vector<std::uint8_t>& values = bits ? data : fifths_data;
        const EntryRules* rules = bits ? static_cast<const EntryRules*>(holes.get()) : fifths.get();
        WriteOptions opt(1, 2, CodecChoice::zstd, rules);
        opt.digits = shape.radices;
        opt.stored_order = stored;
        auto w = write_segment(dir / "f.rseg", info(n, shape.block), values, opt);
        ASSERT_TRUE(w) << w.error().message();
        EXPECT_EQ(w->rule_entries, bits ? hole_count : (n + 4) / 5);
        std::shared_ptr<const EntryRules> reader_rules = fifths;
        if (bits) reader_rules = holes;
        auto r = SegmentReader::open(dir / "f.rseg", 16, reader_rules);
        ASSERT_TRUE(r) << r.error().message();
        const EntryOrder& o = (*r)->order();
        for (std::uint64_t b = 0; b < (*r)->info().blocks(); ++b) {
          const std::uint64_t first = b * shape.block;
          std::vector<std::uint8_t> got((*r)->raw_bytes(b));
          ASSERT_TRUE((*r)->read_stored_block(b, got));
          const auto want = filled_block(values, o, first, got.size(), [&](std::uint64_t i) {
            return bits ? holes->is_hole(i) : i % 5 == 0;
          });
          ASSERT_EQ(got, want) << o.describe() << " block " << b << (bits ? " holes" : " fifths");
        }
      }
  }
}

// Holes given as bits are checked as rules given entry by entry are: the first hole (by index)
// that holds a value is named, and nothing is written.
TEST(EntryOrderSegment, AHoleGivenAsABitThatHoldsAValueIsRefused) {
  test::TempDir dir;
  const std::uint64_t n = 3 * 20 * 7 * 70;
  std::vector<std::uint8_t> data(n, 2);
  auto holes = std::make_shared<HoleBits>();
  holes->bits.assign((n + 63) / 64, 0);
  for (std::uint64_t i = 0; i < n; i += 3) {
    holes->bits[i >> 6] |= 1ull << (i & 63);
    data[i] = 0;
  }
  data[7'001] = 4;  // not a hole: stored
  data[7'002] = 5;  // a hole
  data[8'001] = 6;  // a later hole
  WriteOptions opt(1, 2, CodecChoice::zstd, holes.get());
  opt.digits = {3, 20, 7, 70};
  opt.stored_order = {3, 0, 1, 2};
  auto w = write_segment(dir / "bad.rseg", info(n, 4096), data, opt);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), Errc::internal);
  EXPECT_NE(w.error().message().find("entry 7002 holds 5"), std::string::npos)
      << w.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.rseg"));
}

// read_all permutes by tiles where they pay (the slowest index digit stored fastest, 18,000
// entries between a walk's visits to a line): every value back, the rules' entries restored,
// with any number of threads.
TEST(EntryOrderSegment, AnOrderThatTilesReadsBackWhole) {
  test::TempDir dir;
  const std::vector<std::uint64_t> radices{12, 20, 30, 30};
  std::vector<std::uint8_t> data(12 * 20 * 30 * 30);
  std::mt19937 rng(13);
  for (auto& x : data) x = static_cast<std::uint8_t>(rng() % 9);
  for (std::uint64_t i = 0; i < data.size(); i += 5) data[i] = static_cast<std::uint8_t>(i % 3);
  auto rules = std::make_shared<FifthsRules>();
  WriteOptions opt(3, 2, CodecChoice::zstd, rules.get());
  opt.digits = radices;
  opt.stored_order = {1, 2, 3, 0};
  auto w = write_segment(dir / "t.rseg", info(data.size(), 5000), data, opt);
  ASSERT_TRUE(w) << w.error().message();
  auto r = SegmentReader::open(dir / "t.rseg", 16, rules);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_TRUE(EntryOrder::Tiles((*r)->order()).pays()) << (*r)->order().describe();
  for (int threads : {1, 2, 3}) {
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, threads));
    ASSERT_EQ(all, data) << threads << " threads";
  }
}

// The writer gathers the blocks of an order whose stored walk comes back to an index line only
// after more than kWalkReuse entries from slabs it permutes by tiles (three slabs of 432,000
// entries here, batches of 64 blocks that cut them anywhere): every value reads back, the
// rules' entries restored, with one thread and with three.
TEST(EntryOrderSegment, AnOrderWrittenBySlabsReadsBackWhole) {
  test::TempDir dir;
  const std::vector<std::uint64_t> radices{3, 20, 30, 30, 24};
  std::vector<std::uint8_t> data(3 * 20 * 30 * 30 * 24);
  std::mt19937 rng(17);
  for (auto& x : data) x = static_cast<std::uint8_t>(rng() % 5);
  for (std::uint64_t i = 0; i < data.size(); i += 5) data[i] = static_cast<std::uint8_t>(i % 3);
  auto rules = std::make_shared<FifthsRules>();
  for (int threads : {1, 3}) {
    WriteOptions opt(1, threads, CodecChoice::zstd, rules.get());
    opt.digits = radices;
    opt.stored_order = {0, 4, 2, 3, 1};
    auto w = write_segment(dir / "s.rseg", info(data.size(), 8192), data, opt);
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(w->rule_entries, (data.size() + 4) / 5);
    auto r = SegmentReader::open(dir / "s.rseg", 16, rules);
    ASSERT_TRUE(r) << r.error().message();
    const EntryOrder::Tiles tiles((*r)->order(), /*by_stored=*/true);
    ASSERT_TRUE(tiles.pays_for_writing()) << (*r)->order().describe();
    ASSERT_EQ(tiles.slab_entries(), 432000u);
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, threads));
    ASSERT_EQ(all, data) << threads << " threads";
    for (const std::uint64_t b :
         {std::uint64_t{0}, std::uint64_t{52}, std::uint64_t{53}, (*r)->info().blocks() - 1}) {
      std::vector<std::uint8_t> block((*r)->raw_bytes(b));
      ASSERT_TRUE((*r)->read_block(b, block));
      for (std::size_t k = 0; k < block.size(); ++k)
        ASSERT_EQ(block[k], data[(*r)->order().index(b * 8192 + k)]) << b << " " << k;
    }
  }
}

// The codec and order estimates compress sample blocks at the segment's level, and the writer
// reuses those where it writes the same blocks (segment.cpp, CompressedBlocks). Where the
// automatic choice settles on plain zstd, its file must equal, byte for byte, the file written
// with zstd named, which compresses every block itself: a block reused from another order or
// another level would differ. Three shapes: an order chosen (the index-order samples dropped),
// index order kept with more blocks than a sample holds, and a segment that is its own sample.
TEST(EntryOrderSegment, BlocksCompressedByTheEstimatesAreTheBlocksWritten) {
  test::TempDir dir;
  auto file = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  std::mt19937 rng(11);
  std::vector<std::uint8_t> pattern(3000);
  for (auto& x : pattern) x = static_cast<std::uint8_t>(rng() % 9);
  std::vector<std::uint8_t> repeats(2 * 32 * 8192);  // zstd's kind of data in index order
  for (std::size_t i = 0; i < repeats.size(); ++i) repeats[i] = pattern[i % pattern.size()];
  struct Case {
    std::vector<std::uint8_t> data;
    std::uint32_t block;
    bool ordered;  // an order other than index order is expected
  };
  for (const Case& c : {Case{digit_data(), 65536, true}, Case{repeats, 4096, false},
                        Case{repeats, 131072, false}}) {
    SCOPED_TRACE(fmt::format("{} entries per block", c.block));
    WriteOptions automatic(19, 2);
    automatic.digits = kDigits;
    auto a = write_segment(dir / "a.rseg", info(c.data.size(), c.block), c.data, automatic);
    ASSERT_TRUE(a) << a.error().message();
    ASSERT_EQ(a->codec, Codec::zstd);
    EXPECT_EQ(a->order.identity(), !c.ordered) << a->order.describe();
    WriteOptions named(19, 2, CodecChoice::zstd);
    named.digits = kDigits;
    auto z = write_segment(dir / "z.rseg", info(c.data.size(), c.block), c.data, named);
    ASSERT_TRUE(z) << z.error().message();
    EXPECT_EQ(z->order.describe(), a->order.describe());
    EXPECT_EQ(file(dir / "a.rseg"), file(dir / "z.rseg"));
    auto r = SegmentReader::open(dir / "a.rseg");
    ASSERT_TRUE(r) << r.error().message();
    std::vector<std::uint8_t> all(c.data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, c.data);
  }
}

TEST(EntryOrderSegment, BadDigitsAndADamagedOrderSectionAreRefused) {
  test::TempDir dir;
  const auto data = digit_data();
  WriteOptions opt(3, 1);
  opt.digits = {2, 32, 8191};  // product != entries
  opt.stored_order = {2, 1, 0};
  EXPECT_FALSE(write_segment(dir / "x.rseg", info(data.size(), 4096), data, opt));
  opt.digits = kDigits;
  ASSERT_TRUE(write_segment(dir / "o.rseg", info(data.size(), 4096), data, opt));
  SegmentHeader h;
  {
    std::ifstream f(dir / "o.rseg", std::ios::binary);
    f.read(reinterpret_cast<char*>(&h), sizeof h);
  }
  ASSERT_EQ(h.version, 3u);
  ASSERT_EQ(h.order_digits, 3u);
  // Flip the last stored digit: the section's checksum catches it.
  std::fstream f(dir / "o.rseg", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(h.order_offset + 8 * 3 + 2));
  const char c = 1;
  f.write(&c, 1);
  f.close();
  auto r = SegmentReader::open(dir / "o.rseg");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::corrupt);
  EXPECT_NE(r.error().message().find("entry order"), std::string::npos) << r.error().message();
}

// The trials' sample: one piece drawn inside each 64th of the segment, on a piece boundary, the
// same for the same size; not evenly spaced (such pieces met one phase of the index's structure in
// every 64th and chose orders up to 23% larger on chess segments).
TEST(EntryOrderSegment, TrialPiecesAreOnePerSixtyFourthOnPieceBoundaries) {
  for (const auto& [entries, block] :
       std::vector<std::pair<std::uint64_t, std::uint64_t>>{{114'367'680, 262'144},
                                                            {104'837'040, 1'048'576},
                                                            {14'500'000, 65'536},
                                                            {64 * 65'536 + 1, 65'536}}) {
    const std::uint64_t piece = std::min<std::uint64_t>(block, 262'144);
    const auto pieces = order_trial_pieces(entries, block);
    ASSERT_EQ(pieces.size(), 64u) << entries;
    EXPECT_EQ(pieces, order_trial_pieces(entries, block));
    std::vector<std::uint64_t> gaps;
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const auto [first, len] = pieces[k];
      EXPECT_EQ(len, piece);
      EXPECT_LE(first + len, entries);
      EXPECT_TRUE(first % piece == 0 || first == entries - piece) << k;
      const std::uint64_t lo = k * entries / 64, hi = (k + 1) * entries / 64;
      EXPECT_LT(first, hi) << k;          // starts inside its 64th or the piece before it
      EXPECT_GT(first + piece, lo) << k;  // and reaches into it
      if (k > 0) gaps.push_back(first - pieces[k - 1].first);
    }
    std::sort(gaps.begin(), gaps.end());
    // (A 64th of a piece and a bit leaves each piece one place.)
    if (entries / 64 >= 2 * piece) {
      EXPECT_NE(gaps.front(), gaps.back()) << "evenly spaced pieces";
    }
  }
  // A segment of at most 64 pieces is its own sample, whole.
  const auto all = order_trial_pieces(64 * 65'536, 65'536);
  ASSERT_EQ(all.size(), 64u);
  for (std::size_t k = 0; k < all.size(); ++k)
    EXPECT_EQ(all[k], (std::pair<std::uint64_t, std::uint64_t>{k * 65'536, 65'536}));
  const auto small = order_trial_pieces(1000, 256);
  ASSERT_EQ(small.size(), 4u);
  EXPECT_EQ(small.back(), (std::pair<std::uint64_t, std::uint64_t>{768, 232}));
}

}  // namespace
}  // namespace retra::format
