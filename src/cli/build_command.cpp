// `retra build <game>`: one subcommand per registered game, with the options every game shares,
// the ones its values allow (--kernel for score games, --metric for games that may store distances
// to conversion)
// and its module's own target options. Thin: parse, call build(), print the module's rows.
// Thread safety: main thread (build callbacks are serialized by the library).
#include <algorithm>
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "cli.hpp"
#include "src/build/build.hpp"
#include "src/memory.hpp"

namespace retra::cli {

namespace {

struct BuildArgs {
  OptionValues targets;  // the module's own options, by flag
  std::string kernel = "backward";
  std::string metric = "dtm";
  int jobs = 0;
  int zstd_level = 0;            // 0: the game's default (GameModule::write_defaults)
  std::uint32_t block_size = 0;  // likewise
  std::string codec = "auto";
  bool no_fill = false;
  std::string entry_order = "auto";
  std::string class_half = "auto";
  bool force = false;
  std::string memory;                   // --memory as given
  CLI::Option* memory_given = nullptr;  // its option: unused means the default, 80% of RAM
  std::string disk;                     // --disk as given (empty: what is free)
  bool low_memory = false;
  bool out_of_core = false;
  bool plan = false;
  double checkpoint_every = 60;
  std::uint64_t partitions = 0;
  std::string tune;
};

// `build --plan`: what each segment still to build needs, and how it would be built under the
// limit (dependencies in memory, read block-wise from disk, out of core, or not at all), and
// whether the disk holds the largest out-of-core segment's files. Exit 6 if any segment cannot
// be built within the limit, or its files within the free disk or --disk.
int print_plan(const Common& c, const MemoryPlan& p, const Nouns& nouns) {
  nlohmann::json segs = nlohmann::json::array();
  int in_memory = 0, block_wise = 0, out_of_core = 0, over = 0;
  std::size_t w = 7;
  for (const auto& s : p.segments) w = std::max(w, s.need.name.size());
  if (!c.json)
    std::cout << fmt::format("{:<{}} {:>11} {:>13} {:>11}  {}\n", nouns.segment, w, "kernel",
                             "dependencies", "total", "how");
  for (const auto& s : p.segments) {
    const std::string how = !s.fits ? "does not fit"
                            : s.out_of_core
                                ? fmt::format("out of core ({} of disk), dependencies {}",
                                              format_bytes(s.need.disk_bytes),
                                              s.dependencies_in_memory ? "in memory" : "block-wise")
                            : s.dependencies_in_memory ? "in memory"
                                                       : "dependencies block-wise from disk";
    (!s.fits                    ? over
     : s.out_of_core            ? out_of_core
     : s.dependencies_in_memory ? in_memory
                                : block_wise)++;
    segs.push_back({{"segment", s.need.name},
                    {"kernel_bytes", s.need.kernel_bytes},
                    {"dependency_bytes", s.need.dependency_bytes},
                    {"bytes", s.bytes()},
                    {"fits", s.fits},
                    {"dependencies_in_memory", s.dependencies_in_memory},
                    {"out_of_core", s.out_of_core},
                    {"disk_bytes", s.out_of_core ? s.need.disk_bytes : 0}});
    if (!c.json)
      std::cout << fmt::format("{:<{}} {:>11} {:>13} {:>11}  {}\n", s.need.name, w,
                               format_bytes(s.need.kernel_bytes),
                               format_bytes(s.need.dependency_bytes), format_bytes(s.bytes()), how);
  }
  if (c.json)
    print_json({{"ok", over == 0 && p.disk_fits()},
                {"plan",
                 {{"limit_bytes", p.limit},
                  {"limit_source", p.limit_source},
                  {"peak_bytes", p.peak_bytes},
                  {"peak_segment", p.peak_segment},
                  {"disk_bytes", p.disk_bytes},
                  {"disk_free_bytes", p.disk_free_bytes},
                  {"disk_limit_bytes", p.disk_limit_bytes},
                  {"disk_fits", p.disk_fits()},
                  {std::string(nouns.segments), segs}}}});
  else {
    std::cout << fmt::format(
        "limit {} ({}): {} {} with dependencies in memory, {} reading them block-wise from "
        "disk, {} out of core, {} that do not fit\n",
        format_bytes(p.limit), p.limit_source, in_memory, nouns.segments, block_wise, out_of_core,
        over);
    if (p.disk_bytes > 0)
      std::cout << fmt::format("disk: out of core takes up to {}; {} free{}: {}\n",
                               format_bytes(p.disk_bytes), format_bytes(p.disk_free_bytes),
                               p.disk_limit_bytes > 0
                                   ? fmt::format(", --disk {}", format_bytes(p.disk_limit_bytes))
                                   : "",
                               p.disk_fits() ? "fits" : "does not fit");
  }
  return over || !p.disk_fits() ? 6 : kOk;
}

int run_build(const Common& c, const GameModule& game, const BuildArgs& a) {
  auto targets = game.targets(a.targets);
  if (!targets) return report_error(c, targets.error());
  BuildRequest req;
  req.game = std::string(game.name());
  req.targets = *targets;
  req.db = c.db;
  req.threads = c.resolved_threads();
  req.jobs = a.jobs;
  req.force = a.force;
  auto kernel = parse_kernel(a.kernel);
  if (!kernel) return report_error(c, kernel.error());
  req.kernel = *kernel;
  if (a.metric != "dtm" && a.metric != "dtc")
    return report_error(c, Error(Errc::invalid_argument,
                                 fmt::format("--metric '{}': use dtm (distance to mate, falling "
                                             "back to dtc only where it overflows) or dtc",
                                             a.metric)));
  req.metric = a.metric == "dtc" ? Metric::dtc : Metric::automatic;
  req.zstd_level = a.zstd_level;
  req.block_entries = a.block_size;
  req.codec = format::parse_codec_choice(a.codec).value();  // CLI::IsMember checked the name
  req.fill_rule_entries = !a.no_fill;
  req.order = format::parse_order_choice(a.entry_order).value();  // CLI::IsMember checked it
  req.class_half = format::parse_class_half_choice(a.class_half).value();  // likewise
  // Unset: 0, the default (80% of RAM), which the plan then names as such.
  if (a.memory_given && a.memory_given->count() > 0) {
    auto limit = parse_memory_size(a.memory);
    if (!limit) return report_error(c, limit.error());
    req.memory_limit = *limit;
  }
  if (!a.disk.empty()) {
    auto limit = parse_disk_size(a.disk);
    if (!limit) return report_error(c, limit.error());
    req.disk_limit = *limit;
  }
  req.low_memory = a.low_memory;
  req.out_of_core = a.out_of_core;
  req.checkpoint_seconds = a.checkpoint_every;
  req.partitions = a.partitions;
  req.cluster = c.cluster;
  const int ranks = c.cluster ? c.cluster->size() : 1;
  if (!a.tune.empty()) {
    auto t = Tuning::parse(a.tune);
    if (!t) return report_error(c, t.error());
    req.tuning = *t;
  }
  Progress progress;
  ProgressBar bar(progress, c.progress && !c.json && (!c.cluster || c.cluster->rank() == 0));
  req.progress = &progress;
  nlohmann::json plan_json;
  const Nouns& nouns = game.nouns();
  if (a.plan) {
    req.plan_only = true;
    int code = kOk;
    req.on_plan = [&](const MemoryPlan& p) { code = print_plan(c, p, game.nouns()); };
    auto res = build(req);
    if (!res) return report_error(c, res.error());
    return code;
  }
  req.on_plan = [&](const MemoryPlan& p) {
    plan_json = {{"peak_bytes", p.peak_bytes},
                 {"peak_segment", p.peak_segment},
                 {"limit_bytes", p.limit},
                 {"disk_bytes", p.disk_bytes}};
    if (c.json) return;
    bar.println(
        fmt::format("building {} {} {} and the {} they need into {} with {} thread{}{} "
                    "(kernel {})",
                    game.name(), req.targets.size(), nouns.segments, nouns.segments,
                    req.db.string(), req.threads, req.threads == 1 ? "" : "s",
                    ranks > 1 ? fmt::format(" on each of {} MPI ranks", ranks) : "", a.kernel));
    bar.println(p.summary());
    bar.println(game.report_header());
  };
  if (!c.json) req.on_segment = [&](const SegmentReport& r) { bar.println(game.report_row(r)); };
  // Notes (a resumed segment, a checkpoint not used) go to stderr under --json: stdout is JSON.
  req.on_note = [&](const std::string& line) {
    if (c.cluster && c.cluster->rank() != 0) return;  // rank 0 says it for all
    if (c.json)
      std::cerr << "note: " << line << std::endl;
    else
      bar.println("note: " + line);
  };
  const auto t0 = std::chrono::steady_clock::now();
  auto res = build(req);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!res) return report_error(c, res.error());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : *res) {
    auto e = game.report_json(r);
    if (r.kernel == "backward" && !r.skipped) {
      e["checkpoints"] = r.checkpoints;
      if (r.resumed_level >= 0)
        e["resumed"] = {
            {"at", r.resumed_at}, {"level", r.resumed_level}, {"decided", r.resumed_decided}};
    }
    list.push_back(std::move(e));
  }
  nlohmann::json j = {{"ok", true},
                      {"game", game.name()},
                      {"db", c.db.string()},
                      {"threads", req.threads},
                      {"ranks", ranks},
                      {"memory_plan", plan_json},
                      {std::string(nouns.segments), list}};
  std::string line;
  game.report_totals(*res, j, line);
  j["seconds"] = total;
  j["peak_rss_bytes"] = peak_rss_bytes();
  if (c.json)
    print_json(j);
  else
    bar.println(fmt::format("total: {}, {:.2f} s, peak RSS {}", line, total,
                            format_bytes(peak_rss_bytes())));
  return kOk;
}

void add_build(CLI::App& build, const GameModule& game, Common& c, int& exit) {
  auto* sub = build.add_subcommand(std::string(game.name()), std::string(game.summary()));
  auto a = std::make_shared<BuildArgs>();
  for (const OptionSpec& spec : game.target_options()) {
    auto* opt = sub->add_option(std::string(spec.flag), a->targets[std::string(spec.flag)],
                                std::string(spec.help));
    if (spec.list)
      opt->delimiter(',');
    else
      opt->expected(1);
    if (spec.required) opt->required();
  }
  sub->add_option("--db", c.db, "Database directory (created if missing)")->required();
  sub->add_option("--threads", c.threads, "Worker threads (default: all hardware threads)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--jobs", a->jobs,
                  "Segments built at once (default: up to --threads; at most the hardware threads)")
      ->check(CLI::Range(1, 4096));
  if (game.value_kind() == ValueKind::score)
    sub->add_option("--kernel", a->kernel,
                    "Retrograde kernel: backward (default, fastest) or forward (van der Goot)")
        ->check(CLI::IsMember({"forward", "backward"}));
  if (game.dtc_metric())
    sub->add_option("--metric", a->metric,
                    "dtm (default; dtc only where a distance exceeds 254 plies) or dtc "
                    "(distance to conversion everywhere)");
  const format::WriteDefaults defaults = game.write_defaults();
  sub->add_option(
         "--zstd-level", a->zstd_level,
         fmt::format("zstd compression level of the segments (default {})", defaults.zstd_level))
      ->check(CLI::Range(1, 19));
  sub->add_option("--block-size", a->block_size,
                  fmt::format("Entries per compressed block (default {}; larger: smaller files, "
                              "slower cold probes)",
                              defaults.block_entries))
      ->check(CLI::Range(256, 1 << 26));
  sub->add_option("--codec", a->codec,
                  "Block codec: auto (default: the smaller of zstd and rans-o1 per segment), "
                  "zstd, zstd-dict or rans-o1 (docs/FORMAT.md)")
      ->check(CLI::IsMember({"auto", "zstd", "zstd-dict", "rans-o1"}));
  sub->add_flag("--no-fill", a->no_fill,
                "Store the entries the rules answer (holes, king captures) instead of filler");
  sub->add_option("--entry-order", a->entry_order,
                  "auto (default: per segment, the order of the index's digits that compresses "
                  "best) or index (docs/FORMAT.md)")
      ->check(CLI::IsMember({"auto", "index"}));
  sub->add_option("--class-half", a->class_half,
                  "Games that allow it store one half of a segment (one side to move) as "
                  "classes, its distances found by a one-move search: auto (default: the half "
                  "that compresses better), lower, upper, or none (docs/FORMAT.md)")
      ->check(CLI::IsMember({"auto", "none", "lower", "upper"}));
  sub->add_flag("--force", a->force, "Rebuild the named segments if they exist");
  a->memory_given =
      sub->add_option("--memory", a->memory,
                      "Memory the build may use: 12G, 512M, 80% of RAM (default); a build that "
                      "cannot fit is refused before it starts");
  sub->add_option("--disk", a->disk,
                  "Disk an out-of-core segment's files may take in DIR: 20G, 512M (default: "
                  "what is free there); a segment that needs more is refused before the build "
                  "starts, and a level whose updates would spill more goes in rounds");
  sub->add_flag("--plan", a->plan,
                "Only print the memory plan: what each segment needs and whether it fits "
                "--memory (in memory, out of core, dependencies from disk, or not at all) and "
                "the disk an out-of-core segment needs; builds nothing");
  sub->add_flag("--low-memory", a->low_memory,
                "Read finished segments block-wise from disk instead of loading them (slower)");
  sub->add_flag("--out-of-core", a->out_of_core,
                "Backward kernel: keep every segment's arrays in files in DIR, partitions "
                "resident by turns, even where they would fit in memory (slower; --memory "
                "already chooses out of core where they do not fit)");
  sub->add_option("--checkpoint-every", a->checkpoint_every,
                  "Backward kernel: save a segment's state at level boundaries at most every "
                  "SECONDS (default 60; 0: never), so that a killed build resumes there when "
                  "run again")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            double x = -1;
            try {
              x = std::stod(v);
            } catch (const std::exception&) {
            }
            return x >= 0 ? "" : "'" + v + "' is not a number of seconds >= 0";
          },
          "SECONDS"));
  sub->add_option("--partitions", a->partitions,
                  "Backward kernel: split each segment into N owner-computes partitions that "
                  "exchange update batches (0: none; the bytes are the same for any N)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 20));
  sub->add_option(
      "--tune", a->tune,
      "Switch kernel optimizations off for measurements: huge_pages=0, prefetch=0, "
      "simd_scan=0, pack_frontier=0, graph=0, own_kernel=0 (a game's own kernel: "
      "the generic kernels only), copy_values=0 (out of core: the writer reads the "
      "values' file mapping), frontier_in_place=0 (frontiers gathered from the threads' "
      "vectors); comma separated; docs/PERFORMANCE.md");
  sub->add_flag("--json", c.json, "Print the report as JSON");
  sub->add_flag("!--no-progress", c.progress, "No progress bar");
  sub->callback([&c, &exit, &game, a] { exit = run_build(c, game, *a); });
}

}  // namespace

void add_build_commands(CLI::App& build, Common& common, int& exit) {
  for (const GameModule* m : modules()) add_build(build, *m, common, exit);
}

}  // namespace retra::cli
