// Names of the proof-number algorithms (include/retra/solve.hpp). Thread safety: pure functions.
#include <fmt/format.h>

#include "retra/solve.hpp"

namespace retra::solve {

std::string_view name(Algorithm a) {
  switch (a) {
    case Algorithm::pn:
      return "pn";
    case Algorithm::pn_naive:
      return "pn-naive";
    case Algorithm::pn_eval:
      return "pn-eval";
    case Algorithm::pn2:
      return "pn2";
    case Algorithm::ef_pn:
      return "ef-pn";
    case Algorithm::ief_pn:
      return "ief-pn";
    case Algorithm::ef_pn2:
      return "ef-pn2";
    case Algorithm::mc_pns:
      return "mc-pns";
    case Algorithm::dfpn:
      return "df-pn";
  }
  return "?";
}

Result<Algorithm> parse_algorithm(std::string_view s) {
  for (Algorithm a : kAlgorithms)
    if (name(a) == s) return a;
  return Error(Errc::invalid_argument,
               fmt::format("unknown algorithm '{}'; known: pn, pn-naive, pn-eval, pn2, ef-pn, "
                           "ief-pn, ef-pn2, mc-pns, df-pn",
                           s));
}

}  // namespace retra::solve
