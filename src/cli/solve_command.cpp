// `retra solve`: proof-number search beyond the databases (Awari, xiangqi), a thin layer over
// include/retra/solve.hpp. Thread safety: main thread.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "retra/solve.hpp"
#include "src/games/awari/board.hpp"
#include "src/games/xiangqi/board.hpp"
#include "src/games/xiangqi/material.hpp"
#include "src/memory_plan.hpp"

namespace retra::cli {

namespace {

nlohmann::json stats_json(const solve::Stats& st) {
  return {{"expanded", st.expanded},         {"generated", st.generated},
          {"largest", st.largest},           {"searches", st.searches},
          {"exact_leaves", st.leaves_exact}, {"repetitions", st.repetitions},
          {"node_bytes", st.node_bytes},     {"seconds", st.seconds}};
}

void put_solution(nlohmann::json& j, const solve::Solution& r) {
  j["solved"] = r.solved;
  j["value"] = r.solved ? nlohmann::json(r.value) : nlohmann::json();
  j["lower"] = r.lower;
  j["upper"] = r.upper;
}

std::string outcome_name(solve::Outcome o) {
  return o == solve::Outcome::proven      ? "proven"
         : o == solve::Outcome::disproven ? "disproven"
                                          : "unknown";
}

void print_stats(const solve::Stats& st) {
  std::cout << fmt::format(
      "nodes expanded {}, generated {}, largest tree {} ({} bytes per node), {} searches, "
      "{:.2f} s\n",
      st.expanded, st.generated, st.largest, st.node_bytes, st.searches, st.seconds);
}

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

int solve_xiangqi(const Common& c, const SolveArgs& a, const solve::Options& opt,
                  const probe::Prober& prober) {
  const solve::Algorithm alg = opt.algorithm;
  const int max_pieces = a.leaf_max.value_or(32);
  solve::XiangqiSolver solver(prober, max_pieces, opt);
  auto fp = xiangqi::parse_fen(a.position);
  if (!fp) return report_error(c, fp.error());
  const int pieces = static_cast<int>(
      std::count_if(fp->board.begin(), fp->board.end(), [](std::uint8_t pc) { return pc != 0; }));
  nlohmann::json j = {{"ok", true},
                      {"game", "xiangqi"},
                      {"position", xiangqi::to_fen(fp->board, fp->side)},
                      {"endgame", xiangqi::material_of(fp->board).name()},
                      {"pieces", pieces},
                      {"leaf_max_pieces", max_pieces},
                      {"algorithm", std::string(solve::name(alg))}};
  solve::Stats st;
  static constexpr const char* kResult[] = {"loss", "draw", "win"};
  if (a.threshold) {
    if (*a.threshold < -1 || *a.threshold > 1)
      return report_error(c, Error(Errc::invalid_argument,
                                   fmt::format("--threshold {}: xiangqi goals are 1 (win) and 0 "
                                               "(at least a draw)",
                                               *a.threshold)));
    const auto out = solver.prove(fp->board, fp->side, *a.threshold, &st);
    j["threshold"] = *a.threshold;
    j["outcome"] = outcome_name(out);
  } else {
    auto r = solver.solve(a.position);
    if (!r) return report_error(c, r.error());
    st = r->stats;
    put_solution(j, *r);
    j["result"] = r->solved ? nlohmann::json(kResult[r->value + 1]) : nlohmann::json();
  }
  j["stats"] = stats_json(st);
  if (c.json) {
    print_json(j);
    return kOk;
  }
  std::cout << fmt::format(
      "position {} ({}, {} pieces; database leaves up to {} pieces)\n"
      "algorithm {}\n",
      j["position"].get<std::string>(), j["endgame"].get<std::string>(), pieces, max_pieces,
      a.algorithm);
  if (a.threshold)
    std::cout << fmt::format(
        "{}: {}\n", *a.threshold == 1 ? "the side to move wins" : "the side to move does not lose",
        j["outcome"].get<std::string>());
  else if (j["solved"].get<bool>())
    std::cout << fmt::format("the side to move {}s\n", j["result"].get<std::string>() == "loss"
                                                           ? "lose"
                                                           : j["result"].get<std::string>());
  else
    std::cout << fmt::format(
        "not solved within the limits: result in [{}, {}] (-1 loss, 0 draw, "
        "1 win)\n",
        j["lower"].get<int>(), j["upper"].get<int>());
  print_stats(st);
  return kOk;
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
  auto db = Database::open(c.db);
  if (!db) return report_error(c, db.error());
  const std::string game = (*db)->manifest().game;
  if (game != "awari" && game != "xiangqi")
    return report_error(c, Error(Errc::invalid_argument,
                                 fmt::format("retra solve searches Awari and xiangqi positions; "
                                             "'{}' holds a {} database",
                                             c.db.string(), game)));
  probe::Value err;
  auto prober = probe::Prober::open(c.db.string(), {}, &err);
  if (!prober) return report_error(c, Error(Errc::not_found, err.message));
  if (game == "xiangqi") return solve_xiangqi(c, a, opt, *prober);
  // Leaves come from the stone counts 0..k present without a gap.
  int db_max = -1;
  while (db_max < awari::kMaxStones && (*db)->has_segment(std::to_string(db_max + 1))) ++db_max;
  if (a.leaf_max) db_max = std::min(db_max, *a.leaf_max);
  auto board = awari::parse_board(a.position);
  if (!board) return report_error(c, board.error());
  std::array<int, 12> pits;
  for (int i = 0; i < 12; ++i) pits[i] = board->pit[i];
  solve::AwariSolver solver(*prober, db_max, opt);
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
    j["outcome"] = outcome_name(out);
  } else {
    auto r = solver.solve(pits);
    if (!r) return report_error(c, r.error());
    st = r->stats;
    put_solution(j, *r);
  }
  j["stats"] = stats_json(st);
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
  print_stats(st);
  return kOk;
}

}  // namespace retra::cli
