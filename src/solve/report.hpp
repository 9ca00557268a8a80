// Pieces of `retra solve`'s output that every game shares: search statistics, outcomes and
// solutions as JSON and text. Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "retra/solve.hpp"
#include "src/module/module.hpp"

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

// The part of a `retra solve` report every game shares: with a threshold its outcome (`goal`
// names the goal in the game's words), else the solution (`solved` describes a solved value,
// `bounds` the bounds of an unsolved one), then the search statistics.
inline void finish_report(const SolveRun& run, Report& r, const std::string& goal,
                          const std::string& solved, const std::string& bounds) {
  if (run.threshold) {
    r.json["threshold"] = *run.threshold;
    r.json["outcome"] = outcome_name(run.outcome);
    r.text += fmt::format("{}: {}\n", goal, outcome_name(run.outcome));
  } else {
    put_solution(r.json, *run.solution);
    r.text += (run.solution->solved ? solved : bounds) + "\n";
  }
  r.json["stats"] = stats_json(run.stats);
  r.text += stats_text(run.stats);
}

// The whole report of a game whose solved values are win, draw or loss (-1, 0, 1) and whose
// leaves are endgames of up to `leaf_max` pieces: position, endgame, goal or result,
// statistics. `leaves` names the leaves in the text ("database", "table"); `rule` is appended to
// a solved result (e.g. a rule the solution ignores).
inline Report wdl_report(const SolveRun& run, std::string_view game, const std::string& position,
                         const std::string& endgame, int pieces, std::string_view leaves,
                         std::string_view rule = "") {
  Report r;
  r.json = {{"ok", true},
            {"game", game},
            {"position", position},
            {"endgame", endgame},
            {"pieces", pieces},
            {"leaf_max_pieces", run.leaf_max},
            {"algorithm", run.algorithm}};
  r.text = fmt::format("position {} ({}, {} pieces; {} leaves up to {} pieces)\nalgorithm {}\n",
                       position, endgame, pieces, leaves, run.leaf_max, run.algorithm);
  static constexpr const char* kResult[] = {"loss", "draw", "win"};
  const Solution s = run.solution.value_or(Solution{});
  if (run.solution)
    r.json["result"] = s.solved ? nlohmann::json(kResult[s.value + 1]) : nlohmann::json();
  finish_report(run, r,
                run.threshold == 1 ? "the side to move wins" : "the side to move does not lose",
                fmt::format("the side to move {}{}",
                            s.value == -1  ? "loses"
                            : s.value == 0 ? "draws"
                                           : "wins",
                            rule),
                fmt::format("not solved within the limits: result in [{}, {}] (-1 loss, 0 draw, "
                            "1 win)",
                            s.lower, s.upper));
  return r;
}

}  // namespace retra::solve
