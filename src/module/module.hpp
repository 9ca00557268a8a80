// A game module as every layer above the kernels sees it: one table of entry points per game (in
// the spirit of GamesmanOne's per-game API), so that the build driver, the verify driver, the
// probe core, the solver and the CLI are written once and name no game. A game writes a typed
// descriptor (src/module/descriptor.hpp) and gets this table from ModuleOf<Descriptor>
// (src/module/module_of.hpp); src/games/registry.cpp lists the modules, one line per game.
// Thread safety: modules are immutable; every entry point is reentrant.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "retra/error.hpp"
#include "retra/game.hpp"
#include "retra/solve.hpp"
#include "src/build/build.hpp"
#include "src/database.hpp"
#include "src/probe/locator.hpp"
#include "src/verify/verify.hpp"

namespace retra {

// A build option of one game only: which segments to build (a range, a list of names, a set).
struct OptionSpec {
  std::string_view flag;  // "--endgame"
  std::string_view help;
  bool list = false;      // repeatable, values comma separated
  bool required = false;  // CLI11 reports "--x is required" when missing
};
// The values given on the command line, by flag (absent flags are absent).
using OptionValues = std::map<std::string, std::vector<std::string>, std::less<>>;

// How a game names its segments and what they hold, for reports and messages.
struct Nouns {
  std::string_view segment;   // "segment", "endgame"
  std::string_view segments;  // the plural, also the JSON key of per-segment lists
  std::string_view entries;   // what a segment holds: "entries", "positions"
};

// What `retra solve` may ask of a game.
struct SolverSpec {
  std::string_view units;  // what --leaf-max counts: "pieces", ...
  int leaf_min = 0, leaf_max = 0;
  int threshold_min = 0, threshold_max = 0;  // --threshold range
  std::string_view threshold_help;           // what a threshold means, for errors and help
};

// A command's output: one JSON document (--json) or human text.
struct Report {
  nlohmann::json json;
  std::string text;
};

// What `retra solve` found, for the game to describe in its own terms.
struct SolveRun {
  std::string position;   // as given
  std::string algorithm;  // its name
  int leaf_max = 0;       // the leaf limit the solver used
  std::optional<int> threshold;
  solve::Outcome outcome = solve::Outcome::unknown;  // with a threshold
  std::optional<solve::Solution> solution;           // without one
  solve::Stats stats;
};

// Don't-care entries that a game's probes may find by a search (docs/FORMAT.md, kDontCare): one
// bit per entry (index order), and the order of the segment's bytes for the side to move
// (format::DontCare::rank).
struct DontCareMask {
  std::vector<std::uint64_t> bits;
  std::array<std::uint8_t, 256> rank{};
  std::uint64_t marked = 0;  // bits set
};

class GameModule {
 public:
  virtual ~GameModule() = default;

  // ---- identity ------------------------------------------------------------------------------
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  virtual DatabaseIdentity identity() const = 0;
  virtual ValueKind value_kind() const = 0;
  // Whether its distances may be stored to conversion instead of to mate (`--metric dtc`).
  virtual bool dtc_metric() const = 0;
  virtual const Nouns& nouns() const = 0;

  // ---- build ---------------------------------------------------------------------------------
  virtual std::span<const OptionSpec> target_options() const = 0;
  // The segments the options name (checked: every name is one of the game's segments).
  virtual Result<std::vector<std::string>> targets(const OptionValues& values) const = 0;
  // The zstd level and block size a build writes with where the request leaves them 0.
  virtual format::WriteDefaults write_defaults() const = 0;
  // Builds request.targets and every segment they need (the generic build driver).
  virtual Result<std::vector<SegmentReport>> build(const BuildRequest& request) const = 0;
  virtual std::string report_header() const = 0;
  virtual std::string report_row(const SegmentReport& r) const = 0;
  virtual nlohmann::json report_json(const SegmentReport& r) const = 0;
  // Totals over a whole build: fields for the JSON report and one line of text.
  virtual void report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                             std::string& line) const = 0;

  // ---- verify --------------------------------------------------------------------------------
  virtual Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt) const = 0;

  // ---- segments ------------------------------------------------------------------------------
  // The rules that answer some entries of segment `segment` (src/module/entry_rules.hpp), which
  // a reader needs when the file leaves them to the rules; null for a game without such rules.
  virtual Result<std::shared_ptr<const format::EntryRules>> entry_rules(
      std::string_view segment) const = 0;
  // The index of segment `segment` as mixed-radix digits (the Game's index_digits), which the
  // segment writer may store in another order; empty for a game without them.
  virtual Result<std::vector<std::uint64_t>> index_digits(std::string_view segment) const = 0;
  // What each byte of segment `segment` becomes where a half of it is stored as classes
  // (include/retra/game.hpp, HasClassHalves); nullopt where the segment cannot have one.
  virtual Result<std::optional<std::array<std::uint8_t, 256>>> class_bytes(
      std::string_view segment) const = 0;

  // Don't-care entries of segment `segment` (docs/FORMAT.md, kDontCare), whose entries as they
  // will be stored are `values` (`half` of them as classes; `far`: the values beyond a byte):
  // those a probe restores by searching their converting moves, marked where the stored value
  // (or class) is what those moves give (all converting moves, or the captures alone: `moves`),
  // read from the segment's dependencies in `db` (exact files). nullopt for a game, or a
  // segment, whose probes do not search.
  virtual Result<std::optional<DontCareMask>> dont_care(
      const Database& db, std::string_view segment, format::ClassHalf half,
      std::span<const format::FarValue> far, std::span<const std::uint8_t> values,
      format::DontCareMoves moves, int threads) const = 0;
  // The names given, dependencies first (a segment after every segment its converting moves
  // lead to), for passes that must see each segment before or after those it reads.
  virtual Result<std::vector<std::string>> dependency_order(
      std::span<const std::string> names) const = 0;

  // ---- probe ---------------------------------------------------------------------------------
  // Finds the segment and index of a position given as text; segments: the manifest's names.
  virtual std::unique_ptr<probe::Locator> locator(std::span<const std::string> segments) const = 0;
  // `retra probe`: the value, every move's value, the best moves.
  virtual Result<Report> probe_report(const Database& db, std::string_view position) const = 0;
  // `retra stats`: the statistics of every segment (and a plot where the game draws one).
  virtual Result<Report> stats_report(const Database& db,
                                      const std::optional<std::string>& plot) const = 0;

  // ---- solve ---------------------------------------------------------------------------------
  virtual const SolverSpec& solver_spec() const = 0;
  // A solver over the database's values; leaf_max limits the leaves (nullopt: all it holds).
  virtual Result<std::unique_ptr<solve::Solver>> solver(const probe::Prober& db,
                                                        const solve::Options& opt,
                                                        std::optional<int> leaf_max) const = 0;
  virtual Result<Report> solve_report(const SolveRun& run) const = 0;
};

// The registry (src/games/registry.cpp): every game this retra knows.
std::span<const GameModule* const> modules();
const GameModule* find_module(std::string_view name);
// The known names, comma separated, for messages.
std::string module_names();
// The module that reads database `db`: its game must be known and its identity (rules variant,
// indexer, value encoding) the module's own, or the bytes would be read with the wrong meaning.
Result<const GameModule*> module_of(const Database& db);

}  // namespace retra
