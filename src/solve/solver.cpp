// solve::Solver::open: the database's game module makes the solver. Thread safety: reentrant.
#include <fmt/format.h>

#include "retra/solve.hpp"
#include "src/module/module.hpp"

namespace retra::solve {

Result<std::unique_ptr<Solver>> Solver::open(const probe::Prober& db, const Options& opt,
                                             std::optional<int> leaf_max) {
  const GameModule* m = find_module(db.game());
  if (!m)
    return Error(Errc::mismatch,
                 fmt::format("no solver for game '{}' (known: {})", db.game(), module_names()));
  return m->solver(db, opt, leaf_max);
}

}  // namespace retra::solve
