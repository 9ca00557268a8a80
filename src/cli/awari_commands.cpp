// `retra build awari`, and probe/verify/stats for Awari databases. Thin: parse, call the library,
// print. Thread safety: main thread only.
#include <charconv>
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "src/games/awari/database.hpp"
#include "src/io/file.hpp"
#include "src/memory.hpp"
#include "src/plot/plot.hpp"

namespace retra::cli {

namespace {

std::string grouped(std::uint64_t v) {
  const std::string d = std::to_string(v);
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) s += ',';
    s += d[i];
  }
  return s;
}

Result<std::pair<int, int>> parse_range(const std::string& text) {
  auto bad = [&] {
    return Error(Errc::invalid_argument,
                 fmt::format("--stones '{}': expected A-B or A with 0 <= A <= B <= 48", text));
  };
  const auto dash = text.find('-');
  auto num = [](std::string_view s, int& out) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  int a = 0, b = 0;
  if (dash == std::string::npos) {
    if (!num(text, a)) return bad();
    b = a;
  } else if (!num(std::string_view(text).substr(0, dash), a) ||
             !num(std::string_view(text).substr(dash + 1), b)) {
    return bad();
  }
  if (a < 0 || b > awari::kMaxStones || a > b) return bad();
  return std::pair{a, b};
}

nlohmann::json report_json(const awari::SegmentReport& r) {
  return {{"stones", r.stones},
          {"positions", r.positions},
          {"skipped", r.skipped},
          {"kernel", r.kernel},
          {"iterations", r.iterations},
          {"kernel_seconds", r.kernel_seconds},
          {"seconds", r.seconds},
          {"positions_per_second", r.positions_per_second()},
          {"positions_iterations_per_second", r.positions_iterations_per_second()},
          {"file_bytes", r.file_bytes},
          {"raw_bytes", r.raw_bytes},
          {"compression", r.compression()},
          {"mean", r.mean}};
}

// Column "iterations": sweeps for the forward kernel, frontier levels for the backward kernel.
std::string report_row(const awari::SegmentReport& r) {
  const double pi = r.positions_iterations_per_second();
  return fmt::format(
      "{:>6} {:>15} {:>10} {:>9.2f} {:>10.3g} {:>11} {:>11} {:>6.1f} {:>+7.3f}  {}{}", r.stones,
      grouped(r.positions), r.iterations, r.kernel_seconds, r.positions_per_second(),
      pi > 0 ? fmt::format("{:.3g}", pi) : "-", format_bytes(r.file_bytes), r.compression(), r.mean,
      r.kernel, r.skipped ? " (already built)" : "");
}

struct BuildArgs {
  std::string stones;
  std::string kernel = "backward";
  int zstd_level = 3;
  std::uint32_t block_size = format::kDefaultBlockEntries;
  bool force = false;
  std::string memory = "80%";
  bool low_memory = false;
  std::string tune;
};

int run_build(const Common& c, const BuildArgs& a) {
  auto range = parse_range(a.stones);
  if (!range) return report_error(c, range.error());
  awari::BuildOptions bo;
  bo.first = range->first;
  bo.last = range->second;
  bo.db = c.db;
  bo.threads = c.resolved_threads();
  bo.force = a.force;
  bo.kernel = a.kernel == "forward" ? awari::Kernel::forward : awari::Kernel::backward;
  bo.zstd_level = a.zstd_level;
  bo.block_entries = a.block_size;
  auto limit = parse_memory_size(a.memory);
  if (!limit) return report_error(c, limit.error());
  bo.memory_limit = *limit;
  bo.low_memory = a.low_memory;
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
    bar.println(p.summary());
    bar.println(fmt::format("{:>6} {:>15} {:>10} {:>9} {:>10} {:>11} {:>11} {:>6} {:>7}  {}",
                            "stones", "positions", "iterations", "seconds", "pos/s", "pos*iter/s",
                            "on disk", "ratio", "mean", "kernel"));
  };
  if (!c.json) {
    bar.println(fmt::format("building awari {}..{} stones into {} with {} thread{} (kernel {})",
                            bo.first, bo.last, bo.db.string(), bo.threads,
                            bo.threads == 1 ? "" : "s", a.kernel));
    bo.on_segment = [&](const awari::SegmentReport& r) { bar.println(report_row(r)); };
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto res = awari::build(bo);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!res) return report_error(c, res.error());
  std::uint64_t positions = 0, bytes = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& r : *res) {
    positions += r.positions;
    bytes += r.file_bytes;
    segs.push_back(report_json(r));
  }
  if (c.json) {
    print_json({{"ok", true},
                {"game", "awari"},
                {"db", c.db.string()},
                {"threads", bo.threads},
                {"memory_plan", plan_json},
                {"segments", segs},
                {"positions", positions},
                {"file_bytes", bytes},
                {"seconds", total},
                {"peak_rss_bytes", peak_rss_bytes()}});
  } else {
    bar.println(fmt::format("total: {} positions, {} on disk, {:.2f} s, peak RSS {}",
                            grouped(positions), format_bytes(bytes), total,
                            format_bytes(peak_rss_bytes())));
  }
  return kOk;
}

void add_build(CLI::App& build, Common& c, int& exit) {
  auto* sub = build.add_subcommand("awari",
                                   "Build Awari score databases (one segment per stone "
                                   "count; missing smaller counts are built first)");
  auto a = std::make_shared<BuildArgs>();
  sub->add_option("--stones", a->stones, "Stone counts to build: A-B or A (0..48)")->required();
  sub->add_option("--db", c.db, "Database directory (created if missing)")->required();
  sub->add_option("--threads", c.threads, "Worker threads (default: all hardware threads)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--kernel", a->kernel,
                  "Retrograde kernel: backward (default, fastest) or forward (van der Goot)")
      ->check(CLI::IsMember({"forward", "backward"}));
  sub->add_option("--zstd-level", a->zstd_level, "zstd compression level of the segments")
      ->check(CLI::Range(1, 19));
  sub->add_option("--block-size", a->block_size, "Entries per compressed block")
      ->check(CLI::Range(256, 1 << 26));
  sub->add_flag("--force", a->force, "Rebuild segments in the range that already exist");
  sub->add_option("--memory", a->memory,
                  "Memory the build may use: 12G, 512M, 80% of RAM (default); a build that "
                  "cannot fit is refused before it starts");
  sub->add_option("--tune", a->tune,
                  "Switch kernel optimizations off for measurements: huge_pages=0, prefetch=0, "
                  "simd_scan=0 (comma separated; docs/PERFORMANCE.md)");
  sub->add_flag("--low-memory", a->low_memory,
                "Read capture targets block-wise from disk instead of loading them (slower)");
  sub->add_flag("--json", c.json, "Print the report as JSON");
  sub->add_flag("!--no-progress", c.progress, "No progress bar");
  sub->callback([&c, &exit, a] { exit = run_build(c, *a); });
}

const char* kind_name(awari::MoveKind k) {
  switch (k) {
    case awari::MoveKind::empty_pit:
      return "empty";
    case awari::MoveKind::starves:
      return "illegal";
    case awari::MoveKind::quiet:
      return "quiet";
    case awari::MoveKind::capture:
      return "capture";
  }
  return "?";
}

int probe(const Common& c, const Database& db, const std::string& text) {
  auto board = awari::parse_board(text);
  if (!board) return report_error(c, board.error());
  auto r = awari::probe(db, *board);
  if (!r) return report_error(c, r.error());
  if (c.json) {
    nlohmann::json moves = nlohmann::json::array();
    for (const auto& m : r->moves) {
      nlohmann::json j = {{"pit", m.pit},
                          {"stones", r->board.pit[m.pit]},
                          {"kind", kind_name(m.kind)},
                          {"legal", m.value.has_value()},
                          {"captured", m.captured}};
      j["value"] = m.value ? nlohmann::json(*m.value) : nlohmann::json(nullptr);
      moves.push_back(j);
    }
    print_json({{"ok", true},
                {"game", "awari"},
                {"position", awari::format_board(r->board)},
                {"stones", r->stones},
                {"index", r->index},
                {"value", r->value},
                {"moves", moves},
                {"best", r->best},
                {"terminal",
                 r->terminal.empty() ? nlohmann::json(nullptr) : nlohmann::json(r->terminal)}});
    return kOk;
  }
  std::cout << fmt::format("position {}  ({} stones, index {})\nvalue    {:+d}\n",
                           awari::format_board(r->board), r->stones, r->index, r->value);
  if (!r->terminal.empty()) std::cout << "game over: " << r->terminal << "\n";
  std::cout << fmt::format("{:>4} {:>7}  {:<8} {:>8} {:>6}\n", "pit", "stones", "move", "captures",
                           "value");
  for (const auto& m : r->moves) {
    std::cout << fmt::format("{:>4} {:>7}  {:<8} {:>8} {:>6}\n", m.pit, r->board.pit[m.pit],
                             kind_name(m.kind), m.captured ? std::to_string(m.captured) : "",
                             m.value ? fmt::format("{:+d}", *m.value) : "-");
  }
  std::string best;
  for (int p : r->best) best += (best.empty() ? "" : " ") + std::to_string(p);
  std::cout << "best     " << (best.empty() ? "(no legal move)" : best) << "\n";
  return kOk;
}

int verify(const Common& c, const Database& db) {
  Progress progress;
  auto rep = [&] {
    ProgressBar bar(progress, c.progress && !c.json);
    return awari::verify(db, {c.resolved_threads(), &progress});
  }();
  if (!rep) return report_error(c, rep.error());
  std::uint64_t positions = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : rep->segments) {
    positions += s.positions;
    segs.push_back({{"segment", s.name}, {"positions", s.positions}, {"seconds", s.seconds}});
  }
  if (c.json) {
    nlohmann::json j = {{"ok", rep->ok},    {"game", "awari"},        {"db", c.db.string()},
                        {"segments", segs}, {"positions", positions}, {"seconds", rep->seconds}};
    if (rep->failure) {
      const auto& f = *rep->failure;
      j["failure"] = {{"segment", f.segment}, {"message", f.message}};
      if (f.block) j["failure"]["block"] = *f.block;
      if (f.index) j["failure"]["index"] = *f.index;
      if (!f.position.empty()) j["failure"]["position"] = f.position;
      if (f.stored) j["failure"]["stored"] = *f.stored;
      if (f.expected) j["failure"]["expected"] = *f.expected;
    }
    print_json(j);
  } else {
    for (const auto& s : rep->segments)
      std::cout << fmt::format("ok  segment {:>2}  {:>15} positions  {:.2f} s\n", s.name,
                               grouped(s.positions), s.seconds);
    if (rep->ok)
      std::cout << fmt::format(
          "verified {} segments, {} positions, every checksum and value "
          "correct ({:.2f} s)\n",
          rep->segments.size(), grouped(positions), rep->seconds);
  }
  if (!rep->ok) {
    std::cerr << "retra: verify FAILED: " << rep->failure->message << std::endl;
    return kVerifyFailed;
  }
  return kOk;
}

int stats(const Common& c, const Database& db, const std::optional<std::string>& plot_path) {
  nlohmann::json segs = nlohmann::json::array();
  std::vector<plot::Series> series;
  if (!c.json)
    std::cout << fmt::format("{:>6} {:>15} {:>8}  {}\n", "stones", "positions", "mean",
                             "value:count (non-zero counts)");
  for (const auto& rec : db.manifest().segments) {
    const auto& st = rec.stats;
    if (!st.contains("counts") || !st.contains("value_min") || !st.contains("mean"))
      return report_error(c, Error(Errc::corrupt, fmt::format("manifest has no statistics for "
                                                              "segment {}; rebuild it",
                                                              rec.name)));
    const int vmin = st["value_min"].get<int>();
    const auto counts = st["counts"].get<std::vector<std::uint64_t>>();
    nlohmann::json hist = nlohmann::json::object();
    std::string line;
    plot::Series s;
    s.label = rec.name + " stones";
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const int v = vmin + static_cast<int>(k);
      hist[std::to_string(v)] = counts[k];
      if (counts[k]) line += fmt::format(" {:+d}:{}", v, counts[k]);
      s.points.emplace_back(
          v, rec.entries ? 100.0 * static_cast<double>(counts[k]) / static_cast<double>(rec.entries)
                         : 0.0);
    }
    series.push_back(std::move(s));
    segs.push_back({{"segment", rec.name},
                    {"stones", std::stoi(rec.name)},
                    {"positions", rec.entries},
                    {"mean", st["mean"]},
                    {"histogram", hist}});
    if (!c.json)
      std::cout << fmt::format("{:>6} {:>15} {:>+8.3f} {}\n", rec.name, grouped(rec.entries),
                               st["mean"].get<double>(), line);
  }
  if (plot_path) {
    const std::string svg =
        plot::svg_lines(series, {"Frequencies of game values in the Awari databases",
                                 "game value (stones)", "frequency (% of positions)", 960, 600});
    if (auto w = io::write_file_atomic(*plot_path, svg); !w) return report_error(c, w.error());
    if (!c.json) std::cout << "plot written to " << *plot_path << "\n";
  }
  if (c.json) {
    nlohmann::json j = {{"ok", true}, {"game", "awari"}, {"segments", segs}};
    if (plot_path) j["plot"] = *plot_path;
    print_json(j);
  }
  return kOk;
}

}  // namespace

extern const GameCommands kAwariCommands{
    "awari",    "Awari (Olympiad rules): score databases, one segment per stone count",
    &add_build, &probe,
    &verify,    &stats};

}  // namespace retra::cli
