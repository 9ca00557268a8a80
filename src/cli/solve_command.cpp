// `retra solve`: proof-number search beyond the databases (Awari), a thin layer over
// include/retra/solve.hpp. Thread safety: main thread.
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "retra/games/awari/board.hpp"
#include "retra/solve.hpp"

namespace retra::cli {

int solve_cmd(const Common& c, const SolveArgs& a) {
  auto alg = solve::parse_algorithm(a.algorithm);
  if (!alg) return report_error(c, alg.error());
  auto db = Database::open(c.db);
  if (!db) return report_error(c, db.error());
  if ((*db)->manifest().game != "awari")
    return report_error(c, Error(Errc::invalid_argument,
                                 fmt::format("retra solve searches Awari positions; '{}' holds a "
                                             "{} database",
                                             c.db.string(), (*db)->manifest().game)));
  // Leaves come from the stone counts 0..k present without a gap.
  int db_max = -1;
  while (db_max < awari::kMaxStones && (*db)->has_segment(std::to_string(db_max + 1))) ++db_max;
  auto board = awari::parse_board(a.position);
  if (!board) return report_error(c, board.error());
  std::array<int, 12> pits;
  for (int i = 0; i < 12; ++i) pits[i] = board->pit[i];
  probe::Value err;
  auto prober = probe::Prober::open(c.db.string(), {}, &err);
  if (!prober) return report_error(c, Error(Errc::not_found, err.message));
  solve::Options o;
  o.algorithm = *alg;
  o.max_nodes = a.max_nodes;
  o.max_work = a.max_work;
  solve::AwariSolver solver(*prober, db_max, o);
  nlohmann::json j = {{"ok", true},
                      {"game", "awari"},
                      {"position", awari::format_board(*board)},
                      {"stones", board->stones()},
                      {"database_stones", db_max},
                      {"algorithm", std::string(solve::name(*alg))}};
  solve::Stats st;
  if (a.threshold) {
    const auto out = solver.prove(pits, *a.threshold, &st);
    j["threshold"] = *a.threshold;
    j["outcome"] = out == solve::Outcome::proven      ? "proven"
                   : out == solve::Outcome::disproven ? "disproven"
                                                      : "unknown";
  } else {
    auto r = solver.solve(pits);
    if (!r) return report_error(c, r.error());
    st = r->stats;
    j["solved"] = r->solved;
    j["value"] = r->solved ? nlohmann::json(r->value) : nlohmann::json();
    j["lower"] = r->lower;
    j["upper"] = r->upper;
  }
  j["stats"] = {{"expanded", st.expanded},         {"generated", st.generated},
                {"largest", st.largest},           {"searches", st.searches},
                {"exact_leaves", st.leaves_exact}, {"seconds", st.seconds}};
  if (c.json) {
    print_json(j);
    return kOk;
  }
  std::cout << fmt::format("position {} ({} stones; databases 0..{})\nalgorithm {}\n",
                           j["position"].get<std::string>(), board->stones(), db_max, a.algorithm);
  if (a.threshold)
    std::cout << fmt::format("final difference >= {}: {}\n", *a.threshold,
                             j["outcome"].get<std::string>());
  else if (j["solved"].get<bool>())
    std::cout << fmt::format("value {}\n", j["value"].get<int>());
  else
    std::cout << fmt::format("not solved within the limits: value in [{}, {}]\n",
                             j["lower"].get<int>(), j["upper"].get<int>());
  std::cout << fmt::format(
      "nodes expanded {}, generated {}, largest tree {}, {} searches, {:.2f} s\n", st.expanded,
      st.generated, st.largest, st.searches, st.seconds);
  return kOk;
}

}  // namespace retra::cli
