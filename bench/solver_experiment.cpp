// The solver experiment of docs/SOLVER.md, in the style of the EF-PN paper's Tables 1 and 3: a
// reproducible set of positions beyond the databases, solved exactly (binary search over
// thresholds) by every algorithm under the same limits. Prints, per algorithm, positions solved,
// then total nodes expanded and seconds over the positions that every algorithm solved, and
// checks that all algorithms that solved a position agree.
// Usage:
//   solver_experiment awari DB_DIR DB_STONES POSITION_STONES COUNT [SEED] [MAX_NODES] [MAX_WORK]
//     DB_DIR holds Awari segments 0..DB_STONES; positions have POSITION_STONES stones.
//   solver_experiment xiangqi DB_DIR ENDGAME[,ENDGAME...] COUNT [SEED] [MAX_NODES] [MAX_WORK]
//     COUNT positions of each endgame (Red to move, not decided by the rules at once), typically
//     endgames one piece beyond those DB_DIR holds; every endgame DB_DIR holds is a leaf.
// Set RETRA_EXPERIMENT_ALGORITHMS=pn,df-pn to run a subset, RETRA_EXPERIMENT_LIST=1 to print the
// positions, RETRA_EXPERIMENT_LEAF_MAX=n to use xiangqi database leaves of at most n pieces only.
// Thread safety: single-threaded.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "retra/solve.hpp"
#include "src/games/awari/board.hpp"
#include "src/games/awari/index.hpp"
#include "src/games/xiangqi/game.hpp"

namespace {

using namespace retra;

struct Row {
  std::vector<bool> solved;
  std::vector<int> value;
  std::vector<std::uint64_t> nodes;
  std::vector<double> seconds;
  std::uint64_t largest = 0;
};

struct Run {
  bool solved;
  int value;
  solve::Stats stats;
};

std::vector<solve::Algorithm> algorithms() {
  std::vector<solve::Algorithm> out;
  const char* env = std::getenv("RETRA_EXPERIMENT_ALGORITHMS");
  if (!env || !*env) return {std::begin(solve::kAlgorithms), std::end(solve::kAlgorithms)};
  std::stringstream ss(env);
  for (std::string item; std::getline(ss, item, ',');) {
    auto a = solve::parse_algorithm(item);
    if (!a) {
      std::fprintf(stderr, "%s\n", a.error().message().c_str());
      std::exit(2);
    }
    out.push_back(*a);
  }
  return out;
}

// Runs every algorithm on `count` positions (solve_one(alg, i)) and prints the table.
int table(int count, const std::function<Result<Run>(const solve::Options&, int)>& solve_one,
          const solve::Options& limits) {
  std::vector<Row> rows;
  const auto algs = algorithms();
  for (solve::Algorithm alg : algs) {
    solve::Options o = limits;
    o.algorithm = alg;
    Row r;
    for (int i = 0; i < count; ++i) {
      auto res = solve_one(o, i);
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
    std::fprintf(stderr, "%s done\n", std::string(solve::name(alg)).c_str());
    rows.push_back(std::move(r));
  }
  const auto n = static_cast<std::size_t>(count);
  int disagreements = 0;
  for (std::size_t i = 0; i < n; ++i) {
    int v = 0;
    bool have = false;
    for (const Row& r : rows)
      if (r.solved[i]) {
        if (have && r.value[i] != v) ++disagreements;
        v = r.value[i];
        have = true;
      }
  }
  std::vector<bool> all(n, true);
  for (const Row& r : rows)
    for (std::size_t i = 0; i < n; ++i) all[i] = all[i] && r.solved[i];
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
    for (std::size_t i = 0; i < n; ++i) {
      solved += r.solved[i];
      if (all[i]) {
        nodes += r.nodes[i];
        secs += r.seconds[i];
      }
    }
    std::printf("| %s | %d | %llu | %.2f | %llu |\n", std::string(solve::name(algs[a])).c_str(),
                solved, static_cast<unsigned long long>(nodes), secs,
                static_cast<unsigned long long>(r.largest));
  }
  std::printf("\nvalue disagreements between algorithms: %d\n", disagreements);
  return disagreements ? 1 : 0;
}

std::unique_ptr<probe::Prober> open(const char* dir) {
  probe::Value err;
  auto db = probe::Prober::open(dir, {.cache_bytes = std::size_t{1} << 30}, &err);
  if (!db) {
    std::fprintf(stderr, "%s\n", err.message.c_str());
    std::exit(3);
  }
  return db;
}

int awari_experiment(int argc, char** argv) {
  const int db_stones = std::atoi(argv[3]), n = std::atoi(argv[4]), count = std::atoi(argv[5]);
  const std::uint64_t seed = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 1;
  solve::Options limits;
  limits.max_nodes = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 2'000'000;
  limits.max_work = argc > 8 ? std::strtoull(argv[8], nullptr, 10) : 20'000'000;
  if (n <= db_stones || n > awari::kMaxStones || count <= 0) {
    std::fprintf(stderr, "need DB_STONES < POSITION_STONES <= 48 and COUNT > 0\n");
    return 2;
  }
  auto db = open(argv[2]);
  // Positions drawn uniformly by index among those where the side to move has a legal move.
  std::mt19937_64 rng(seed);
  std::vector<std::string> set;
  while (static_cast<int>(set.size()) < count) {
    const auto b = awari::unrank(n, rng() % awari::positions(n));
    bool legal = false;
    for (int i = 0; i < awari::kSidePits; ++i) legal |= awari::make_move(b, i).legal();
    if (!legal) continue;
    set.push_back(awari::format_board(b));
  }
  std::printf(
      "test set: %d Awari positions with %d stones (seed %llu), databases 0..%d, limits: %llu "
      "nodes stored, %llu expansions per threshold search\n",
      count, n, static_cast<unsigned long long>(seed), db_stones,
      static_cast<unsigned long long>(limits.max_nodes),
      static_cast<unsigned long long>(limits.max_work));
  return table(
      count,
      [&](const solve::Options& o, int i) -> Result<Run> {
        auto s = solve::Solver::open(*db, o, db_stones);
        if (!s) return std::move(s).error();
        auto r = (*s)->solve(set[static_cast<std::size_t>(i)]);
        if (!r) return std::move(r).error();
        return Run{r->solved, r->value, r->stats};
      },
      limits);
}

int xiangqi_experiment(int argc, char** argv) {
  std::vector<std::string> endgames;
  std::stringstream ss(argv[3]);
  for (std::string item; std::getline(ss, item, ',');) endgames.push_back(item);
  const int count = std::atoi(argv[4]);
  const std::uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1;
  solve::Options limits;
  limits.max_nodes = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 2'000'000;
  limits.max_work = argc > 7 ? std::strtoull(argv[7], nullptr, 10) : 20'000'000;
  if (count <= 0 || endgames.empty()) {
    std::fprintf(stderr, "need an endgame and COUNT > 0\n");
    return 2;
  }
  auto db = open(argv[2]);
  const char* lm = std::getenv("RETRA_EXPERIMENT_LEAF_MAX");
  const int leaf_max = lm ? std::atoi(lm) : 32;
  // Per endgame, positions drawn uniformly by index: Red to move, valid, neither side able to
  // capture a king now and Red with a legal move (so no rule decides them without search).
  std::vector<std::string> set;
  std::mt19937_64 rng(seed);
  for (const std::string& name : endgames) {
    auto m = xiangqi::parse_material(name);
    if (!m) {
      std::fprintf(stderr, "%s\n", m.error().message().c_str());
      return 2;
    }
    auto g = xiangqi::Game::closure({*m});
    if (!g) {
      std::fprintf(stderr, "%s\n", g.error().message().c_str());
      return 2;
    }
    const xiangqi::Game& game = **g;
    const int s = game.find(m->name());
    for (int k = 0; k < count;) {
      auto pos = game.unrank(s, rng() % game.segment_size(s));
      if (!pos.valid || pos.side != xiangqi::red) continue;
      const xiangqi::Board b = game.board(s, pos);
      if (xiangqi::can_capture_king(b, xiangqi::red) ||
          xiangqi::can_capture_king(b, xiangqi::black))
        continue;
      bool legal = false;
      xiangqi::for_each_move(b, xiangqi::red, [&](const xiangqi::Move& mv) {
        xiangqi::Board c = b;
        c[mv.to] = c[mv.from];
        c[mv.from] = 0;
        legal |= !xiangqi::can_capture_king(c, xiangqi::black);
      });
      if (!legal) continue;
      if (db->xiangqi_board(b, xiangqi::red)) {
        std::fprintf(stderr,
                     "endgame %s is in %s: its positions are leaves, not a test set beyond it\n",
                     name.c_str(), argv[2]);
        return 2;
      }
      set.push_back(xiangqi::to_fen(b, xiangqi::red));
      ++k;
    }
  }
  std::printf(
      "test set: %d xiangqi positions (%d each of %s, Red to move, seed %llu), leaves: every "
      "endgame of %s, limits: %llu nodes stored, %llu expansions per threshold search\n",
      static_cast<int>(set.size()), count, argv[3], static_cast<unsigned long long>(seed), argv[2],
      static_cast<unsigned long long>(limits.max_nodes),
      static_cast<unsigned long long>(limits.max_work));
  if (std::getenv("RETRA_EXPERIMENT_LIST"))
    for (const auto& f : set) std::printf("  %s\n", f.c_str());
  return table(
      static_cast<int>(set.size()),
      [&](const solve::Options& o, int i) -> Result<Run> {
        auto s = solve::Solver::open(*db, o, leaf_max);
        if (!s) return std::move(s).error();
        auto r = (*s)->solve(set[static_cast<std::size_t>(i)]);
        if (!r) return std::move(r).error();
        return Run{r->solved, r->value, r->stats};
      },
      limits);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string game = argc > 1 ? argv[1] : "";
  if (game == "awari" && argc >= 6) return awari_experiment(argc, argv);
  if (game == "xiangqi" && argc >= 5) return xiangqi_experiment(argc, argv);
  std::fprintf(stderr,
               "usage: %s awari DB_DIR DB_STONES POSITION_STONES COUNT [SEED] [MAX_NODES] "
               "[MAX_WORK]\n"
               "       %s xiangqi DB_DIR ENDGAME[,ENDGAME...] COUNT [SEED] [MAX_NODES] "
               "[MAX_WORK]\n",
               argv[0], argv[0]);
  return 2;
}
