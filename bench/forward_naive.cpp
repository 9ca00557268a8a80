// The naive forward-iteration baseline of docs/PERFORMANCE.md (issue 16): van der Goot's
// algorithm as anyone would first write it, to time retra's forward kernel against. One byte per
// position, no capture database: every sweep plays every move of every position (scalar sowing),
// reading captures' values from the smaller segments and quiet moves' values in place; sweeps over
// the whole segment until one changes nothing; OpenMP over index ranges; no prefetching.
// With --db it then compares its values with a retra database, segment by segment.
// Thread safety: a program; the sweeps share the value array through relaxed byte atomics.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/database.hpp"
#include "src/format/segment.hpp"
#include "src/games/awari/board.hpp"
#include "src/games/awari/index.hpp"

namespace {

using retra::awari::Board;
using retra::awari::kPits;
using retra::awari::kSidePits;

struct Move {
  bool legal = false;
  int captured = 0;
  Board child;
};

// Sows pit `origin` stone by stone (skipping the origin), captures backwards from the last pit
// while it is an opponent's pit with 2 or 3, refuses a move that leaves the opponent no stone,
// and turns the board to the opponent's side.
Move play(const Board& b, int origin) {
  Move m;
  Board t = b;
  int stones = t.pit[origin];
  if (stones == 0) return m;
  t.pit[origin] = 0;
  int pit = origin;
  while (stones > 0) {
    pit = (pit + 1) % kPits;
    if (pit == origin) continue;
    ++t.pit[pit];
    --stones;
  }
  while (pit >= kSidePits && (t.pit[pit] == 2 || t.pit[pit] == 3)) {
    m.captured += t.pit[pit];
    t.pit[pit] = 0;
    --pit;
  }
  int opponent = 0;
  for (int i = kSidePits; i < kPits; ++i) opponent += t.pit[i];
  if (opponent == 0) return m;
  m.legal = true;
  for (int i = 0; i < kPits; ++i) m.child.pit[i] = t.pit[(i + kSidePits) % kPits];
  return m;
}

std::int8_t load(const std::int8_t& v) {
  return std::atomic_ref<const std::int8_t>(v).load(std::memory_order_relaxed);
}

}  // namespace

int main(int argc, char** argv) {
  int n_max = -1;
  std::string db;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--db" && i + 1 < argc)
      db = argv[++i];
    else if (n_max < 0 && a.find_first_not_of("0123456789") == std::string::npos && !a.empty())
      n_max = std::atoi(a.c_str());
    else
      n_max = -2;
  }
  if (n_max < 0 || n_max > retra::awari::kMaxStones) {
    std::fprintf(stderr, "usage: forward_naive N [--db DIR]   (N: largest stone count, 0..48)\n");
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<std::vector<std::int8_t>> value(static_cast<std::size_t>(n_max) + 1);
  for (int n = 0; n <= n_max; ++n) {
    const auto t0 = Clock::now();
    const auto size = static_cast<std::int64_t>(retra::awari::positions(n));
    std::vector<std::int8_t>& v = value[static_cast<std::size_t>(n)];
    v.assign(static_cast<std::size_t>(size), 0);
    int sweeps = 0;
    for (std::int64_t changed = 1; changed != 0; ++sweeps) {
      changed = 0;
#pragma omp parallel for schedule(static) reduction(+ : changed)
      for (std::int64_t i = 0; i < size; ++i) {
        const Board b = retra::awari::unrank(n, static_cast<std::uint64_t>(i));
        int best = INT_MIN, legal = 0;
        for (int origin = 0; origin < kSidePits; ++origin) {
          const Move m = play(b, origin);
          if (!m.legal) continue;
          ++legal;
          const auto child = retra::awari::rank(m.child);
          const int child_value =
              m.captured ? value[static_cast<std::size_t>(n - m.captured)][child] : load(v[child]);
          best = std::max(best, m.captured - child_value);
        }
        if (legal == 0) best = retra::awari::no_move_value(b);
        if (best != load(v[static_cast<std::size_t>(i)])) {
          std::atomic_ref<std::int8_t>(v[static_cast<std::size_t>(i)])
              .store(static_cast<std::int8_t>(best), std::memory_order_relaxed);
          ++changed;
        }
      }
    }
    std::printf("naive: %2d stones, %12lld positions, %3d sweeps, %8.2f s\n", n,
                static_cast<long long>(size), sweeps,
                std::chrono::duration<double>(Clock::now() - t0).count());
    std::fflush(stdout);
  }
  std::printf("naive: 0..%d stones in %.2f s on %d threads\n", n_max,
              std::chrono::duration<double>(Clock::now() - start).count(), omp_get_max_threads());
  if (db.empty()) return 0;

  auto d = retra::Database::open(db);
  if (!d) {
    std::fprintf(stderr, "naive: %s\n", d.error().message().c_str());
    return 1;
  }
  int differ = 0;
  for (int n = 0; n <= n_max; ++n) {
    const auto& mine = value[static_cast<std::size_t>(n)];
    auto seg = (*d)->segment(std::to_string(n));
    std::vector<std::uint8_t> theirs(mine.size());
    if (!seg || !(*seg)->read_all(theirs, omp_get_max_threads())) {
      std::fprintf(stderr, "naive: cannot read segment %d of %s\n", n, db.c_str());
      return 1;
    }
    if (std::memcmp(theirs.data(), mine.data(), mine.size()) != 0) {
      std::printf("naive: %d stones DIFFER from %s\n", n, db.c_str());
      ++differ;
    }
  }
  if (differ == 0) std::printf("naive: identical to %s, 0..%d stones\n", db.c_str(), n_max);
  return differ ? 1 : 0;
}
