// Per segment of a database: bytes on disk, bits per position, codec, entries left to the rules,
// and probe rates through the segment reader (entry_value included, so rule entries cost what
// they cost a prober): warm (random entries of blocks already in the reader's cache) and cold
// (every probe checksums and decodes a random block). One thread. bench/compression.sh runs it
// after each `retra recompress` setting; docs/PERFORMANCE.md has the table.
// Usage: bench_compression DB [SECONDS_PER_RATE]   (prints one row per segment, then totals)
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include <fmt/format.h>

#include "src/database.hpp"

namespace {

using namespace retra;
using Clock = std::chrono::steady_clock;

// Probes per second of `probe(i)` over random indices from `pick`, for about `seconds`.
template <class Pick, class Probe>
double rate(double seconds, Pick&& pick, Probe&& probe) {
  std::uint64_t n = 0, sink = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int k = 0; k < 256; ++k, ++n) sink += probe(pick());
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  if (sink == 42) std::puts("");  // keeps the probes
  return static_cast<double>(n) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_compression DB [SECONDS_PER_RATE]\n");
    return 2;
  }
  const double seconds = argc > 2 ? std::stod(argv[2]) : 0.2;
  auto db = Database::open(argv[1]);
  if (!db) {
    std::fprintf(stderr, "%s\n", db.error().message().c_str());
    return 1;
  }
  std::mt19937_64 rng(7);
  std::uint64_t entries = 0, bytes = 0, rules = 0;
  double warm_weighted = 0, cold_weighted = 0;
  std::printf("%-12s %14s %12s %9s %9s %12s %12s %12s\n", "segment", "entries", "bytes", "bits/pos",
              "codec", "rule_entries", "warm_per_s", "cold_per_s");
  for (const auto& rec : (*db)->manifest().segments) {
    auto r = (*db)->segment(rec.name);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().message().c_str());
      return 1;
    }
    const auto& info = (*r)->info();
    if (info.entries == 0) continue;
    const std::uint64_t be = info.block_entries;
    // Warm: a working set of 8 blocks, held by the reader's cache after the first pass. Blocks
    // hold consecutive positions of the file's entry order: the probes pick a position there and
    // ask for its index, which the reader maps back (one division per digit).
    const std::uint64_t first_block = rng() % info.blocks();
    const std::uint64_t span = std::min(info.entries - first_block * be, 8 * be);
    const format::EntryOrder& order = (*r)->order();
    auto warm_pick = [&] { return order.index(first_block * be + rng() % span); };
    auto probe = [&](std::uint64_t i) -> std::uint64_t { return *(*r)->byte_at(i); };
    for (std::uint64_t i = 0; i < span; i += be / 4 + 1) probe(order.index(first_block * be + i));
    const double warm = rate(seconds, warm_pick, probe);
    // Cold: what a probe costs when its block is not cached: checksum and decode one random
    // block, then the entry's value (the rules' where they answer it).
    std::vector<std::uint8_t> block;
    const double cold = rate(
        seconds, [&] { return rng() % info.entries; },
        [&](std::uint64_t i) -> std::uint64_t {
          const std::uint64_t at = (*r)->position(i);
          block.resize((*r)->raw_bytes(at / be));
          if (!(*r)->read_stored_block(at / be, block)) std::abort();
          return (*r)->entry_value(i, block[at % be]);
        });
    std::uint64_t rule_entries = rec.build.value("rule_entries", std::uint64_t{0});
    std::printf("%-12s %14llu %12llu %9.3f %9s %12llu %12.0f %12.0f\n", rec.name.c_str(),
                static_cast<unsigned long long>(info.entries),
                static_cast<unsigned long long>((*r)->file_bytes()),
                8.0 * static_cast<double>((*r)->file_bytes()) / static_cast<double>(info.entries),
                std::string(format::codec_name((*r)->codec())).c_str(),
                static_cast<unsigned long long>(rule_entries), warm, cold);
    entries += info.entries;
    bytes += (*r)->file_bytes();
    rules += rule_entries;
    warm_weighted += warm * static_cast<double>(info.entries);
    cold_weighted += cold * static_cast<double>(info.entries);
  }
  const double e = static_cast<double>(entries);
  std::printf("%-12s %14llu %12llu %9.3f %9s %12llu %12.0f %12.0f\n", "total",
              static_cast<unsigned long long>(entries), static_cast<unsigned long long>(bytes),
              e > 0 ? 8.0 * static_cast<double>(bytes) / e : 0.0, "-",
              static_cast<unsigned long long>(rules), e > 0 ? warm_weighted / e : 0.0,
              e > 0 ? cold_weighted / e : 0.0);
  std::printf(
      "total: %llu entries, %.1f MiB (%llu bytes), %.3f bits per entry; probes per second "
      "(one thread, weighted by entries): warm %.0f, cold %.0f\n",
      static_cast<unsigned long long>(entries), static_cast<double>(bytes) / 1048576.0,
      static_cast<unsigned long long>(bytes), e > 0 ? 8.0 * static_cast<double>(bytes) / e : 0.0,
      e > 0 ? warm_weighted / e : 0.0, e > 0 ? cold_weighted / e : 0.0);
  return 0;
}
