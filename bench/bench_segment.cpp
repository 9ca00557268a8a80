// Block decode speed of the segment format: checksum + zstd decompression of one 64 Ki-entry
// block of realistic Awari values, and cached point probes.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <random>

#include "src/format/segment.hpp"

namespace {

using namespace retra::format;

struct Fixture {
  std::filesystem::path path;
  std::unique_ptr<SegmentReader> reader;
  Fixture() {
    path = std::filesystem::temp_directory_path() / ("retra-bench-" + std::to_string(getpid()));
    // Values shaped like an Awari segment: mostly small even differences around 0.
    std::mt19937 rng(3);
    std::normal_distribution<double> d(1.3, 4.0);
    std::vector<std::uint8_t> v(16u << 20);
    for (auto& x : v) x = static_cast<std::uint8_t>(static_cast<std::int8_t>(d(rng)));
    SegmentInfo info{"awari",  "olympiad", "awari-colex-v1",    "score-i8", "bench",
                     v.size(), 1,          kDefaultBlockEntries};
    if (!write_segment(path, info, v, {3, 1})) std::abort();
    reader = std::move(SegmentReader::open(path, 16).value());
  }
  ~Fixture() { std::filesystem::remove(path); }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_BlockDecode(benchmark::State& st) {
  auto& f = fixture();
  std::vector<std::uint8_t> out(kDefaultBlockEntries);
  const std::uint64_t blocks = f.reader->info().blocks();
  std::uint64_t b = 0;
  for (auto _ : st) {
    if (!f.reader->read_block(b, out)) std::abort();
    b = (b + 7) % blocks;
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * out.size()));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_BlockDecode);

void BM_CachedProbe(benchmark::State& st) {
  auto& f = fixture();
  std::mt19937_64 rng(4);
  // Random probes inside 8 blocks, so that every probe after the first few hits the cache.
  const std::uint64_t span = 8ull * kDefaultBlockEntries;
  for (auto _ : st) benchmark::DoNotOptimize(f.reader->byte_at(rng() % span));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_CachedProbe);

}  // namespace
