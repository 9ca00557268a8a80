// `retra solve`: proof-number search beyond the databases, a thin layer over
// include/retra/solve.hpp for whatever game the database holds; the game's module checks the
// goal and describes the result. Thread safety: main thread.
#include <fmt/format.h>

#include "cli.hpp"
#include "retra/solve.hpp"
#include "src/memory_plan.hpp"

namespace retra::cli {

namespace {

solve::Options options_of(const SolveArgs& a, solve::Algorithm alg, std::uint64_t max_memory) {
  solve::Options o;
  o.max_memory = max_memory;
  o.algorithm = alg;
  o.a = a.a.value_or(o.a);
  o.b = a.b.value_or(o.b);
  o.t = a.t.value_or(o.t);
  o.mc_n = a.mc_n.value_or(o.mc_n);
  o.mc_la = a.mc_la.value_or(o.mc_la);
  o.epsilon = a.epsilon.value_or(o.epsilon);
  o.seed = a.seed.value_or(o.seed);
  o.max_nodes = a.max_nodes;
  o.max_work = a.max_work;
  return o;
}

}  // namespace

int solve_cmd(const Common& c, const SolveArgs& a) {
  auto alg = solve::parse_algorithm(a.algorithm);
  if (!alg) return report_error(c, alg.error());
  std::uint64_t max_memory = 0;
  if (!a.max_memory.empty()) {
    auto m = parse_memory_size(a.max_memory);
    if (!m)
      return report_error(c, Error(Errc::invalid_argument,
                                   fmt::format("--max-memory '{}': expected a size like 2G, 512M "
                                               "or 10%",
                                               a.max_memory)));
    max_memory = *m;
  }
  const solve::Options opt = options_of(a, *alg, max_memory);
  int exit = kOk;
  const GameModule* game = nullptr;
  if (!open_db(c, game, exit)) return exit;
  const SolverSpec& spec = game->solver_spec();
  if (a.threshold && (*a.threshold < spec.threshold_min || *a.threshold > spec.threshold_max))
    return report_error(
        c, Error(Errc::invalid_argument,
                 fmt::format("--threshold {}: {}", *a.threshold, spec.threshold_help)));
  probe::Value err;
  auto prober = probe::Prober::open(c.db.string(), {}, &err);
  if (!prober) return report_error(c, Error(Errc::not_found, err.message));
  auto solver = game->solver(*prober, opt, a.leaf_max);
  if (!solver) return report_error(c, solver.error());
  SolveRun run;
  run.position = a.position;
  run.algorithm = std::string(solve::name(*alg));
  run.leaf_max = (*solver)->leaf_max();
  if (a.threshold) {
    run.threshold = a.threshold;
    run.outcome = (*solver)->prove(a.position, *a.threshold, &run.stats);
    if (const auto& e = (*solver)->last_error()) return report_error(c, *e);
  } else {
    auto r = (*solver)->solve(a.position);
    if (!r) return report_error(c, r.error());
    run.stats = r->stats;
    run.solution = *r;
  }
  auto report = game->solve_report(run);
  if (!report) return report_error(c, report.error());
  if (c.json)
    print_json(report->json);
  else
    std::cout << report->text;
  return kOk;
}

}  // namespace retra::cli
