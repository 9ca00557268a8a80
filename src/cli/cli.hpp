// Shared pieces of the `retra` command line: exit codes, JSON/human output, the progress bar.
// The CLI is a thin layer over the library and names no game: every game-specific option, text
// and limit comes from the game's module (src/module/module.hpp).
// Thread safety: the progress bar renders from its own thread; everything else is main-thread.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"
#include "src/database.hpp"
#include "src/memory_plan.hpp"
#include "src/module/module.hpp"
#include "src/progress.hpp"

namespace retra::cli {

// Exit codes scripts can rely on (docs/CLI.md).
enum Exit : int {
  kOk = 0,
  kVerifyFailed = 1,  // verify found a wrong value, a bad checksum or a damaged file
  kUsage = 2,         // bad option, malformed position, unknown game
  kNotFound = 3,      // missing or foreign database directory, missing segment
  kCorrupt = 4,       // a file failed its checksum or format checks
  kIo = 5,            // the operating system refused a read or write
  kResource = 6,      // the job does not fit the memory limit
  kInternal = 70,     // a bug in retra
};
int exit_code(Errc code);

struct Common {
  bool json = false;
  bool progress = true;  // a bar on stderr when it is a terminal
  int threads = 0;       // 0: all hardware threads
  std::filesystem::path db;
  // The ranks of `mpirun -np N retra build` (null: this process alone). Only rank 0 reports.
  kernels::Cluster* cluster = nullptr;
  int resolved_threads() const;
};

// Prints the error (and a JSON error object with --json) and returns the exit code.
int report_error(const Common& c, const Error& e);
void print_json(const nlohmann::json& j);

// Renders a Progress on stderr every 200 ms while alive, if stderr is a terminal and enabled.
class ProgressBar {
 public:
  ProgressBar(Progress& p, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // Prints a line above the bar (or just prints it when no bar is shown).
  void println(const std::string& line);

 private:
  void run();
  void draw(bool final);
  Progress& p_;
  bool enabled_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex out_mu_;
  std::size_t last_width_ = 0;
  double phase_start_ = 0;
  std::uint64_t generation_ = 0;
};

// `retra build <game> ...`: one subcommand per registered game, with the options every game
// shares and the game's own (its module's target options).
void add_build_commands(CLI::App& build, Common& common, int& exit);

// `retra solve`: proof-number search with database leaves, for the database's game.
struct SolveArgs {
  std::string position;
  std::string algorithm = "pn";
  std::uint64_t max_nodes = 2'000'000;
  std::uint64_t max_work = 50'000'000;
  std::optional<int> threshold;  // prove one goal instead of the exact value
  std::optional<int> leaf_max;   // use database leaves up to this size only
  std::string max_memory;        // "512M", "2G", "10%"; empty: no limit beyond max_nodes
  // Search parameters; unset ones keep solve::Options' defaults.
  std::optional<double> a, b, epsilon;
  std::optional<int> t, mc_n, mc_la;
  std::optional<std::uint64_t> seed;
};
int solve_cmd(const Common& c, const SolveArgs& a);

// Opens --db for reading and finds its game's module; on failure reports and sets `exit`.
std::unique_ptr<Database> open_db(const Common& c, const GameModule*& game, int& exit);

}  // namespace retra::cli
