// The backward kernel out of core (arrays in files, updates spilled) and over a cluster (ranks
// as threads): the values and counts of the in-memory kernel on random graph games
// (tests/backward_graph.hpp), killed and resumed included.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backward_graph.hpp"
#include "local_cluster.hpp"
#include "src/build/out_of_core.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

using namespace graph_test;

// Out of core (files, partitions of one chunk, one resident per thread and one more, updates
// spilled after every few): the values and counts of the in-memory kernel, for every kind, with
// and without a kill at a level boundary.
template <ValueKind K>
void out_of_core_agrees(std::uint64_t seeds) {
  const test::TempDir dir;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto s = solved_graph<K>(seed, 60 + seed * 11);
    ASSERT_TRUE(s.clean);
    // Updates spilled after every few, or none; and with a spill budget of a few updates, so
    // that levels go in rounds.
    const std::pair<std::uint64_t, std::uint64_t> modes[] = {{16, 0}, {1 << 20, 0}, {16, 64}};
    for (const auto& [batch, spill] : modes) {
      const int threads = 1 + static_cast<int>((seed + batch + spill) % 3);
      auto store = builder::FileOutOfCore::create(dir.path() / "a", 64, batch, spill);
      ASSERT_TRUE(store) << store.error().message();
      auto mapped = (*store)->array("values", s.g.quiet.size(), false);
      ASSERT_TRUE(mapped);
      std::fill(mapped->begin(), mapped->end(), std::uint8_t{0xEE});
      std::vector<std::uint8_t> values(s.g.quiet.size());
      // The kernel writes the mapped values; the test compares a copy.
      kernels::BackwardOptions opt;
      opt.threads = threads;
      opt.chunk = 16;
      opt.out_of_core = store->get();
      const auto st = backward_on(s.g, *mapped, opt);
      ASSERT_TRUE(st) << st.error().message();
      std::copy(mapped->begin(), mapped->end(), values.begin());
      ASSERT_EQ(values, s.want) << "seed " << seed << ", batch " << batch << ", spill " << spill;
      expect_same_counts(*st, *s.clean);
      EXPECT_EQ(st->partitions, (s.g.quiet.size() + 15) / 16);
      if (batch == 16 && st->predecessors > 0) {
        EXPECT_GT(st->spilled_bytes, 0u);
      }
      EXPECT_GE(st->spill_rounds, static_cast<std::uint64_t>(st->levels));
      // Killed at its third level boundary, resumed out of core: the same values.
      MemoryCheckpoints ck;
      ck.crash_at = 3;
      std::vector<std::uint8_t> again(s.g.quiet.size());
      auto other = builder::FileOutOfCore::create(dir.path() / "b", 64, batch, spill);
      ASSERT_TRUE(other);
      if (run_kernel(s.g, again, threads, &ck, 0, other->get())) continue;  // fewer boundaries
      other = builder::FileOutOfCore::create(dir.path() / "c", 64, batch, spill);
      ASSERT_TRUE(other);
      ck.crash_at = 0;
      const auto resumed = run_kernel(s.g, again, threads, &ck, 0, other->get());
      ASSERT_TRUE(resumed) << resumed.error().message();
      EXPECT_EQ(again, s.want) << "seed " << seed << " resumed";
    }
  }
}

TEST(BackwardOutOfCore, ScoreValuesEqualInMemory) { out_of_core_agrees<ValueKind::score>(20); }
TEST(BackwardOutOfCore, DistanceToMateValuesEqualInMemory) {
  out_of_core_agrees<ValueKind::dtm>(20);
}
TEST(BackwardOutOfCore, WinDrawLossValuesEqualInMemory) { out_of_core_agrees<ValueKind::wdl>(20); }
TEST(BackwardOutOfCore, DistanceToZeroingValuesEqualInMemory) {
  out_of_core_agrees<ValueKind::dtz>(20);
}

// Over a cluster (ranks as threads here, MPI ranks in the build): 1, 2, 3 and 7 ranks and more
// ranks than chunks, each owning a range of whole chunks, rounds of 3 frontier entries so that
// ranks need different numbers of rounds: every rank ends with the counts of the one-process
// kernel and its values (shared), or rank 0 with all of them and the others with their own range
// (gathered to rank 0).
template <ValueKind K>
void cluster_agrees(std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto s = solved_graph<K>(seed, 60 + seed * 13);
    ASSERT_TRUE(s.clean);
    const int chunks = static_cast<int>((s.g.quiet.size() + 15) / 16);
    for (int ranks : {1, 2, 3, 7, chunks + 2}) {
      std::vector<std::vector<std::uint8_t>> values(
          static_cast<std::size_t>(ranks), std::vector<std::uint8_t>(s.g.quiet.size(), 0xEE));
      std::vector<std::optional<Result<kernels::BackwardStats>>> stats(values.size());
      test::run_ranks(ranks, [&](kernels::Cluster& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        kernels::BackwardOptions opt;
        opt.threads = 1 + static_cast<int>((seed + r) % 2);
        opt.chunk = 16;
        opt.cluster = &c;
        opt.cluster_round = 3;
        opt.cluster_share = seed % 2 == 0;
        stats[r] = backward_on(s.g, std::span(values[r]), opt);
      });
      const std::size_t own =
          (static_cast<std::size_t>(chunks) + static_cast<std::size_t>(ranks) - 1) /
          static_cast<std::size_t>(ranks) * 16;
      for (std::size_t r = 0; r < values.size(); ++r) {
        ASSERT_TRUE(*stats[r]) << stats[r]->error().message();
        if (r == 0 || seed % 2 == 0) {
          ASSERT_EQ(values[r], s.want) << "seed " << seed << ", rank " << r << " of " << ranks;
        } else {
          const std::size_t b = std::min(s.want.size(), r * own),
                            e = std::min(s.want.size(), b + own);
          ASSERT_TRUE(std::equal(s.want.begin() + static_cast<std::ptrdiff_t>(b),
                                 s.want.begin() + static_cast<std::ptrdiff_t>(e),
                                 values[r].begin() + static_cast<std::ptrdiff_t>(b)))
              << "seed " << seed << ", rank " << r << " of " << ranks << ": its own range";
        }
        expect_same_counts(**stats[r], *s.clean);
        EXPECT_EQ((*stats[r])->partitions, static_cast<std::uint64_t>(ranks));
      }
    }
  }
}

TEST(BackwardCluster, ScoreValuesEqualOneProcess) { cluster_agrees<ValueKind::score>(15); }
TEST(BackwardCluster, DistanceToMateValuesEqualOneProcess) { cluster_agrees<ValueKind::dtm>(15); }
TEST(BackwardCluster, WinDrawLossValuesEqualOneProcess) { cluster_agrees<ValueKind::wdl>(15); }
TEST(BackwardCluster, DistanceToZeroingValuesEqualOneProcess) {
  cluster_agrees<ValueKind::dtz>(15);
}

// Over a cluster every rank saves its own range at the same level boundaries; killed at any of
// them, the ranks resume together and end with the one-process values; when one rank has lost
// its state, all of them start over.
TEST(BackwardCluster, RanksResumeTogether) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto g = random_graph<ValueKind::dtm>(seed, 80 + seed * 17);
    std::vector<std::uint8_t> want(g.quiet.size());
    ASSERT_TRUE(run_kernel(g, want, 1, nullptr));
    const int ranks = 2 + static_cast<int>(seed % 2);
    for (int crash_at = 1;; ++crash_at) {
      std::vector<MemoryCheckpoints> ck(static_cast<std::size_t>(ranks));
      std::vector<std::vector<std::uint8_t>> values(ck.size(),
                                                    std::vector<std::uint8_t>(g.quiet.size()));
      std::vector<std::optional<Result<kernels::BackwardStats>>> got(ck.size());
      auto run = [&](bool lose_one) {
        test::run_ranks(ranks, [&](kernels::Cluster& c) {
          const auto r = static_cast<std::size_t>(c.rank());
          if (lose_one && r == 1) ck[r].meta.reset();
          std::fill(values[r].begin(), values[r].end(), std::uint8_t{0xCD});
          kernels::BackwardOptions opt;
          opt.chunk = 16;
          opt.cluster = &c;
          opt.cluster_round = 5;
          opt.checkpoints = &ck[r];
          got[r] = backward_on(g, std::span(values[r]), opt);
        });
      };
      for (auto& k : ck) k.crash_at = crash_at;
      run(false);
      if (*got[0]) {  // fewer boundaries than crash_at: nothing was killed
        ASSERT_GT(crash_at, 1);
        break;
      }
      for (std::size_t r = 0; r < ck.size(); ++r) {
        ASSERT_FALSE(*got[r]) << "every rank stops at the same save";
        ck[r].crash_at = 0;
      }
      const bool lose_one = crash_at % 3 == 0;
      run(lose_one);
      for (std::size_t r = 0; r < ck.size(); ++r) {
        ASSERT_TRUE(*got[r]) << got[r]->error().message();
        ASSERT_EQ(values[r], want) << "seed " << seed << " killed at save " << crash_at;
        EXPECT_EQ((*got[r])->resumed_level >= 0, !lose_one) << "rank " << r;
      }
    }
  }
}

// A chain of kParts partitions of kWidth positions, each position with kMoves moves into the
// partition before; the first partition's positions, without moves, are lost. Each level's
// updates all go to one partition, the next one at every level.
constexpr std::uint64_t kParts = 20, kWidth = 16, kMoves = 100, kChain = kParts * kWidth;
Graph<ValueKind::wdl> partition_chain() {
  constexpr std::uint64_t n = kChain;
  Graph<ValueKind::wdl> g;
  g.quiet.resize(n);
  g.preds.resize(n);
  g.exits.resize(n);
  g.no_move.assign(n, 2);  // the first partition's positions, without moves, are lost
  g.terminal.resize(n);
  g.exit_value = {0};
  g.bound = 8;
  for (std::uint64_t i = kWidth; i < n; ++i)
    for (std::uint64_t k = 0; k < kMoves; ++k)
      g.quiet[i].push_back((i / kWidth - 1) * kWidth + k % kWidth);
  for (std::uint64_t i = 0; i < n; ++i)
    for (auto c : g.quiet[i]) g.preds[c].push_back(i);
  return g;
}

// The chain's kernel run out of core in `store` (its values in the store's file, partitions of
// one chunk the chain's width): the statistics, and a copy of the values.
struct ChainRun {
  Result<kernels::BackwardStats> stats;
  std::vector<std::uint8_t> values;
};
ChainRun run_chain(const Graph<ValueKind::wdl>& g, kernels::OutOfCore& store, int threads) {
  auto mapped = store.array("values", kChain, false);
  if (!mapped) return {std::move(mapped).error(), {}};
  kernels::BackwardOptions opt;
  opt.threads = threads;
  opt.chunk = kWidth;
  opt.out_of_core = &store;
  auto st = backward_on(g, *mapped, opt);
  return {std::move(st), std::vector<std::uint8_t>(mapped->begin(), mapped->end())};
}

// Each level's updates all go to one partition, another one at every level (a chain of
// partitions, each position with 100 moves into the partition before): the update buckets stay
// within the batch budget, a fixed share each, spilled when full. (Vectors that grew, spilled
// only when a thread's updates together reached its share, kept per partition the capacity of
// its busiest level: 4 to 8 times this budget here, 1.3 GiB on KNNNNvK at --memory 1G.)
TEST(BackwardOutOfCore, UpdateBucketsStayWithinTheBatchBudget) {
  const Graph<ValueKind::wdl> g = partition_chain();
  std::vector<std::uint8_t> want(kChain);
  const auto clean = run_kernel(g, want, 1, nullptr);
  ASSERT_TRUE(clean) << clean.error().message();
  ASSERT_EQ(clean->predecessors, (kParts - 1) * kWidth * kMoves);  // every level reached
  const test::TempDir dir;
  for (int threads : {1, 2, 3}) {
    // A bucket of 256 updates (4 bytes each out of core: the target's offset and the loss bit)
    // per partition and thread, fewer than a level sends a partition, so that buckets spill.
    const std::uint64_t batch = kParts * static_cast<std::uint64_t>(threads) * 256 * 4;
    auto store =
        builder::FileOutOfCore::create(dir.path() / ("t" + std::to_string(threads)), 64, batch);
    ASSERT_TRUE(store) << store.error().message();
    const ChainRun run = run_chain(g, **store, threads);
    const auto& st = run.stats;
    ASSERT_TRUE(st) << st.error().message();
    EXPECT_EQ(run.values, want) << threads;
    expect_same_counts(*st, *clean);
    EXPECT_EQ(st->partitions, kParts);
    EXPECT_GT(st->spilled_bytes, 0u);
    EXPECT_GT(st->batch_peak_bytes, 0u);
    EXPECT_LE(st->batch_peak_bytes, batch) << threads << " threads";
  }
}

// A spill budget smaller than a level's updates: each level is applied in rounds, a part of its
// frontier at a time, with the values and counts of one round a level; the disk the run held
// stays within its arrays, its frontiers' entries and the budget (and the updates of the tasks
// under way as a round reached it: a task is 4 positions here, 100 updates each).
TEST(BackwardOutOfCore, LevelsGoInRoundsWithinTheSpillBudget) {
  const Graph<ValueKind::wdl> g = partition_chain();
  constexpr std::uint64_t n = kChain;
  std::vector<std::uint8_t> want(n);
  const auto clean = run_kernel(g, want, 1, nullptr);
  ASSERT_TRUE(clean) << clean.error().message();
  const test::TempDir dir;
  for (int threads : {1, 2, 3}) {
    std::vector<std::uint64_t> peaks;
    for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{2048}}) {
      // Buckets of 64 updates a partition and thread: a level's 1,600 updates to a partition
      // spill 6,400 bytes, in pieces of 256.
      const std::uint64_t batch = kParts * static_cast<std::uint64_t>(threads) * 64 * 4;
      auto store = builder::FileOutOfCore::create(
          dir.path() / ("r" + std::to_string(threads) + "-" + std::to_string(budget)), 64, batch,
          budget);
      ASSERT_TRUE(store) << store.error().message();
      EXPECT_EQ((*store)->spill_budget(), budget);
      const ChainRun run = run_chain(g, **store, threads);
      const auto& st = run.stats;
      ASSERT_TRUE(st) << st.error().message();
      const std::string what =
          std::to_string(threads) + " threads, budget " + std::to_string(budget);
      EXPECT_EQ(run.values, want) << what;
      expect_same_counts(*st, *clean);
      if (budget == 0) {
        EXPECT_EQ(st->spill_rounds, static_cast<std::uint64_t>(st->levels)) << what;
      } else {
        EXPECT_GT(st->spill_rounds, static_cast<std::uint64_t>(st->levels)) << what;
      }
      // Values and counters; both frontiers' reservations (at most the segment's entries each
      // here, where a megabyte's step is more than the array); the spills.
      const std::uint64_t files =
          n * (1 + kernels::backward_state_bytes<Graph<ValueKind::wdl>>()) + 2 * n * 8;
      const std::uint64_t past = static_cast<std::uint64_t>(threads) * (4 * kMoves + 64) * 4;
      EXPECT_GE(st->disk_peak_bytes, files - 2 * n * 8) << what;
      if (budget > 0) {
        EXPECT_LE(st->disk_peak_bytes, files + budget + past) << what;
      }
      peaks.push_back(st->disk_peak_bytes);
    }
    // One thread spills a level's updates in order: without a budget, 1,600 less a bucket's at
    // once; with one, the budget and a task's.
    if (threads == 1) {
      EXPECT_GT(peaks[0], peaks[1]);
    }
  }
}

// Spill files: appended pieces come back in order, in whole records, and a drained partition is
// empty; the store's directory goes with it.
TEST(BackwardOutOfCore, SpillFilesKeepOrderAndEmptyWhenDrained) {
  const test::TempDir dir;
  std::filesystem::path where;
  {
    auto store = builder::FileOutOfCore::create(dir.path() / "s", 1 << 20, 1 << 20);
    ASSERT_TRUE(store);
    where = (*store)->dir();
    std::vector<std::uint8_t> all;
    for (int k = 0; k < 300; ++k) {
      std::vector<std::uint8_t> piece(static_cast<std::size_t>(16 * (k % 7 + 1) * 997));
      for (std::size_t i = 0; i < piece.size(); ++i)
        piece[i] = static_cast<std::uint8_t>(i * 31 + static_cast<std::size_t>(k));
      ASSERT_TRUE((*store)->append(3, piece));
      all.insert(all.end(), piece.begin(), piece.end());
    }
    EXPECT_EQ((*store)->spilled_bytes(), all.size());
    std::vector<std::uint8_t> got;
    // A buffer of 1000 records and a few bytes more: pieces of whole records, at its beginning.
    std::vector<std::uint8_t> buffer(16 * 1000 + 7);
    ASSERT_TRUE((*store)->drain(3, 16, buffer, [&](std::span<const std::uint8_t> b) {
      EXPECT_EQ(b.size() % 16, 0u);
      EXPECT_LE(b.size(), 16u * 1000);
      EXPECT_EQ(b.data(), buffer.data());
      got.insert(got.end(), b.begin(), b.end());
    }));
    EXPECT_EQ(got, all);
    int calls = 0;
    ASSERT_TRUE((*store)->drain(3, 16, buffer, [&](std::span<const std::uint8_t>) { ++calls; }));
    ASSERT_TRUE((*store)->drain(5, 16, buffer, [&](std::span<const std::uint8_t>) { ++calls; }));
    EXPECT_EQ(calls, 0);
    // A buffer smaller than a record is refused, and the spilled bytes stay.
    ASSERT_TRUE((*store)->append(4, std::span<const std::uint8_t>(all.data(), 32)));
    std::vector<std::uint8_t> tiny(15);
    const auto refused =
        (*store)->drain(4, 16, tiny, [&](std::span<const std::uint8_t>) { ++calls; });
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("holds no record"), std::string::npos);
    ASSERT_TRUE((*store)->drain(4, 16, buffer, [&](std::span<const std::uint8_t> b) {
      calls += static_cast<int>(b.size());
    }));
    EXPECT_EQ(calls, 32);
    EXPECT_TRUE(std::filesystem::exists(where));
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

// The kB of the process's memory mapped in the mapping that begins at p (/proc/self/smaps).
std::uint64_t mapped_kb(const void* p) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool ours = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first.find('-') != std::string::npos && first.back() != ':') {
      ours = std::stoull(first.substr(0, first.find('-')), nullptr, 16) ==
             reinterpret_cast<std::uintptr_t>(p);
    } else if (ours && first == "Rss:") {
      std::uint64_t kb = 0;
      words >> kb;
      return kb;
    }
  }
  return ~std::uint64_t{0};
}

// write() and read() go through the file: what write() put there the mapping shows without a
// page of it mapped by the writer, and read() returns what the mapping wrote; bytes outside the
// store's arrays are an error, not a stray write.
TEST(BackwardOutOfCore, WriteAndReadGoThroughTheFileTheMappingShows) {
  const test::TempDir dir;
  auto store = builder::FileOutOfCore::create(dir.path() / "w", 1 << 20, 1 << 20);
  ASSERT_TRUE(store);
  constexpr std::uint64_t kBytes = 64 * 4096;
  auto mapped = (*store)->array("frontier-a", kBytes, true);
  ASSERT_TRUE(mapped);
  ASSERT_TRUE((*store)->reserve(mapped->data(), kBytes));
  std::vector<std::uint8_t> piece(3 * 4096 + 123);
  for (std::size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<std::uint8_t>(i * 13 + 5);
  std::uint8_t* const at = mapped->data() + 5 * 4096 + 17;  // inside pages 5..8
  ASSERT_TRUE((*store)->write(at, piece));
  EXPECT_EQ(mapped_kb(mapped->data()), 0u);  // nothing mapped by the write
  EXPECT_TRUE(std::equal(piece.begin(), piece.end(), at));
  (*store)->release(mapped->data(), kBytes);
  for (std::size_t i = 0; i < 4096; ++i)
    mapped->data()[40 * 4096 + i] = static_cast<std::uint8_t>(i);
  std::vector<std::uint8_t> back(piece.size());
  ASSERT_TRUE((*store)->read(at, back));
  EXPECT_EQ(back, piece);
  std::vector<std::uint8_t> page(4096);
  ASSERT_TRUE((*store)->read(mapped->data() + 40 * 4096, page));
  for (std::size_t i = 0; i < page.size(); ++i) ASSERT_EQ(page[i], static_cast<std::uint8_t>(i));
  // Past the array's end, or memory that is not the store's: refused, nothing written (the
  // array's last bytes stay the zeros of a new array, the reader's buffer stays as it was).
  std::vector<std::uint8_t> other(100, 0x5A);
  const auto past = (*store)->write(mapped->data() + kBytes - 50, other);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().code(), Errc::internal);
  EXPECT_TRUE(std::all_of(mapped->data() + kBytes - 50, mapped->data() + kBytes,
                          [](std::uint8_t b) { return b == 0; }));
  EXPECT_FALSE((*store)->read(other.data(), std::span<std::uint8_t>(back.data(), 10)));
  EXPECT_EQ(back, piece);
  EXPECT_TRUE((*store)->holds(mapped->data(), kBytes));
  EXPECT_FALSE((*store)->holds(mapped->data() + 1, kBytes));
  EXPECT_FALSE((*store)->holds(other.data(), other.size()));
}

// A store whose read() fails from its `fail_at`-th call on (a disk error), the rest forwarded;
// it counts the bytes read from and written to the counters' and the values' arrays.
class FailingReads final : public kernels::OutOfCore {
 public:
  FailingReads(kernels::OutOfCore& store, int fail_at) : s_(store), fail_at_(fail_at) {}
  Result<std::span<std::uint8_t>> array(const std::string& name, std::uint64_t bytes,
                                        bool grows) override {
    auto a = s_.array(name, bytes, grows);
    if (a && name == "cells") cells_ = *a;
    return a;
  }
  Status reserve(const void* a, std::uint64_t bytes) override { return s_.reserve(a, bytes); }
  Status discard(const void* a) override { return s_.discard(a); }
  void release(const void* p, std::uint64_t bytes) override { s_.release(p, bytes); }
  Status write(void* p, std::span<const std::uint8_t> bytes) override {
    count(p, bytes.size(), cells_written, values_written);
    return s_.write(p, bytes);
  }
  Status read(const void* p, std::span<std::uint8_t> out) override {
    if (++reads >= fail_at_) return Error(Errc::io, "injected read failure");
    if (count(p, out.size(), cells_read, values_read)) ++cell_reads;
    return s_.read(p, out);
  }
  bool holds(const void* p, std::uint64_t bytes) const override { return s_.holds(p, bytes); }
  std::uint64_t resident_bytes() const override { return s_.resident_bytes(); }
  std::uint64_t batch_bytes() const override { return s_.batch_bytes(); }
  Status append(std::size_t partition, std::span<const std::uint8_t> bytes) override {
    return s_.append(partition, bytes);
  }
  Status drain(std::size_t partition, std::size_t record, std::span<std::uint8_t> buffer,
               const std::function<void(std::span<const std::uint8_t>)>& fn) override {
    return s_.drain(partition, record, buffer, fn);
  }
  std::uint64_t spilled_bytes() const override { return s_.spilled_bytes(); }
  std::uint64_t spill_budget() const override { return s_.spill_budget(); }
  std::uint64_t disk_peak_bytes() const override { return s_.disk_peak_bytes(); }
  std::atomic<int> reads{0};
  std::atomic<int> cell_reads{0};  // of the counters' array: partitions applied in a copy
  std::atomic<std::uint64_t> cells_read{0}, values_read{0}, cells_written{0}, values_written{0};
  std::span<std::uint8_t> values;  // the values' array (the caller maps it from the store)

 private:
  // Adds n to the count of the array p lies in; whether that is the counters'.
  bool count(const void* p, std::uint64_t n, std::atomic<std::uint64_t>& in_cells,
             std::atomic<std::uint64_t>& in_values) const {
    const auto* b = static_cast<const std::uint8_t*>(p);
    if (b >= values.data() && b < values.data() + values.size()) in_values += n;
    const bool cells = b >= cells_.data() && b < cells_.data() + cells_.size();
    if (cells) in_cells += n;
    return cells;
  }
  kernels::OutOfCore& s_;
  std::span<std::uint8_t> cells_;
  const int fail_at_;
};

// Out of core, the partitions a level applies are read into a thread's copy and written back
// (read() and write(), like the frontiers): a read that fails, whichever it is, ends the run with
// its error, never with values from a copy that was not read; with none failing, the values are
// the in-memory kernel's.
TEST(BackwardOutOfCore, AFailedReadEndsTheRunWithItsError) {
  const auto s = graph_test::solved_graph<ValueKind::dtm>(7, 200);
  ASSERT_TRUE(s.clean);
  ASSERT_GT(s.clean->levels, 3);
  const test::TempDir dir;
  int cell_reads = 0;
  auto run = [&](int fail_at, int threads, std::vector<std::uint8_t>& values, int& reads) {
    auto store = builder::FileOutOfCore::create(dir.path() / "f", 64, 1 << 20);
    EXPECT_TRUE(store);
    FailingReads failing(**store, fail_at);
    auto mapped = (*store)->array("values", s.g.quiet.size(), false);
    EXPECT_TRUE(mapped);
    failing.values = *mapped;
    kernels::BackwardOptions opt;
    opt.threads = threads;
    opt.chunk = 16;
    opt.out_of_core = &failing;
    auto st = backward_on(s.g, *mapped, opt);
    values.assign(mapped->begin(), mapped->end());
    reads = failing.reads.load();
    cell_reads = failing.cell_reads.load();
    if (st) {
      // The statistics count what went through the store, and a block whose positions were
      // not decided wrote back its counters alone: fewer values than counters went back.
      EXPECT_EQ(st->slot_read_bytes, failing.cells_read + failing.values_read);
      EXPECT_EQ(st->slot_written_bytes, failing.cells_written + failing.values_written);
      // Blocks are read whole: a counter (one or two bytes) with every value.
      EXPECT_GT(failing.values_read, 0u);
      const std::uint64_t cell =
          failing.cells_read / std::max<std::uint64_t>(1, failing.values_read);
      EXPECT_TRUE(cell == 1 || cell == 2) << cell;
      EXPECT_EQ(failing.cells_read, cell * failing.values_read);
      EXPECT_GT(failing.values_written, 0u);
      EXPECT_LT(failing.values_written * cell, failing.cells_written);
    }
    return st;
  };
  for (int threads : {1, 2}) {
    std::vector<std::uint8_t> values;
    int reads = 0;
    const auto all = run(1 << 30, threads, values, reads);
    ASSERT_TRUE(all) << all.error().message();
    EXPECT_EQ(values, s.want);
    // The frontiers' tasks and the partitions' blocks, a block of counters at least for every
    // level that had updates.
    EXPECT_GE(cell_reads, s.clean->levels - 1) << threads;
    for (int fail_at : {1, 2, reads / 3, reads / 2, reads - 1, reads}) {
      int seen = 0;
      const auto st = run(fail_at, threads, values, seen);
      ASSERT_FALSE(st) << "read " << fail_at << " of " << reads << " failed, " << threads
                       << " threads";
      EXPECT_EQ(st.error().code(), Errc::io);
      EXPECT_NE(st.error().message().find("injected read failure"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace retra
