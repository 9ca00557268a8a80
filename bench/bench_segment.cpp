// Block decode speed of the segment format: checksum + zstd decompression of one 64 Ki-entry
// block of realistic Awari values, and cached point probes; and the permutation from a stored
// entry order back to index order that read_all applies to a whole segment, by tiles and by a
// walk in index order (what read_all did before tiles), on one KRPvKR pawn segment's shape; and a
// whole write with its trials of entry orders, on a KBPPvK segment's shape.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <random>
#include <vector>

#include "src/format/entry_order.hpp"
#include "src/format/segment.hpp"
#include "src/module/entry_rules.hpp"

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

// Two orders from the manifest of a KQRvKR and KRPvKR build (entry_order), too large for any
// cache: 0, a KRPvKR pawn segment's (2x4x63x62x61x60 stored 0,1,2,4,5,3: 114 M entries), where
// a walk in index order finds the stored bytes of consecutive runs in L2; 1, KRBvKR's
// (2x462x62x61x60 stored 3,0,4,2,1: 210 M entries), whose fastest stored digit is the king
// pair, so that a walk comes back to a cache line only after 14 MiB of others.
struct Permutation {
  EntryOrder order;
  std::vector<std::uint8_t> stored, index;
  explicit Permutation(int shape) {
    const std::vector<std::uint64_t> radices =
        shape == 0 ? std::vector<std::uint64_t>{2, 4, 63, 62, 61, 60}
                   : std::vector<std::uint64_t>{2, 462, 62, 61, 60};
    std::uint64_t n = 1;
    for (auto r : radices) n *= r;
    order = EntryOrder::make(radices,
                             shape == 0 ? std::vector<std::uint8_t>{0, 1, 2, 4, 5, 3}
                                        : std::vector<std::uint8_t>{3, 0, 4, 2, 1},
                             n)
                .value();
    stored.resize(n);
    index.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) stored[i] = static_cast<std::uint8_t>(i % 7);
  }
};
Permutation& permutation(std::int64_t shape) {
  static std::unique_ptr<Permutation> p;
  static std::int64_t made = -1;
  if (made != shape) {
    p.reset();
    p = std::make_unique<Permutation>(static_cast<int>(shape));
    made = shape;
  }
  return *p;
}

void BM_PermuteToIndexByTiles(benchmark::State& st) {
  auto& p = permutation(st.range(0));
  const EntryOrder::Tiles tiles(p.order);
  if (!tiles.usable()) std::abort();
  for (auto _ : st) {
    tiles.to_index(p.stored.data(), p.index.data(), 0, tiles.count());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * p.index.size()));
}
BENCHMARK(BM_PermuteToIndexByTiles)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_PermuteToIndexByWalk(benchmark::State& st) {
  auto& p = permutation(st.range(0));
  for (auto _ : st) {
    EntryOrder::Walk w(p.order, 0, /*by_index=*/true);
    const std::uint64_t n = p.index.size();
    for (std::uint64_t i = 0; i < n;) {
      const std::uint64_t run = std::min(w.run(), n - i), s = w.stride();
      const std::uint8_t* const src = p.stored.data() + w.other();
      for (std::uint64_t k = 0; k < run; ++k) p.index[i + k] = src[k * s];
      i += run;
      w.skip(run);
    }
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * p.index.size()));
}
BENCHMARK(BM_PermuteToIndexByWalk)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// A whole write as a build makes it (segment.cpp: rule entries marked, the entry order and
// the codec chosen by trials, then every block gathered, filled and compressed), at zstd -9 with
// 256 Ki-entry blocks, on one thread: a segment of a KBPPvK build's shape (2x32x62x61x60,
// 14.5 M entries) with synthetic values that depend on its digits and holes where two of its
// square digits meet, given as a bit set (the builds' KnownHoles). In such segments the trials
// of entry orders cost more than the kernel (docs/PERFORMANCE.md, "Writing a segment").
void BM_WriteWithOrderSearch(benchmark::State& st) {
  const std::vector<std::uint64_t> radices{2, 32, 62, 61, 60};
  const std::uint64_t n = 2ull * 32 * 62 * 61 * 60;
  std::vector<std::uint8_t> values(n);
  std::vector<std::uint64_t> hole_bits((n + 63) / 64, 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t d4 = i % 60, d3 = i / 60 % 61, d2 = i / 3660 % 62, d1 = i / 226920 % 32;
    const std::uint64_t d0 = i / 7261440;
    if (d2 == d3 || d3 == d4 || d2 == d4) {
      hole_bits[i >> 6] |= 1ull << (i & 63);
      continue;  // 0
    }
    values[i] = static_cast<std::uint8_t>(1 + (d0 * 3 + d1 / 4 + (d2 + d3) / 16 + d4 / 30) % 5);
  }
  const auto path =
      std::filesystem::temp_directory_path() / ("retra-bench-write-" + std::to_string(getpid()));
  const SegmentInfo info{"bench", "v", "bench-v1", "i8", "write", n, 1, 1u << 18};
  const retra::KnownHoles holes(hole_bits);
  WriteOptions opt(9, 1, CodecChoice::automatic, &holes);
  opt.digits = radices;
  for (auto _ : st) {
    auto w = write_segment(path, info, values, opt);
    if (!w) std::abort();
    st.counters["order_s"] = w->order_seconds;
    st.counters["blocks_s"] = w->blocks_seconds;
  }
  std::filesystem::remove(path);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(BM_WriteWithOrderSearch)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
