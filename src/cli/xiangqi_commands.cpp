// `retra build xiangqi`, and probe/verify/stats for xiangqi databases. Thin: parse, call the
// library, print. Thread safety: main thread (build callbacks are serialized by the library).
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "src/games/xiangqi/database.hpp"
#include "src/memory.hpp"

namespace retra::cli {

namespace {

using namespace retra::xiangqi;

struct BuildArgs {
  std::vector<std::string> endgames;
  std::string set;
  int jobs = 0;
  int zstd_level = 3;
  std::uint32_t block_size = format::kDefaultBlockEntries;
  bool force = false;
  std::string memory = "80%";
  std::string tune;
  std::string metric = "dtm";
};

nlohmann::json report_json(const EndgameReport& r) {
  return {{"endgame", r.name},
          {"index_size", r.index_size},
          {"paper_index_size", r.paper_index_size},
          {"scheme", r.scheme},
          {"skipped", r.skipped},
          {"metric", r.metric},
          {"levels", r.levels},
          {"threads", r.threads},
          {"kernel_seconds", r.kernel_seconds},
          {"seconds", r.seconds},
          {"rss_bytes", r.rss_bytes},
          {"file_bytes", r.file_bytes},
          {"raw_bytes", r.raw_bytes},
          {"stats", r.stats}};
}

std::string report_row(const EndgameReport& r) {
  const auto& st = r.stats;
  auto pair = [&](const char* k) {
    return st.contains(k)
               ? fmt::format("{}/{}", st[k][0].get<std::uint64_t>(), st[k][1].get<std::uint64_t>())
               : std::string("-");
  };
  return fmt::format("{:<12} {:>11} {:>11} {:>11} {:>17} {:>5} {:>8.2f} {:>10} {:>10}  {}{}",
                     r.name, r.index_size, r.paper_index_size, st.value("valid_positions", 0ull),
                     pair("draws"),
                     st.contains("max_dtm_plies") && !st["max_dtm_plies"].is_null()
                         ? std::to_string(st["max_dtm_plies"].get<int>())
                         : "-",
                     r.seconds, r.rss_bytes ? format_bytes(r.rss_bytes) : std::string("-"),
                     format_bytes(r.file_bytes), r.metric, r.skipped ? " (already built)" : "");
}

int run_build(const Common& c, const BuildArgs& a) {
  BuildOptions bo;
  if (!a.set.empty()) {
    if (a.set != "fang151")
      return report_error(c, Error(Errc::invalid_argument,
                                   fmt::format("--set '{}': the known set is fang151", a.set)));
    bo.endgames = fang151();
  }
  for (const auto& e : a.endgames) bo.endgames.push_back(e);
  if (bo.endgames.empty())
    return report_error(c, Error(Errc::invalid_argument,
                                 "name the endgames: --endgame KRKGGMM (repeatable, or comma "
                                 "separated) or --set fang151"));
  bo.db = c.db;
  bo.threads = c.resolved_threads();
  bo.jobs = a.jobs;
  bo.force = a.force;
  bo.zstd_level = a.zstd_level;
  if (a.metric != "dtm" && a.metric != "dtc")
    return report_error(c, Error(Errc::invalid_argument,
                                 fmt::format("--metric '{}': use dtm (distance to mate, falling "
                                             "back to dtc only where it overflows) or dtc",
                                             a.metric)));
  bo.dtc = a.metric == "dtc";
  bo.block_entries = a.block_size;
  auto limit = parse_memory_size(a.memory);
  if (!limit) return report_error(c, limit.error());
  bo.memory_limit = *limit;
  if (!a.tune.empty()) {
    auto t = Tuning::parse(a.tune);
    if (!t) return report_error(c, t.error());
    bo.tuning = *t;
  }
  Progress progress;
  ProgressBar bar(progress, c.progress && !c.json);
  bo.progress = &progress;
  nlohmann::json plan_json;
  bo.on_plan = [&](const MemoryPlan& p) {
    plan_json = {
        {"peak_bytes", p.peak_bytes}, {"peak_segment", p.peak_segment}, {"limit_bytes", p.limit}};
    if (c.json) return;
    bar.println(
        fmt::format("building {} xiangqi endgame(s) and their supporting endgames into {} "
                    "with {} thread(s)",
                    bo.endgames.size(), bo.db.string(), bo.threads));
    bar.println(p.summary());
    bar.println(fmt::format("{:<12} {:>11} {:>11} {:>11} {:>17} {:>5} {:>8} {:>10} {:>10}  {}",
                            "endgame", "index", "paper", "valid", "draws r/b", "dtm", "seconds",
                            "RSS", "on disk", "metric"));
  };
  if (!c.json) bo.on_endgame = [&](const EndgameReport& r) { bar.println(report_row(r)); };
  const auto t0 = std::chrono::steady_clock::now();
  auto res = build(bo);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!res) return report_error(c, res.error());
  std::uint64_t index = 0, paper = 0, bytes = 0;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : *res) {
    index += r.index_size;
    paper += r.paper_index_size;
    bytes += r.file_bytes;
    list.push_back(report_json(r));
  }
  if (c.json) {
    print_json({{"ok", true},
                {"game", "xiangqi"},
                {"db", c.db.string()},
                {"threads", bo.threads},
                {"memory_plan", plan_json},
                {"endgames", list},
                {"index_size", index},
                {"paper_index_size", paper},
                {"file_bytes", bytes},
                {"seconds", total},
                {"peak_rss_bytes", peak_rss_bytes()}});
  } else {
    bar.println(fmt::format(
        "total: {} endgames, index {} entries per side (paper's scheme: {}), "
        "{} on disk, {:.2f} s, peak RSS {}",
        res->size(), index, paper, format_bytes(bytes), total, format_bytes(peak_rss_bytes())));
  }
  return kOk;
}

void add_build(CLI::App& build_cmd, Common& c, int& exit) {
  auto* sub = build_cmd.add_subcommand(
      "xiangqi", "Build Chinese chess endgames (distance to mate) with their supporting endgames");
  auto a = std::make_shared<BuildArgs>();
  sub->add_option("--endgame", a->endgames, "Endgame names, e.g. KRKGGMM or KNP(9)KGM")
      ->delimiter(',');
  sub->add_option("--set", a->set, "A named set of endgames: fang151 (the paper's 151)");
  sub->add_option("--db", c.db, "Database directory (created if missing)")->required();
  sub->add_option("--threads", c.threads, "Worker threads (default: all hardware threads)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--jobs", a->jobs, "Endgames built at once (default: up to --threads)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--zstd-level", a->zstd_level, "zstd compression level of the segments")
      ->check(CLI::Range(1, 19));
  sub->add_option("--block-size", a->block_size, "Entries per compressed block")
      ->check(CLI::Range(256, 1 << 26));
  sub->add_flag("--force", a->force, "Rebuild the named endgames if they exist");
  sub->add_option("--metric", a->metric,
                  "dtm (default; dtc only where a distance exceeds 254 plies) or dtc "
                  "(distance to conversion everywhere)");
  sub->add_option("--memory", a->memory, "Memory the build may use: 12G, 512M, 80% (default)");
  sub->add_option("--tune", a->tune, "Switch kernel optimizations off (docs/PERFORMANCE.md)");
  sub->add_flag("--json", c.json, "Print the report as JSON");
  sub->add_flag("!--no-progress", c.progress, "No progress bar");
  sub->callback([&c, &exit, a] { exit = run_build(c, *a); });
}

int probe_cmd(const Common& c, const Database& db, const std::string& fen) {
  auto r = probe(db, fen);
  if (!r) return report_error(c, r.error());
  if (c.json) {
    nlohmann::json moves = nlohmann::json::array();
    for (const auto& m : r->moves)
      moves.push_back({{"move", m.move},
                       {"capture", m.capture},
                       {"value", m.value},
                       {"meaning", describe(m.value, r->metric)}});
    print_json({{"ok", true},
                {"game", "xiangqi"},
                {"fen", r->fen},
                {"endgame", r->endgame},
                {"side_to_move", r->side == red ? "red" : "black"},
                {"index", r->index},
                {"value", r->value},
                {"metric", r->metric},
                {"meaning", describe(r->value, r->metric)},
                {"distance_plies", r->value >= 2 ? nlohmann::json(r->value - 2) : nlohmann::json()},
                {"moves", moves},
                {"best", r->best}});
    return kOk;
  }
  std::cout << fmt::format("position {}\nendgame  {} ({} to move, index {})\nvalue    {} ({})\n",
                           r->fen, r->endgame, r->side == red ? "red" : "black", r->index, r->value,
                           describe(r->value, r->metric));
  for (const auto& m : r->moves)
    std::cout << fmt::format("  {:<10} {:>4}  {}\n", m.move, m.value, describe(m.value, r->metric));
  std::string best;
  for (const auto& b : r->best) best += (best.empty() ? "" : " ") + b;
  std::cout << "best     " << (best.empty() ? "-" : best) << "\n";
  return kOk;
}

int verify_cmd(const Common& c, const Database& db) {
  Progress progress;
  auto rep = [&] {
    ProgressBar bar(progress, c.progress && !c.json);
    return verify(db, {c.resolved_threads(), &progress});
  }();
  if (!rep) return report_error(c, rep.error());
  std::uint64_t positions = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : rep->segments) {
    positions += s.positions;
    segs.push_back({{"endgame", s.name}, {"entries", s.positions}, {"seconds", s.seconds}});
  }
  if (c.json) {
    nlohmann::json j = {{"ok", rep->ok},    {"game", "xiangqi"},    {"db", c.db.string()},
                        {"endgames", segs}, {"entries", positions}, {"seconds", rep->seconds}};
    if (rep->failure) {
      const auto& f = *rep->failure;
      j["failure"] = {{"endgame", f.segment}, {"message", f.message}};
      if (f.block) j["failure"]["block"] = *f.block;
      if (f.index) j["failure"]["index"] = *f.index;
      if (!f.position.empty()) j["failure"]["position"] = f.position;
    }
    print_json(j);
  } else {
    for (const auto& s : rep->segments)
      std::cout << fmt::format("ok  {:<12} {:>11} entries  {:.2f} s\n", s.name, s.positions,
                               s.seconds);
    if (rep->ok)
      std::cout << fmt::format(
          "verified {} endgames, {} entries: every checksum and value "
          "correct ({:.2f} s)\n",
          rep->segments.size(), positions, rep->seconds);
  }
  if (!rep->ok) {
    std::cerr << "retra: verify FAILED: " << rep->failure->message << std::endl;
    return kVerifyFailed;
  }
  return kOk;
}

int stats_cmd(const Common& c, const Database& db, const std::optional<std::string>& plot) {
  if (plot)
    return report_error(c, Error(Errc::invalid_argument,
                                 "--plot draws Awari value frequencies; xiangqi statistics are "
                                 "tables (use --json for all of them)"));
  nlohmann::json all = nlohmann::json::object();
  if (!c.json)
    std::cout << fmt::format("{:<12} {:>11} {:>11} {:>9} {:>15} {:>15} {:>15} {:>15} {:>5}\n",
                             "endgame", "index", "valid", "kfk", "okic r/b", "checkmate r/b",
                             "stalemate r/b", "draws r/b", "dtm");
  for (const auto& rec : db.manifest().segments) {
    const auto& st = rec.stats;
    if (!st.contains("valid_positions"))
      return report_error(c, Error(Errc::corrupt, fmt::format("manifest has no statistics for "
                                                              "endgame {}; rebuild it",
                                                              rec.name)));
    all[rec.name] = st;
    if (c.json) continue;
    auto pair = [&](const char* k) {
      return fmt::format("{}/{}", st[k][0].get<std::uint64_t>(), st[k][1].get<std::uint64_t>());
    };
    std::cout << fmt::format(
        "{:<12} {:>11} {:>11} {:>9} {:>15} {:>15} {:>15} {:>15} {:>5}\n", rec.name,
        st["index_size"].get<std::uint64_t>(), st["valid_positions"].get<std::uint64_t>(),
        st["kfk"].get<std::uint64_t>(), pair("okic"), pair("checkmate"), pair("stalemate"),
        pair("draws"),
        st["max_dtm_plies"].is_null() ? std::string("-")
                                      : std::to_string(st["max_dtm_plies"].get<int>()));
  }
  if (c.json) print_json({{"ok", true}, {"game", "xiangqi"}, {"endgames", all}});
  return kOk;
}

}  // namespace

extern const GameCommands kXiangqiCommands{
    "xiangqi",
    "Chinese chess endgames with one side armed: distance to mate (Fang's Table 1), hierarchies "
    "of supporting endgames, the paper's 151",
    &add_build,
    &probe_cmd,
    &verify_cmd,
    &stats_cmd};

}  // namespace retra::cli
