// Pieces of `retra solve`'s output that every game shares: search statistics, outcomes and
// solutions as JSON and text. Thread safety: pure functions.
#pragma once

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "retra/solve.hpp"

namespace retra::solve {

inline nlohmann::json stats_json(const Stats& st) {
  return {{"expanded", st.expanded},         {"generated", st.generated},
          {"largest", st.largest},           {"searches", st.searches},
          {"exact_leaves", st.leaves_exact}, {"repetitions", st.repetitions},
          {"node_bytes", st.node_bytes},     {"seconds", st.seconds}};
}

inline std::string stats_text(const Stats& st) {
  return fmt::format(
      "nodes expanded {}, generated {}, largest tree {} ({} bytes per node), {} searches, "
      "{:.2f} s\n",
      st.expanded, st.generated, st.largest, st.node_bytes, st.searches, st.seconds);
}

inline std::string outcome_name(Outcome o) {
  return o == Outcome::proven ? "proven" : o == Outcome::disproven ? "disproven" : "unknown";
}

inline void put_solution(nlohmann::json& j, const Solution& r) {
  j["solved"] = r.solved;
  j["value"] = r.solved ? nlohmann::json(r.value) : nlohmann::json();
  j["lower"] = r.lower;
  j["upper"] = r.upper;
}

}  // namespace retra::solve
