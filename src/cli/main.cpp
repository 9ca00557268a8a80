// `retra`: command-line front end. Subcommands: build, verify, probe, stats, info, solve, serve,
// games; every one of them dispatches through the database's (or the named) game module.
// Thread safety: main thread; library calls use their own worker threads.
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli.hpp"
#include "src/cluster/mpi_cluster.hpp"
#include "src/recompress.hpp"
#include "src/serve/explorer.hpp"
#include "src/util/text.hpp"
#include "src/verify/verify.hpp"
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
  const nlohmann::json j = info_json(db);
  if (c.json) {
    nlohmann::json out = {{"ok", true}, {"db", c.db.string()}};
    out.update(j);
    print_json(out);
    return kOk;
  }
  const std::uint64_t entries = j["entries"], file = j["file_bytes"], raw = j["raw_bytes"];
  const double ratio = j["compression"];
  std::cout << fmt::format(
      "database  {}\ngame      {} ({})\nindexer   {}\nvalues    {}\nwritten   by retra {}, "
      "created {}, updated {}\n",
      c.db.string(), m.game, m.variant, m.indexer, m.value_encoding, m.tool_version, m.created,
      m.updated);
  // The name column fits the longest segment name.
  std::size_t w = 8;
  for (const auto& s : m.segments) w = std::max(w, s.name.size());
  std::cout << fmt::format("{:>{}} {:>16} {:>11} {:>11} {:>7}  {:<10} {:<9} {:<7} {:<3} {:<9} {}\n",
                           "segment", w, "entries", "raw", "on disk", "ratio", "codec", "order",
                           "classes", "dc", "kernel", "built");
  for (const auto& s : m.segments) {
    // "zstd -19", "rans-o1"; the entry order's stored digits ("0,2,3,1") or "index"
    // (docs/FORMAT.md). Manifests written before either existed hold zstd files in index order.
    const std::string codec = s.build.value("codec", std::string("zstd"));
    const std::string order = s.build.value("entry_order", std::string("index"));
    const auto stored = order.find(" stored ");
    // The half stored as classes (docs/FORMAT.md, "Class halves"), "-" for none.
    const std::string half = s.build.value("class_half", std::string("none"));
    // Where the file has don't-care entries (`recompress --dont-care`, docs/FORMAT.md): "cap"
    // where the captures alone decided them, "yes" where every converting move did.
    const bool dc = s.build.value("dont_care", false);
    const bool dc_captures = s.build.value("dont_care_moves", std::string()) == "captures";
    std::cout << fmt::format(
        "{:>{}} {:>16} {:>11} {:>11} {:>7.1f}  {:<10} {:<9} {:<7} {:<3} {:<9} {}\n", s.name, w,
        s.entries, format_bytes(s.raw_bytes), format_bytes(s.file_bytes),
        s.file_bytes ? static_cast<double>(s.raw_bytes) / static_cast<double>(s.file_bytes) : 0.0,
        codec.starts_with("zstd") ? fmt::format("{} -{}", codec, s.build.value("zstd_level", 0))
                                  : codec,
        stored == std::string::npos ? order : order.substr(stored + 8), half == "none" ? "-" : half,
        dc ? (dc_captures ? "cap" : "yes") : "-", s.build.value("kernel", "?"),
        s.build.value("finished", "?"));
  }
  std::cout << fmt::format("{:>{}} {:>16} {:>11} {:>11} {:>7.1f}\n", "total", w, entries,
                           format_bytes(raw), format_bytes(file), ratio);
  // Segments a running or killed build has checkpointed: rerunning the build resumes them.
  for (const auto& [name, b] : m.building.items())
    std::cout << fmt::format(
        "building {}: checkpoint {} at {}, {} of {} positions decided, saved {}\n", name,
        b.value("checkpoint", "?"), b.value("at", "?"), b.value("decided", std::uint64_t{0}),
        b.value("entries", std::uint64_t{0}), b.value("saved", "?"));
  return kOk;
}

// `retra recompress`: finished segments rewritten with other block settings, no rebuild.
struct RecompressArgs {
  int level = 19;
  std::uint32_t block_size = 1u << 20;
  std::string codec = "auto";
  bool no_fill = false;
  std::string entry_order = "auto";
  std::string class_half = "auto";
  bool dont_care = false;
  std::string dont_care_moves = "captures";
  std::vector<std::string> segments;
};

int recompress_cmd(const Common& c, const RecompressArgs& a) {
  Progress progress;
  RecompressOptions opt;
  opt.zstd_level = a.level;
  opt.block_entries = a.block_size;
  opt.codec = format::parse_codec_choice(a.codec).value();  // CLI::IsMember checked the name
  opt.fill_rule_entries = !a.no_fill;
  opt.order = format::parse_order_choice(a.entry_order).value();  // CLI::IsMember checked it
  opt.class_half = format::parse_class_half_choice(a.class_half).value();  // likewise
  opt.dont_care = a.dont_care;
  opt.dont_care_moves = format::parse_dont_care_moves(a.dont_care_moves).value();  // IsMember
  opt.segments = a.segments;
  opt.threads = c.resolved_threads();
  opt.progress = &progress;
  auto rep = [&] {
    ProgressBar bar(progress, c.progress && !c.json);
    return recompress(c.db, opt);
  }();
  if (!rep) return report_error(c, rep.error());
  std::uint64_t before = 0, after = 0, entries = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& r : *rep) {
    before += r.bytes_before;
    after += r.bytes_after;
    entries += r.entries;
    segs.push_back({{"name", r.name},
                    {"entries", r.entries},
                    {"bytes_before", r.bytes_before},
                    {"bytes_after", r.bytes_after},
                    {"codec_before", r.codec_before},
                    {"codec_after", r.codec_after},
                    {"rule_entries", r.rule_entries},
                    {"entry_order_before", r.order_before},
                    {"entry_order_after", r.order_after},
                    {"class_half_before", r.class_half_before},
                    {"class_half_after", r.class_half_after},
                    {"dont_care", r.dont_care},
                    {"dont_care_entries", r.dont_care_entries},
                    {"dont_care_moves", r.dont_care_moves},
                    {"bits_per_entry", r.entries ? 8.0 * static_cast<double>(r.bytes_after) /
                                                       static_cast<double>(r.entries)
                                                 : 0.0},
                    {"seconds", r.seconds}});
  }
  const double bits = entries ? 8.0 * static_cast<double>(after) / static_cast<double>(entries) : 0;
  if (c.json) {
    print_json({{"ok", true},
                {"db", c.db.string()},
                {"zstd_level", a.level},
                {"block_entries", a.block_size},
                {"codec", a.codec},
                {"entry_order", a.entry_order},
                {"class_half", a.class_half},
                {"dont_care", a.dont_care},
                {"dont_care_moves", a.dont_care_moves},
                {"segments", segs},
                {"bytes_before", before},
                {"bytes_after", after},
                {"bits_per_entry", bits}});
    return kOk;
  }
  std::size_t w = 8;
  for (const auto& r : *rep) w = std::max(w, r.name.size());
  std::cout << fmt::format("{:>{}} {:>14} {:>11} {:>11} {:>9} {:>9} {:>8}\n", "segment", w,
                           "entries", "before", "after", "codec", "bits/pos", "seconds");
  for (const auto& r : *rep)
    std::cout << fmt::format(
        "{:>{}} {:>14} {:>11} {:>11} {:>9} {:>9.3f} {:>8.2f}\n", r.name, w, r.entries,
        format_bytes(r.bytes_before), format_bytes(r.bytes_after), r.codec_after,
        r.entries ? 8.0 * static_cast<double>(r.bytes_after) / static_cast<double>(r.entries) : 0.0,
        r.seconds);
  std::cout << fmt::format("recompressed {} segments: {} -> {} ({:.3f} bits per entry)\n",
                           rep->size(), format_bytes(before), format_bytes(after), bits);
  return kOk;
}

// `retra verify`: the generic verifier's report, in the game's nouns.
int verify_cmd(const Common& c, const Database& db, const GameModule& game, bool full,
               const std::vector<std::string>& only) {
  Progress progress;
  auto rep = [&] {
    ProgressBar bar(progress, c.progress && !c.json);
    return verify(db, {c.resolved_threads(), &progress, full, only});
  }();
  if (!rep) return report_error(c, rep.error());
  const Nouns& n = game.nouns();
  const std::string segment(n.segment), segments(n.segments), entries(n.entries);
  std::uint64_t positions = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : rep->segments) {
    positions += s.positions;
    segs.push_back(
        {{segment, s.name}, {entries, s.positions}, {"seconds", s.seconds}, {"check", s.check}});
  }
  if (c.json) {
    nlohmann::json j = {{"ok", rep->ok},          {"game", game.name()},
                        {"db", c.db.string()},    {"mode", full ? "full" : "one-pass"},
                        {segments, segs},         {entries, positions},
                        {"seconds", rep->seconds}};
    if (!only.empty()) {
      j["only"] = only;
      j["unchecked"] = rep->unchecked;
    }
    if (rep->failure) {
      const auto& f = *rep->failure;
      j["failure"] = {{segment, f.segment}, {"message", f.message}};
      if (f.block) j["failure"]["block"] = *f.block;
      if (f.index) j["failure"]["index"] = *f.index;
      if (!f.position.empty()) j["failure"]["position"] = f.position;
      if (f.stored) j["failure"]["stored"] = *f.stored;
      if (f.expected) j["failure"]["expected"] = *f.expected;
      if (f.wrong_positions) j["failure"]["wrong_positions"] = f.wrong_positions;
    }
    print_json(j);
  } else {
    for (const auto& s : rep->segments)
      std::cout << fmt::format("ok  {} {:<12} {:>15} {}  {:.2f} s  {}\n", segment, s.name,
                               grouped(s.positions), entries, s.seconds, s.check);
    if (rep->ok)
      std::cout << fmt::format(
          "verified {} {}, {} {}: every checksum and value correct{} ({:.2f} s)\n",
          rep->segments.size(), segments, grouped(positions), entries,
          full ? " (full: score values recomputed by the other kernel)" : "", rep->seconds);
    if (rep->ok && !only.empty())
      std::cout << fmt::format(
          "only the selected {}: {} supporting {} read, not checked (`--json` lists them)\n",
          segments, rep->unchecked.size(), segments);
  }
  if (!rep->ok) {
    std::cerr << "retra: verify FAILED: " << rep->failure->message << std::endl;
    return kVerifyFailed;
  }
  return kOk;
}

// `retra serve`: opens every database, binds, prints where it listens, serves until SIGINT or
// SIGTERM (a helper thread waits for them, so that the server stops cleanly between requests).
int serve_cmd_run(const Common& c, const std::vector<std::filesystem::path>& dirs,
                  const serve::ServeOptions& opt) {
  auto ex = serve::Explorer::open(dirs);
  if (!ex) return report_error(c, ex.error());
  serve::Server server(**ex, opt);
  auto port = server.bind();
  if (!port) return report_error(c, port.error());
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // every thread started from here on inherits it
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    server.stop();
  });
  const std::string url = fmt::format("http://{}:{}/", opt.bind, *port);
  nlohmann::json dbs = nlohmann::json::array();
  for (const auto& s : (*ex)->databases())
    dbs.push_back({{"name", s.name}, {"game", s.game->name()}, {"dir", s.dir.string()}});
  if (c.json)
    print_json({{"ok", true}, {"url", url}, {"port", *port}, {"databases", dbs}});
  else {
    std::cout << "retra serve: listening on " << url << " (Ctrl-C stops)\n";
    for (const auto& s : (*ex)->databases())
      std::cout << fmt::format("  {}explore?db={}  ({}, {})\n", url, s.name, s.game->name(),
                               s.dir.string());
    std::cout << std::flush;
  }
  auto r = server.run();
  // A failed listener stops here too: wake the waiter so that it can be joined.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  if (!r) return report_error(c, r.error());
  return kOk;
}

// Prints a module's report (JSON or text).
int print_report(const Common& c, const Result<Report>& r) {
  if (!r) return report_error(c, r.error());
  if (c.json)
    print_json(r->json);
  else
    std::cout << r->text;
  return kOk;
}

bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--json") == 0) return true;
  return false;
}

// --leaf-max's help and range: every game's, from its module.
std::string leaf_help(int& widest) {
  std::string units;
  widest = 0;
  for (const GameModule* m : modules()) {
    const SolverSpec& s = m->solver_spec();
    units += fmt::format("{}{}: {}..{} {}", units.empty() ? "" : "; ", m->name(), s.leaf_min,
                         s.leaf_max, s.units);
    widest = std::max(widest, s.leaf_max);
  }
  return "Use database values only for positions of at most this size (" + units +
         "); search the rest";
}

int run(int argc, char** argv, kernels::Cluster* cluster) {
  Common c;
  c.cluster = cluster;
  int exit = kOk;
  if (cluster) {
    // Under mpirun every rank runs the same command line; `build` divides its work among them,
    // and nothing else would.
    if (argc < 2 || std::strcmp(argv[1], "build") != 0) {
      if (cluster->rank() != 0) return kUsage;
      return report_error(c, Error(Errc::invalid_argument,
                                   "under mpirun only `retra build` runs (over every rank); run "
                                   "other commands without mpirun"));
    }
    // Rank 0 reports; the others say nothing on stdout (their errors go to stderr).
    if (cluster->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
      return report_error(c, Error(Errc::io, "cannot silence the output of a rank beside rank 0"));
  }
  CLI::App app{fmt::format("retra {}: build, verify and probe endgame databases by parallel "
                           "retrograde analysis",
                           kVersion),
               "retra"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);

  auto* build = app.add_subcommand("build", "Build databases of a game");
  build->require_subcommand(1);
  add_build_commands(*build, c, exit);

  auto* verify_sub =
      app.add_subcommand("verify", "Check every checksum and every value of a database");
  add_db_options(verify_sub, c, true);
  bool full = false;
  verify_sub->add_flag("--full", full,
                       "Also recompute score values with the other kernel: proves them the "
                       "game's values where the one-pass check cannot (docs/VERIFY.md)");
  std::vector<std::string> only;
  verify_sub
      ->add_option("--segments", only,
                   "Check only these segments (names as `info` lists them, a table's name for "
                   "all its segments, or shell globs, comma-separated); those they read are "
                   "read, not checked")
      ->delimiter(',');
  verify_sub->callback([&] {
    const GameModule* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = verify_cmd(c, *db, *g, full, only);
  });

  std::string position;
  auto* probe = app.add_subcommand("probe", "Value of a position and of each of its moves");
  add_db_options(probe, c, false);
  probe->add_option("position", position, "The position, in the game's notation")->required();
  probe->callback([&] {
    const GameModule* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = print_report(c, g->probe_report(*db, position));
  });

  std::optional<std::string> plot;
  auto* stats = app.add_subcommand("stats", "Value statistics per segment (and an SVG plot)");
  add_db_options(stats, c, false);
  stats->add_option("--plot", plot, "Write a plot of the value frequencies to FILE.svg");
  stats->callback([&] {
    const GameModule* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = print_report(c, g->stats_report(*db, plot));
  });

  auto* info_cmd = app.add_subcommand("info", "Manifest, sizes and compression of a database");
  add_db_options(info_cmd, c, false);
  info_cmd->callback([&] {
    const GameModule* g = nullptr;
    if (auto db = open_db(c, g, exit)) exit = info(c, *db);
  });

  RecompressArgs recompress_args;
  auto* recompress_sub = app.add_subcommand(
      "recompress", "Rewrite finished segments with other compression settings (no rebuild)");
  add_db_options(recompress_sub, c, true);
  recompress_sub->add_option("--level", recompress_args.level, "zstd level (default 19)")
      ->check(CLI::Range(1, 19));
  recompress_sub
      ->add_option("--block-size", recompress_args.block_size,
                   "Entries per block (default 1048576; smaller: faster cold probes)")
      ->check(CLI::Range(256, 1 << 26));
  recompress_sub
      ->add_option("--codec", recompress_args.codec,
                   "auto (default: the smaller of zstd and rans-o1 per segment), zstd, zstd-dict "
                   "or rans-o1")
      ->check(CLI::IsMember({"auto", "zstd", "zstd-dict", "rans-o1"}));
  recompress_sub->add_flag("--no-fill", recompress_args.no_fill,
                           "Store the entries the rules answer instead of filler");
  recompress_sub
      ->add_option("--entry-order", recompress_args.entry_order,
                   "auto (default: per segment, the order of the index's digits that compresses "
                   "best) or index")
      ->check(CLI::IsMember({"auto", "index"}));
  recompress_sub
      ->add_option("--class-half", recompress_args.class_half,
                   "auto (default: segments that can store one half as classes and do not, "
                   "the half that compresses better) or none; a class half is always kept")
      ->check(CLI::IsMember({"auto", "none"}));
  recompress_sub->add_flag(
      "--dont-care", recompress_args.dont_care,
      "Archive: store \"don't care\" entries where the game's probes find the value by "
      "searching converting moves (smaller files; probes search, verify restores them, builds "
      "refuse them)");
  recompress_sub
      ->add_option("--dont-care-moves", recompress_args.dont_care_moves,
                   "With --dont-care, the moves that decide the entries: captures (default: "
                   "probes search captures alone) or conversions (every converting move, captures "
                   "or not: smaller files, probes that search more)")
      ->check(CLI::IsMember({"captures", "conversions"}));
  recompress_sub
      ->add_option("--segment", recompress_args.segments,
                   "Only these segments; a name that is no segment selects the segments that "
                   "continue it (KRPvKR: KRPvKR_w2 and on; repeat or comma separate; default: "
                   "all)")
      ->delimiter(',');
  recompress_sub->callback([&] { exit = recompress_cmd(c, recompress_args); });

  SolveArgs solve_args;
  auto* solve =
      app.add_subcommand("solve", "Solve a position beyond the databases by proof-number search");
  add_db_options(solve, c, false);
  solve->add_option("position", solve_args.position, "The position, in the game's notation")
      ->required();
  solve->add_option("--algorithm", solve_args.algorithm,
                    "pn, pn-naive, pn-eval, pn2, ef-pn, ief-pn, ef-pn2, mc-pns, df-pn");
  solve->add_option("--max-nodes", solve_args.max_nodes, "Nodes stored at once (tree or table)");
  solve->add_option("--max-work", solve_args.max_work, "Expansions per threshold search");
  solve->add_option("--max-memory", solve_args.max_memory,
                    "Memory the tree or table may hold (512M, 2G, 10%); lowers --max-nodes");
  solve->add_option("--threshold", solve_args.threshold,
                    "Prove only: can the side to move reach at least this value (in the game's "
                    "terms: docs/CLI.md)?");
  int widest = 0;
  const std::string lhelp = leaf_help(widest);
  solve->add_option("--leaf-max", solve_args.leaf_max, lhelp)->check(CLI::Range(0, widest));
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

  std::vector<std::filesystem::path> serve_dbs;
  serve::ServeOptions serve_opt;
  auto* serve_cmd =
      app.add_subcommand("serve", "Explore databases in a web browser (and a JSON API), read-only");
  serve_cmd->add_option("--db", serve_dbs, "Database directory (repeat for several)")->required();
  serve_cmd->add_option("--port", serve_opt.port, "TCP port (0: any free one)")
      ->check(CLI::Range(0, 65535));
  serve_cmd->add_option("--bind", serve_opt.bind,
                        "Address to listen on (default 127.0.0.1: this machine only)");
  serve_cmd
      ->add_option("--threads", serve_opt.threads,
                   "Connection threads (default: 4 per hardware thread, at least 32)")
      ->check(CLI::Range(1, 4096));
  serve_cmd->add_flag("--json", c.json, "Print the address as JSON once listening");
  serve_cmd->callback([&] { exit = serve_cmd_run(c, serve_dbs, serve_opt); });

  auto* games_cmd = app.add_subcommand("games", "List the games retra can build");
  games_cmd->add_flag("--json", c.json, "Print the list as JSON");
  games_cmd->callback([&] {
    nlohmann::json j = nlohmann::json::array();
    for (const GameModule* g : modules()) {
      if (c.json)
        j.push_back({{"name", g->name()}, {"summary", g->summary()}});
      else
        std::cout << fmt::format("{:<10} {}\n", g->name(), g->summary());
    }
    if (c.json) print_json({{"ok", true}, {"games", j}});
  });

  // A game name CLI11 does not know would be reported as "arguments not expected"; say plainly
  // that the game is unknown instead.
  if (argc >= 3 && std::strcmp(argv[1], "build") == 0 && argv[2][0] != '-' &&
      !find_module(argv[2])) {
    c.json = wants_json(argc, argv);
    return report_error(
        c, Error(Errc::invalid_argument,
                 fmt::format("unknown game '{}'; known games: {}", argv[2], module_names())));
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
  // Past a file size limit (ulimit -f) a write then fails with EFBIG, reported like a full disk,
  // instead of the default SIGXFSZ killing the build without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  // Under mpirun: this process is one rank of a cluster build (MPI ends with the cluster). One
  // rank is this process alone: it builds as without mpirun.
  auto cluster = retra::cluster::MpiCluster::from_environment(&argc, &argv);
  if (!cluster) return retra::cli::report_error({}, cluster.error());
  const std::unique_ptr<retra::cluster::MpiCluster> mpi = std::move(*cluster);
  retra::kernels::Cluster* const ranks = mpi && mpi->size() > 1 ? mpi.get() : nullptr;
  // An exception on one rank of several: the others may wait in a collective for this one, so
  // the whole job ends (MPI_Abort), not this rank alone.
  auto stop = [&](int code) {
    if (ranks) mpi->abort(code);
    return code;
  };
  try {
    return retra::cli::run(argc, argv, ranks);
  } catch (const retra::Failure& f) {
    std::cerr << "retra: error: " << f.error().message() << std::endl;
    return stop(retra::cli::exit_code(f.error().code()));
  } catch (const std::bad_alloc&) {
    std::cerr << "retra: error: out of memory" << std::endl;
    return stop(retra::cli::kResource);
  } catch (const std::exception& e) {
    std::cerr << "retra: internal error: " << e.what() << std::endl;
    return stop(retra::cli::kInternal);
  }
}
