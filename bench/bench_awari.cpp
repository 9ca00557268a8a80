// Micro benchmarks of the Awari hot paths: rank, unrank, next-in-order, quiet-child generation
// (what each forward sweep does per position) and full move generation with ranks.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "src/games/awari/game.hpp"

namespace {

using namespace retra::awari;
constexpr int kStones = 20;

std::vector<Board> random_boards(std::size_t n) {
  std::mt19937_64 rng(1);
  std::vector<Board> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(unrank(kStones, rng() % positions(kStones)));
  return v;
}

void BM_Rank(benchmark::State& st) {
  const auto boards = random_boards(4096);
  std::size_t i = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(rank(boards[i++ & 4095]));
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_Rank);

void BM_Unrank(benchmark::State& st) {
  std::mt19937_64 rng(2);
  std::vector<std::uint64_t> idx(4096);
  for (auto& x : idx) x = rng() % positions(kStones);
  std::size_t i = 0;
  for (auto _ : st) benchmark::DoNotOptimize(unrank(kStones, idx[i++ & 4095]));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_Unrank);

void BM_UnrankBisect(benchmark::State& st) {
  std::mt19937_64 rng(2);
  std::vector<std::uint64_t> idx(4096);
  for (auto& x : idx) x = rng() % positions(kStones);
  std::size_t i = 0;
  for (auto _ : st) benchmark::DoNotOptimize(unrank_bisect(kStones, idx[i++ & 4095]));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_UnrankBisect);

void BM_UnrankBranchless(benchmark::State& st) {
  std::mt19937_64 rng(2);
  std::vector<std::uint64_t> idx(4096);
  for (auto& x : idx) x = rng() % positions(kStones);
  std::size_t i = 0;
  for (auto _ : st) benchmark::DoNotOptimize(unrank_branchless(kStones, idx[i++ & 4095]));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_UnrankBranchless);

void BM_NextInOrder(benchmark::State& st) {
  Board b = unrank(kStones, 0);
  for (auto _ : st) {
    if (!next(b)) b = unrank(kStones, 0);
    benchmark::DoNotOptimize(b);
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_NextInOrder);

void BM_NextInOrderBytewise(benchmark::State& st) {
  Board b = unrank(kStones, 0);
  for (auto _ : st) {
    if (!next_bytewise(b)) b = unrank(kStones, 0);
    benchmark::DoNotOptimize(b);
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_NextInOrderBytewise);

void BM_QuietChildren(benchmark::State& st) {
  const Game g;
  Board b = unrank(kStones, positions(kStones) / 3);
  std::uint64_t sum = 0, children = 0;
  for (auto _ : st) {
    g.for_each_quiet_child(kStones, b, [&](std::uint64_t c) {
      sum += c;
      ++children;
    });
    next(b);
  }
  benchmark::DoNotOptimize(sum);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
  st.counters["children/pos"] =
      static_cast<double>(children) / static_cast<double>(st.iterations());
}
BENCHMARK(BM_QuietChildren);

// The same quiet-child generation with sowing as a scalar loop over pits instead of one vector
// add of a precomputed delta: the comparison behind the vector sowing in board.hpp.
void BM_QuietChildrenScalarSowing(benchmark::State& st) {
  Board b = unrank(kStones, positions(kStones) / 3);
  std::uint64_t sum = 0;
  for (auto _ : st) {
    for (int i = 0; i < kSidePits; ++i) {
      int s = b.pit[i];
      if (s == 0) continue;
      Board c = b;
      c.pit[i] = 0;
      int pos = i;
      while (s > 0) {
        pos = (pos + 1) % kPits;
        if (pos == i) continue;
        ++c.pit[pos];
        --s;
      }
      if (pos >= kSidePits && (c.pit[pos] == 2 || c.pit[pos] == 3)) continue;
      int opp = 0;
      for (int k = kSidePits; k < kPits; ++k) opp += c.pit[k];
      if (opp == 0) continue;
      Board r;
      for (int k = 0; k < kPits; ++k) r.pit[k] = c.pit[(k + kSidePits) % kPits];
      sum += rank(r);
    }
    next(b);
  }
  benchmark::DoNotOptimize(sum);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_QuietChildrenScalarSowing);

void BM_AllMovesWithRanks(benchmark::State& st) {
  const Game g;
  Board b = unrank(kStones, positions(kStones) / 3);
  std::uint64_t sum = 0;
  for (auto _ : st) {
    g.for_each_move(kStones, b, [&](const retra::Child<int>& c) { sum += c.index; });
    next(b);
  }
  benchmark::DoNotOptimize(sum);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_AllMovesWithRanks);

}  // namespace
