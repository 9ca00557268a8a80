// The order-1 rANS block codec: exact round trips on skewed, uniform and degenerate data, models
// that survive serialization, and damaged streams or models refused without a crash.
#include <gtest/gtest.h>

#include <random>

#include "src/format/rans.hpp"

namespace retra::format::rans {
namespace {

std::vector<std::uint8_t> markov(std::size_t n, int symbols, unsigned seed) {
  // Each byte mostly repeats or steps from the one before: the statistics order-1 coding is for.
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  int x = 0;
  for (auto& b : v) {
    const unsigned r = rng() % 16;
    if (r >= 12)
      x = static_cast<int>(rng() % static_cast<unsigned>(symbols));
    else if (r >= 8)
      x = (x + 1) % symbols;
    b = static_cast<std::uint8_t>(x);
  }
  return v;
}

void expect_round_trip(const std::vector<std::uint8_t>& data, std::uint64_t block) {
  const Model m = Model::build(data, block);
  auto parsed = Model::parse(m.serialize());
  ASSERT_TRUE(parsed) << parsed.error().message();
  std::vector<std::uint8_t> enc, dec;
  for (std::uint64_t at = 0; at < data.size(); at += block) {
    const std::size_t n = std::min<std::uint64_t>(block, data.size() - at);
    const std::span<const std::uint8_t> in(data.data() + at, n);
    ASSERT_TRUE(m.encode(in, enc));
    dec.assign(n, 0xaa);
    ASSERT_TRUE(parsed->decode(enc, dec)) << "block at " << at;
    ASSERT_TRUE(std::equal(dec.begin(), dec.end(), in.begin())) << "block at " << at;
  }
}

TEST(Rans, RoundTripsAndBeatsOrderZeroOnMarkovData) {
  const auto data = markov(200'000, 41, 1);
  expect_round_trip(data, 65536);
  expect_round_trip(data, 1000);
  // The coded size is within 1% of the model's cross entropy (plus the 4-byte flushes).
  const Model m = Model::build(data, 65536);
  Model::Counts counts;
  for (std::size_t at = 0; at < data.size(); at += 65536)
    Model::count_block({data.data() + at, std::min<std::size_t>(65536, data.size() - at)}, counts);
  std::size_t coded = 0;
  std::vector<std::uint8_t> enc;
  for (std::size_t at = 0; at < data.size(); at += 65536) {
    ASSERT_TRUE(m.encode({data.data() + at, std::min<std::size_t>(65536, data.size() - at)}, enc));
    coded += enc.size();
  }
  const double ideal = m.cost_bits(counts) / 8;
  EXPECT_LT(static_cast<double>(coded), ideal * 1.01 + 4 * 4);
  EXPECT_GT(static_cast<double>(coded), ideal * 0.99);
  // Order-1 structure: far below the 41-symbol order-0 ~5.3 bits.
  EXPECT_LT(8.0 * static_cast<double>(coded) / static_cast<double>(data.size()), 4.0);
}

TEST(Rans, DegenerateAndFullAlphabetData) {
  expect_round_trip(std::vector<std::uint8_t>(100'000, 7), 4096);  // one symbol
  expect_round_trip({42}, 4096);                                   // one byte
  std::vector<std::uint8_t> all(300'000);
  std::mt19937 rng(5);
  for (auto& b : all) b = static_cast<std::uint8_t>(rng());  // 256 symbols, 256 contexts
  expect_round_trip(all, 65536);
  std::vector<std::uint8_t> skew(100'000, 0);  // one rare symbol in a sea of zeros
  skew[777] = 255;
  expect_round_trip(skew, 65536);
}

TEST(Rans, EncodingWithAnotherDataModelFailsCleanly) {
  const Model m = Model::build(std::vector<std::uint8_t>(1000, 3), 1000);
  std::vector<std::uint8_t> enc;
  const std::vector<std::uint8_t> other = {3, 3, 4};
  EXPECT_FALSE(m.encode(other, enc));
}

TEST(Rans, DamagedStreamsAreRefusedNotCrashed) {
  const auto data = markov(20'000, 30, 2);
  const Model m = Model::build(data, data.size());
  std::vector<std::uint8_t> enc;
  ASSERT_TRUE(m.encode(data, enc));
  std::vector<std::uint8_t> out(data.size());
  std::mt19937 rng(9);
  int refused = 0;
  for (int t = 0; t < 200; ++t) {
    auto bad = enc;
    bad[rng() % bad.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    if (!m.decode(bad, out)) ++refused;
  }
  EXPECT_GT(refused, 190);  // the final-state check catches nearly every change
  EXPECT_FALSE(m.decode({enc.data(), enc.size() - 1}, out));  // truncated
  EXPECT_FALSE(m.decode({enc.data(), 3}, out));
  std::vector<std::uint8_t> longer(data.size() + 1);
  EXPECT_FALSE(m.decode(enc, longer));  // more entries than were coded
}

TEST(Rans, DamagedModelsAreRefused) {
  const Model m = Model::build(markov(5000, 10, 3), 5000);
  const auto good = m.serialize();
  ASSERT_TRUE(Model::parse(good));
  EXPECT_FALSE(Model::parse({good.data(), 1}));
  EXPECT_FALSE(Model::parse({good.data(), good.size() - 1}));
  auto trailing = good;
  trailing.push_back(0);
  EXPECT_FALSE(Model::parse(trailing));
  auto sum = good;
  sum[good.size() - 1] ^= 1;  // the last frequency's high byte: the sum breaks
  EXPECT_FALSE(Model::parse(sum));
  const std::vector<std::uint8_t> none = {0, 0};
  EXPECT_FALSE(Model::parse(none));
}

}  // namespace
}  // namespace retra::format::rans
