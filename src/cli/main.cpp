// `retra`: command-line front end. Subcommands: build, verify, probe, stats, info, games.
// Thread safety: main thread; library calls use their own worker threads.
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "src/version.hpp"

namespace retra::cli {
namespace {

void add_db_options(CLI::App* cmd, Common& c, bool threads) {
  cmd->add_option("--db", c.db, "Database directory")->required();
  cmd->add_flag("--json", c.json, "Print the result as JSON");
  if (threads) {
    cmd->add_option("--threads", c.threads, "Worker threads (default: all hardware threads)")
        ->check(CLI::Range(1, 4096));
    cmd->add_flag("!--no-progress", c.progress, "No progress bar");
  }
}

int info(const Common& c, const Database& db) {
  const auto& m = db.manifest();
  std::uint64_t entries = 0, file = 0, raw = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : m.segments) {
    entries += s.entries;
    file += s.file_bytes;
    raw += s.raw_bytes;
    segs.push_back({{"name", s.name},
                    {"file", s.file},
                    {"entries", s.entries},
                    {"file_bytes", s.file_bytes},
                    {"raw_bytes", s.raw_bytes},
                    {"compression", s.file_bytes ? static_cast<double>(s.raw_bytes) /
                                                       static_cast<double>(s.file_bytes)
                                                 : 0.0},
                    {"build", s.build}});
  }
  const double ratio = file ? static_cast<double>(raw) / static_cast<double>(file) : 0.0;
  if (c.json) {
    print_json({{"ok", true},
                {"db", c.db.string()},
                {"game", m.game},
                {"variant", m.variant},
                {"indexer", m.indexer},
                {"value_encoding", m.value_encoding},
                {"tool_version", m.tool_version},
                {"created", m.created},
                {"updated", m.updated},
                {"segments", segs},
                {"entries", entries},
                {"file_bytes", file},
                {"raw_bytes", raw},
                {"compression", ratio}});
    return kOk;
  }
  std::cout << fmt::format(
      "database  {}\ngame      {} ({})\nindexer   {}\nvalues    {}\nwritten   by retra {}, "
      "created {}, updated {}\n",
      c.db.string(), m.game, m.variant, m.indexer, m.value_encoding, m.tool_version, m.created,
      m.updated);
  std::cout << fmt::format("{:>8} {:>16} {:>11} {:>11} {:>7}  {:<9} {}\n", "segment", "entries",
                           "raw", "on disk", "ratio", "kernel", "built");
  for (const auto& s : m.segments)
    std::cout << fmt::format(
        "{:>8} {:>16} {:>11} {:>11} {:>7.1f}  {:<9} {}\n", s.name, s.entries,
        format_bytes(s.raw_bytes), format_bytes(s.file_bytes),
        s.file_bytes ? static_cast<double>(s.raw_bytes) / static_cast<double>(s.file_bytes) : 0.0,
        s.build.value("kernel", "?"), s.build.value("finished", "?"));
  std::cout << fmt::format("{:>8} {:>16} {:>11} {:>11} {:>7.1f}\n", "total", entries,
                           format_bytes(raw), format_bytes(file), ratio);
  return kOk;
}

bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--json") == 0) return true;
  return false;
}

int run(int argc, char** argv) {
  Common c;
  int exit = kOk;
  CLI::App app{fmt::format("retra {}: build, verify and probe endgame databases by parallel "
                           "retrograde analysis",
                           kVersion),
               "retra"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);

  auto* build = app.add_subcommand("build", "Build databases of a game");
  build->require_subcommand(1);
  for (const auto& g : games()) g.add_build(*build, c, exit);

  auto* verify = app.add_subcommand("verify", "Check every checksum and every value of a database");
  add_db_options(verify, c, true);
  verify->callback([&] {
    const GameCommands* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = g->verify(c, *db);
  });

  std::string position;
  auto* probe = app.add_subcommand("probe", "Value of a position and of each of its moves");
  add_db_options(probe, c, false);
  probe->add_option("position", position, "The position, in the game's notation")->required();
  probe->callback([&] {
    const GameCommands* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = g->probe(c, *db, position);
  });

  std::optional<std::string> plot;
  auto* stats = app.add_subcommand("stats", "Value statistics per segment (and an SVG plot)");
  add_db_options(stats, c, false);
  stats->add_option("--plot", plot, "Write a plot of the value frequencies to FILE.svg");
  stats->callback([&] {
    const GameCommands* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = g->stats(c, *db, plot);
  });

  auto* info_cmd = app.add_subcommand("info", "Manifest, sizes and compression of a database");
  add_db_options(info_cmd, c, false);
  info_cmd->callback([&] {
    const GameCommands* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = info(c, *db);
  });

  SolveArgs solve_args;
  auto* solve = app.add_subcommand(
      "solve", "Solve a position beyond the databases by proof-number search (Awari, xiangqi)");
  add_db_options(solve, c, false);
  solve
      ->add_option("position", solve_args.position,
                   "The position: 12 pits (Awari) or a FEN (xiangqi)")
      ->required();
  solve->add_option("--algorithm", solve_args.algorithm,
                    "pn, pn-naive, pn-eval, pn2, ef-pn, ief-pn, ef-pn2, mc-pns, df-pn");
  solve->add_option("--max-nodes", solve_args.max_nodes, "Nodes stored at once (tree or table)");
  solve->add_option("--max-work", solve_args.max_work, "Expansions per threshold search");
  solve->add_option("--max-memory", solve_args.max_memory,
                    "Memory the tree or table may hold (512M, 2G, 10%); lowers --max-nodes");
  solve->add_option("--threshold", solve_args.threshold,
                    "Prove only: can the side to move reach this final difference (Awari), "
                    "or 1 = win / 0 = at least a draw (xiangqi)?");
  solve
      ->add_option("--leaf-max", solve_args.leaf_max,
                   "Use database values only for positions with at most this many stones "
                   "(Awari) or pieces (xiangqi); search the rest")
      ->check(CLI::Range(0, 48));
  solve->add_option("--a", solve_args.a, "EF-PN / PN-Eval parameter a (default 20)")
      ->check(CLI::PositiveNumber);
  solve->add_option("--b", solve_args.b, "EF-PN parameter b (default 5)")
      ->check(CLI::PositiveNumber);
  solve
      ->add_option("--t", solve_args.t,
                   "EF-PN / PN-Eval step threshold t in evaluation units (default 100)")
      ->check(CLI::PositiveNumber);
  solve->add_option("--mc-n", solve_args.mc_n, "MC-PNS: random sequences per leaf (4)")
      ->check(CLI::Range(1, 1000));
  solve->add_option("--mc-la", solve_args.mc_la, "MC-PNS: moves per sequence (25)")
      ->check(CLI::Range(1, 10000));
  solve->add_option("--epsilon", solve_args.epsilon, "df-pn: the 1+epsilon trick (0.25)")
      ->check(CLI::Range(0.0, 100.0));
  solve->add_option("--seed", solve_args.seed, "MC-PNS: random seed (1)");
  solve->callback([&] { exit = solve_cmd(c, solve_args); });

  auto* games_cmd = app.add_subcommand("games", "List the games retra can build");
  games_cmd->add_flag("--json", c.json, "Print the list as JSON");
  games_cmd->callback([&] {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& g : games()) {
      if (c.json)
        j.push_back({{"name", g.name}, {"summary", g.summary}});
      else
        std::cout << fmt::format("{:<10} {}\n", g.name, g.summary);
    }
    if (c.json) print_json({{"ok", true}, {"games", j}});
  });

  // A game name CLI11 does not know would be reported as "arguments not expected"; say plainly
  // that the game is unknown instead.
  if (argc >= 3 && std::strcmp(argv[1], "build") == 0 && argv[2][0] != '-' && !find_game(argv[2])) {
    std::string known;
    for (const auto& g : games()) known += (known.empty() ? "" : ", ") + std::string(g.name);
    c.json = wants_json(argc, argv);
    return report_error(c,
                        Error(Errc::invalid_argument,
                              fmt::format("unknown game '{}'; known games: {}", argv[2], known)));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    c.json = wants_json(argc, argv);
    return report_error(
        c, Error(Errc::invalid_argument,
                 fmt::format("{} (run `retra --help` or `retra <command> --help`)", e.what())));
  }
  return exit;
}

}  // namespace
}  // namespace retra::cli

int main(int argc, char** argv) {
  try {
    return retra::cli::run(argc, argv);
  } catch (const retra::Failure& f) {
    std::cerr << "retra: error: " << f.error().message() << std::endl;
    return retra::cli::exit_code(f.error().code());
  } catch (const std::bad_alloc&) {
    std::cerr << "retra: error: out of memory" << std::endl;
    return retra::cli::kResource;
  } catch (const std::exception& e) {
    std::cerr << "retra: internal error: " << e.what() << std::endl;
    return retra::cli::kInternal;
  }
}
