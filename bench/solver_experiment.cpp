// The solver experiment of docs/SOLVER.md, in the style of the EF-PN paper's Tables 1 and 3: a
// reproducible set of Awari positions with more stones than the databases hold, solved exactly
// (binary search over thresholds) by every algorithm under the same limits. Prints, per
// algorithm, positions solved, then total nodes expanded and seconds over the positions that
// every algorithm solved.
// Usage: solver_experiment DB_DIR DB_STONES POSITION_STONES COUNT [SEED] [MAX_NODES] [MAX_WORK]
//   DB_DIR must hold Awari segments 0..DB_STONES (retra build awari --stones 0-DB_STONES).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "retra/games/awari/board.hpp"
#include "retra/games/awari/index.hpp"
#include "retra/solve.hpp"

int main(int argc, char** argv) {
  using namespace retra;
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: %s DB_DIR DB_STONES POSITION_STONES COUNT [SEED] [MAX_NODES] "
                 "[MAX_WORK]\n",
                 argv[0]);
    return 2;
  }
  const int db_stones = std::atoi(argv[2]), n = std::atoi(argv[3]), count = std::atoi(argv[4]);
  const std::uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1;
  const std::uint64_t max_nodes = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 2'000'000;
  const std::uint64_t max_work = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 20'000'000;
  if (n <= db_stones || n > awari::kMaxStones || count <= 0) {
    std::fprintf(stderr, "need DB_STONES < POSITION_STONES <= 48 and COUNT > 0\n");
    return 2;
  }
  probe::Value err;
  auto db = probe::Prober::open(argv[1], {.cache_bytes = std::size_t{1} << 30}, &err);
  if (!db) {
    std::fprintf(stderr, "%s\n", err.message.c_str());
    return 3;
  }
  // Positions drawn uniformly by index among those where the side to move has a legal move.
  std::mt19937_64 rng(seed);
  std::vector<std::array<int, 12>> set;
  while (static_cast<int>(set.size()) < count) {
    const auto b = awari::unrank(n, rng() % awari::positions(n));
    bool legal = false;
    for (int i = 0; i < awari::kSidePits; ++i) legal |= awari::make_move(b, i).legal();
    if (!legal) continue;
    std::array<int, 12> p;
    for (int i = 0; i < 12; ++i) p[i] = b.pit[i];
    set.push_back(p);
  }
  std::printf(
      "test set: %d positions with %d stones (seed %llu), databases 0..%d, limits: %llu "
      "nodes stored, %llu expansions per threshold search\n",
      count, n, static_cast<unsigned long long>(seed), db_stones,
      static_cast<unsigned long long>(max_nodes), static_cast<unsigned long long>(max_work));
  struct Row {
    std::vector<bool> solved;
    std::vector<int> value;
    std::vector<std::uint64_t> nodes;
    std::vector<double> seconds;
    std::uint64_t largest = 0;
  };
  std::vector<Row> rows;
  for (solve::Algorithm alg : solve::kAlgorithms) {
    solve::Options o;
    o.algorithm = alg;
    o.max_nodes = max_nodes;
    o.max_work = max_work;
    solve::AwariSolver s(*db, db_stones, o);
    Row r;
    for (const auto& p : set) {
      auto res = s.solve(p);
      if (!res) {
        std::fprintf(stderr, "%s\n", res.error().message().c_str());
        return 1;
      }
      r.solved.push_back(res->solved);
      r.value.push_back(res->value);
      r.nodes.push_back(res->stats.expanded);
      r.seconds.push_back(res->stats.seconds);
      r.largest = std::max(r.largest, res->stats.largest);
    }
    rows.push_back(std::move(r));
    std::fflush(stdout);
  }
  // Agreement: every algorithm that solved a position found the same value.
  int disagreements = 0;
  for (int i = 0; i < count; ++i) {
    int v = 0;
    bool have = false;
    for (const Row& r : rows)
      if (r.solved[static_cast<std::size_t>(i)]) {
        if (have && r.value[static_cast<std::size_t>(i)] != v) ++disagreements;
        v = r.value[static_cast<std::size_t>(i)];
        have = true;
      }
  }
  std::vector<bool> all(static_cast<std::size_t>(count), true);
  for (const Row& r : rows)
    for (int i = 0; i < count; ++i)
      all[static_cast<std::size_t>(i)] =
          all[static_cast<std::size_t>(i)] && r.solved[static_cast<std::size_t>(i)];
  int common = 0;
  for (bool b : all) common += b;
  std::printf(
      "\n| algorithm | solved (of %d) | nodes on the %d solved by all | seconds on those | "
      "largest tree/table |\n|---|---|---|---|---|\n",
      count, common);
  for (std::size_t a = 0; a < rows.size(); ++a) {
    const Row& r = rows[a];
    int solved = 0;
    std::uint64_t nodes = 0;
    double secs = 0;
    for (int i = 0; i < count; ++i) {
      solved += r.solved[static_cast<std::size_t>(i)];
      if (all[static_cast<std::size_t>(i)]) {
        nodes += r.nodes[static_cast<std::size_t>(i)];
        secs += r.seconds[static_cast<std::size_t>(i)];
      }
    }
    std::printf("| %s | %d | %llu | %.2f | %llu |\n",
                std::string(solve::name(solve::kAlgorithms[a])).c_str(), solved,
                static_cast<unsigned long long>(nodes), secs,
                static_cast<unsigned long long>(r.largest));
  }
  std::printf("\nvalue disagreements between algorithms: %d\n", disagreements);
  return disagreements ? 1 : 0;
}
