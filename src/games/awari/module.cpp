// The Awari game module (module.hpp): segment names, statistics, reports, the probe locator and
// what `retra probe`, `stats` and `solve` print; and the module table itself, where the generic
// drivers are compiled for Awari. Thread safety: reentrant.
#include "src/games/awari/module.hpp"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/io/file.hpp"
#include "src/memory_plan.hpp"
#include "src/module/module_of.hpp"
#include "src/plot/plot.hpp"
#include "src/probe/prober_impl.hpp"
#include "src/solve/report.hpp"
#include "src/util/text.hpp"

namespace retra::awari {

namespace {

bool stone_count(std::string_view name, int& n) {
  if (name.empty() || name.size() > 2) return false;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  return ec == std::errc() && p == name.data() + name.size() && n >= 0 && n <= kMaxStones &&
         std::to_string(n) == name;
}

Result<std::pair<int, int>> parse_range(const std::string& text) {
  auto bad = [&] {
    return Error(
        Errc::invalid_argument,
        fmt::format("--stones '{}': expected A-B or A with 0 <= A <= B <= {}", text, kMaxStones));
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
  if (a < 0 || b > kMaxStones || a > b) return bad();
  return std::pair{a, b};
}

constexpr OptionSpec kTargetOptions[] = {
    {"--stones", "Stone counts to build: A-B or A (0..48); missing smaller ones are built too",
     false, true},
};

}  // namespace

std::vector<std::string> stone_range(int a, int b) {
  std::vector<std::string> names;
  for (int n = a; n <= b; ++n) names.push_back(std::to_string(n));
  return names;
}

// ---- segments --------------------------------------------------------------------------------

std::span<const OptionSpec> Module::target_options() { return kTargetOptions; }

Result<std::vector<std::string>> Module::targets(const OptionValues& values) {
  auto it = values.find("--stones");
  if (it == values.end() || it->second.empty())
    return Error(Errc::invalid_argument, "--stones is required");
  auto range = parse_range(it->second.front());
  if (!range) return std::move(range).error();
  return stone_range(range->first, range->second);
}

Result<Selection<Game>> Module::select(std::span<const std::string> names) {
  Selection<Game> sel;
  sel.game = std::make_shared<const Game>();
  int last = -1;
  for (const auto& name : names) {
    int n = 0;
    if (!stone_count(name, n))
      return Error(Errc::invalid_argument,
                   fmt::format("'{}' is not an Awari segment: segments are stone counts 0..{}",
                               name, kMaxStones));
    sel.named.push_back(n);
    last = std::max(last, n);
  }
  // Captures take 2..15 stones, and every smaller count is built with them (a database holds a
  // contiguous range 0..n, which is what the solver's leaves rely on).
  for (int n = 0; n <= last; ++n) sel.order.push_back(n);
  return sel;
}

bool Module::segment_less(const std::string& a, const std::string& b) {
  return std::stoi(a) < std::stoi(b);
}

// ---- statistics ------------------------------------------------------------------------------

Module::Stats Module::statistics(const Game&, int stones, std::span<const std::uint8_t> values,
                                 std::span<const format::FarValue> far, int threads) {
  assert(far.empty());  // scores fit a byte
  (void)far;
  Stats st;
  st.positions = values.size();
  st.value_min = -stones;
  st.counts.assign(2 * static_cast<std::size_t>(stones) + 1, 0);
  const std::size_t n = values.size(), bins = st.counts.size();
  std::mutex mu;  // not `omp critical`: see kernels/backward.hpp
#pragma omp parallel num_threads(std::max(1, threads)) if (n > (1u << 16))
  {
    std::vector<std::uint64_t> local(bins, 0);
#pragma omp for schedule(static) nowait
    for (std::size_t i = 0; i < n; ++i)
      ++local[static_cast<std::size_t>(static_cast<std::int8_t>(values[i]) + stones)];
    std::lock_guard lock(mu);
    for (std::size_t k = 0; k < bins; ++k) st.counts[k] += local[k];
  }
  double sum = 0;
  for (std::size_t k = 0; k < bins; ++k)
    sum += static_cast<double>(st.counts[k]) * (static_cast<double>(k) - stones);
  st.mean = n ? sum / static_cast<double>(n) : 0.0;
  return st;
}

nlohmann::json Module::stats_json(const Stats& s) {
  return {{"positions", s.positions},
          {"value_min", s.value_min},
          {"counts", s.counts},
          {"mean", s.mean}};
}

Result<Module::Stats> Module::stats_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("counts") || !j.contains("value_min") || !j.contains("mean") ||
      !j["counts"].is_array() || !j["value_min"].is_number_integer() || !j["mean"].is_number())
    return Error(Errc::corrupt, "expected positions, value_min, counts and mean");
  Stats s;
  s.positions = j.value("positions", std::uint64_t{0});
  s.value_min = j["value_min"].get<int>();
  for (const auto& c : j["counts"]) {
    if (!c.is_number_unsigned()) return Error(Errc::corrupt, "counts must be non-negative");
    s.counts.push_back(c.get<std::uint64_t>());
  }
  s.mean = j["mean"].get<double>();
  return s;
}

std::optional<std::string> Module::stats_mismatch(const Stats& on_disk, const Stats& recorded) {
  if (on_disk.value_min != recorded.value_min) return "value_min";
  if (on_disk.counts != recorded.counts) return "counts";
  return std::nullopt;
}

// ---- build report ----------------------------------------------------------------------------

// Column "iterations": sweeps for the forward kernel, frontier levels for the backward kernel.
std::string Module::report_header() {
  return fmt::format("{:>6} {:>15} {:>10} {:>9} {:>10} {:>11} {:>11} {:>6} {:>7}  {}", "stones",
                     "positions", "iterations", "seconds", "pos/s", "pos*iter/s", "on disk",
                     "ratio", "mean", "kernel");
}

std::string Module::report_row(const SegmentReport& r) {
  const double pi = r.positions_iterations_per_second();
  return fmt::format(
      "{:>6} {:>15} {:>10} {:>9.2f} {:>10.3g} {:>11} {:>11} {:>6.1f} {:>+7.3f}  {}{}", r.name,
      grouped(r.entries), r.iterations, r.kernel_seconds, r.positions_per_second(),
      pi > 0 ? fmt::format("{:.3g}", pi) : "-", format_bytes(r.file_bytes), r.compression(),
      r.stats.value("mean", 0.0), r.kernel, r.skipped ? " (already built)" : "");
}

nlohmann::json Module::report_json(const SegmentReport& r) {
  return {{"stones", std::stoi(r.name)},
          {"positions", r.entries},
          {"skipped", r.skipped},
          {"kernel", r.kernel},
          {"iterations", r.iterations},
          {"threads", r.threads},
          {"kernel_seconds", r.kernel_seconds},
          {"seconds", r.seconds},
          {"positions_per_second", r.positions_per_second()},
          {"positions_iterations_per_second", r.positions_iterations_per_second()},
          {"rss_bytes", r.rss_bytes},
          {"file_bytes", r.file_bytes},
          {"raw_bytes", r.raw_bytes},
          {"compression", r.compression()},
          {"mean", r.stats.value("mean", 0.0)}};
}

void Module::report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                           std::string& line) {
  std::uint64_t positions = 0, bytes = 0;
  for (const auto& r : reports) {
    positions += r.entries;
    bytes += r.file_bytes;
  }
  json["positions"] = positions;
  json["file_bytes"] = bytes;
  line = fmt::format("{} positions, {} on disk", grouped(positions), format_bytes(bytes));
}

// ---- probe -----------------------------------------------------------------------------------

Locator::Locator(std::span<const std::string> segments) {
  slot_.fill(-1);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    int n = 0;
    if (stone_count(segments[i], n)) slot_[static_cast<std::size_t>(n)] = static_cast<int>(i);
  }
}

probe::Value Locator::locate(const std::array<int, 12>& pits, probe::Location* where) const {
  Board b;
  int n = 0;
  for (int i = 0; i < 12; ++i) {
    if (pits[i] < 0 || pits[i] > kMaxStones)
      return probe::detail::failure(
          probe::Status::invalid_argument,
          fmt::format("pit {} holds {} stones; a pit holds 0..{}", i, pits[i], kMaxStones));
    n += pits[i];
    b.pit[i] = static_cast<std::uint8_t>(pits[i]);
  }
  if (n > kMaxStones)
    return probe::detail::failure(
        probe::Status::invalid_argument,
        fmt::format("{} stones in total; an Awari board holds at most {}", n, kMaxStones));
  if (slot_[static_cast<std::size_t>(n)] < 0)
    return probe::detail::failure(probe::Status::not_found,
                                  fmt::format("the database has no {}-stone segment; build it with "
                                              "`retra build awari --stones {}`",
                                              n, n));
  where->slot = slot_[static_cast<std::size_t>(n)];
  where->index = rank(b);
  return {};
}

probe::Value Locator::locate(std::string_view position, probe::Location* where) const {
  auto b = parse_board(position);
  if (!b) return probe::detail::failure(probe::Status::invalid_argument, b.error().message());
  std::array<int, 12> pits;
  for (int i = 0; i < 12; ++i) pits[i] = b->pit[i];
  return locate(pits, where);
}

probe::Coverage Locator::coverage() const {
  probe::Coverage c;
  c.units = "stones";
  for (int n = 0; n <= kMaxStones; ++n)
    if (slot_[static_cast<std::size_t>(n)] >= 0) {
      c.largest = n;
      ++c.segments;
    }
  while (c.complete < kMaxStones && slot_[static_cast<std::size_t>(c.complete + 1)] >= 0)
    ++c.complete;
  return c;
}

std::unique_ptr<probe::Locator> Module::locator(std::span<const std::string> segments) {
  return std::make_unique<Locator>(segments);
}

namespace {

const char* kind_name(MoveKind k) {
  switch (k) {
    case MoveKind::empty_pit:
      return "empty";
    case MoveKind::starves:
      return "illegal";
    case MoveKind::quiet:
      return "quiet";
    case MoveKind::capture:
      return "capture";
  }
  return "?";
}

Result<int> stored_value(const Database& db, const Board& b) {
  const int n = b.stones();
  auto seg = db.segment(std::to_string(n));
  if (!seg) return std::move(seg).error();
  auto byte = (*seg)->byte_at(rank(b));
  if (!byte) return std::move(byte).error();
  const int v = static_cast<std::int8_t>(*byte);
  if (v < -n || v > n)
    return Error(Errc::corrupt, fmt::format("segment '{}' stores {} for a {}-stone position; "
                                            "rebuild it with --force",
                                            (*seg)->path().string(), v, n));
  return v;
}

}  // namespace

namespace {
// A score's result for the side to move, as every game's probe names it (front ends colour by it).
std::string_view outcome(int score) { return score > 0 ? "win" : score < 0 ? "loss" : "draw"; }
}  // namespace

Result<Report> Module::probe_report(const Database& db, std::string_view position) {
  auto parsed = parse_board(position);
  if (!parsed) return std::move(parsed).error();
  const Board b = *parsed;
  auto value = stored_value(db, b);
  if (!value) return std::move(value).error();
  nlohmann::json moves = nlohmann::json::array();
  std::vector<int> best;
  std::string rows;
  int legal = 0;
  for (int pit = 0; pit < kSidePits; ++pit) {
    const MoveResult m = make_move(b, pit);
    std::optional<int> v;
    if (m.legal()) {
      ++legal;
      auto cv = stored_value(db, m.child);
      if (!cv) return std::move(cv).error();
      v = m.captured - *cv;
      if (*v == *value) best.push_back(pit);
    }
    moves.push_back(
        {{"pit", pit},
         {"stones", b.pit[pit]},
         {"kind", kind_name(m.kind)},
         {"legal", v.has_value()},
         {"captured", m.captured},
         {"value", v ? nlohmann::json(*v) : nlohmann::json(nullptr)},
         {"outcome", v ? nlohmann::json(outcome(*v)) : nlohmann::json(nullptr)},
         // The position the move leads to (its mover first), for a front end to play.
         {"child", v ? nlohmann::json(format_board(m.child)) : nlohmann::json(nullptr)}});
    rows += fmt::format("{:>4} {:>7}  {:<8} {:>8} {:>6}\n", pit, b.pit[pit], kind_name(m.kind),
                        m.captured ? std::to_string(m.captured) : "",
                        v ? fmt::format("{:+d}", *v) : "-");
  }
  std::string terminal;
  if (b.mover_stones() == 0)
    terminal = "rule 4: the side to move has no stones, the opponent takes all";
  else if (legal == 0)
    terminal = "rule 3: no move leaves the opponent a stone, the side to move takes all";
  Report r;
  r.json = {{"ok", true},
            {"game", Game::kName},
            {"position", format_board(b)},
            {"stones", b.stones()},
            {"index", rank(b)},
            {"value", *value},
            {"outcome", outcome(*value)},
            {"moves", moves},
            {"best", best},
            {"terminal", terminal.empty() ? nlohmann::json(nullptr) : nlohmann::json(terminal)}};
  r.text = fmt::format("position {}  ({} stones, index {})\nvalue    {:+d}\n", format_board(b),
                       b.stones(), rank(b), *value);
  if (!terminal.empty()) r.text += "game over: " + terminal + "\n";
  r.text +=
      fmt::format("{:>4} {:>7}  {:<8} {:>8} {:>6}\n", "pit", "stones", "move", "captures", "value");
  r.text += rows;
  std::string best_text;
  for (int p : best) best_text += (best_text.empty() ? "" : " ") + std::to_string(p);
  r.text += "best     " + (best_text.empty() ? std::string("(no legal move)") : best_text) + "\n";
  return r;
}

Result<Report> Module::stats_report(const Database& db, const std::optional<std::string>& plot) {
  Report r;
  nlohmann::json segs = nlohmann::json::array();
  std::vector<plot::Series> series;
  r.text = fmt::format("{:>6} {:>15} {:>8}  {}\n", "stones", "positions", "mean",
                       "value:count (non-zero counts)");
  for (const auto& rec : db.manifest().segments) {
    auto st = stats_from_json(rec.stats);
    if (!st)
      return Error(Errc::corrupt, fmt::format("manifest has no statistics for segment {} ({}); "
                                              "rebuild it",
                                              rec.name, st.error().message()));
    nlohmann::json hist = nlohmann::json::object();
    std::string line;
    plot::Series s;
    s.label = rec.name + " stones";
    for (std::size_t k = 0; k < st->counts.size(); ++k) {
      const int v = st->value_min + static_cast<int>(k);
      hist[std::to_string(v)] = st->counts[k];
      if (st->counts[k]) line += fmt::format(" {:+d}:{}", v, st->counts[k]);
      s.points.emplace_back(v, rec.entries ? 100.0 * static_cast<double>(st->counts[k]) /
                                                 static_cast<double>(rec.entries)
                                           : 0.0);
    }
    series.push_back(std::move(s));
    segs.push_back({{"segment", rec.name},
                    {"stones", std::stoi(rec.name)},
                    {"positions", rec.entries},
                    {"mean", st->mean},
                    {"histogram", hist}});
    r.text +=
        fmt::format("{:>6} {:>15} {:>+8.3f} {}\n", rec.name, grouped(rec.entries), st->mean, line);
  }
  r.json = {{"ok", true}, {"game", Game::kName}, {"segments", segs}};
  if (plot) {
    const std::string svg =
        plot::svg_lines(series, {"Frequencies of game values in the Awari databases",
                                 "game value (stones)", "frequency (% of positions)", 960, 600});
    if (auto w = io::write_file_atomic(*plot, svg); !w) return std::move(w).error();
    r.text += "plot written to " + *plot + "\n";
    r.json["plot"] = *plot;
  }
  return r;
}

// ---- solve -----------------------------------------------------------------------------------

Result<int> Module::leaf_limit(const probe::Prober& db, std::optional<int> asked) {
  const int held = db.coverage().complete;  // 0..held without a gap
  return asked ? std::min(held, *asked) : held;
}

Result<Report> Module::solve_report(const SolveRun& run) {
  auto b = parse_board(run.position);
  if (!b) return std::move(b).error();
  Report r;
  r.json = {{"ok", true},
            {"game", Game::kName},
            {"position", format_board(*b)},
            {"stones", b->stones()},
            {"database_stones", run.leaf_max},
            {"algorithm", run.algorithm}};
  r.text = fmt::format("position {} ({} stones; databases 0..{})\nalgorithm {}\n", format_board(*b),
                       b->stones(), run.leaf_max, run.algorithm);
  const solve::Solution s = run.solution.value_or(solve::Solution{});
  solve::finish_report(
      run, r, fmt::format("final difference >= {}", run.threshold.value_or(0)),
      fmt::format("value {}", s.value),
      fmt::format("not solved within the limits: value in [{}, {}]", s.lower, s.upper));
  return r;
}

const GameModule& module() {
  static const ModuleOf<Module> m;
  return m;
}

}  // namespace retra::awari
