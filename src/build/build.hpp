// Building databases, for every game: what to build and how (BuildRequest), what each segment
// took (SegmentReport), and build() itself, which finds the game's module and runs the generic
// driver (src/build/driver.hpp). Thread safety: build() runs its own threads; one build per
// database directory at a time (a lock file enforces it); callbacks are serialized.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"
#include "src/format/segment.hpp"
#include "src/memory_plan.hpp"
#include "src/progress.hpp"
#include "src/tuning.hpp"

namespace retra {

enum class Kernel {
  backward,  // unknown-children counters and frontiers: every value kind (the default)
  forward,   // van der Goot's forward iteration: score games only
};
std::string_view kernel_name(Kernel k);
Result<Kernel> parse_kernel(std::string_view name);

// Distances of dtm-kind games: to mate, falling back to distance to conversion (Fang 3.3) only
// where a distance would not fit a byte (automatic), or to conversion everywhere (dtc).
enum class Metric { automatic, dtc };

struct BuildRequest {
  std::string game;                  // a registered game's name
  std::vector<std::string> targets;  // segment names; every segment they need is built first
  std::filesystem::path db;
  int threads = 1;
  int jobs = 0;        // segments built at once (0: as many as the threads allow)
  bool force = false;  // rebuild the named segments if they exist (the others only if missing)
  Kernel kernel = Kernel::backward;
  Metric metric = Metric::automatic;
  // 0: the game's default (GameModule::write_defaults; zstd -3 and 64 Ki entries unless the
  // game chooses others).
  int zstd_level = 0;
  std::uint32_t block_entries = 0;
  // Block codec (docs/FORMAT.md): auto keeps the smaller of zstd and order-1 rANS per segment.
  format::CodecChoice codec = format::CodecChoice::automatic;
  // Store the entries the game's rules answer as filler (src/format/segment.hpp, EntryRules).
  bool fill_rule_entries = true;
  // Entry order of games that give their index digits (docs/FORMAT.md, "Entry order"): auto
  // stores each segment in the order of digits that compresses best.
  format::OrderChoice order = format::OrderChoice::automatic;
  // Games with class halves (include/retra/game.hpp, HasClassHalves): auto stores the half of
  // each such segment that compresses better as classes (docs/FORMAT.md, "Class halves").
  format::ClassHalfChoice class_half = format::ClassHalfChoice::automatic;
  // Memory the build may plan for (0: 80% of RAM). Checked before anything is written.
  std::uint64_t memory_limit = 0;
  // Disk an out-of-core segment's files may take (0: what is free in the database directory).
  // A segment that needs more is refused before the build starts; levels spill within it.
  std::uint64_t disk_limit = 0;
  // Read finished segments block-wise from disk even when they would fit in memory (slower).
  bool low_memory = false;
  // Backward kernel: run every segment out of core (its arrays in files in the database
  // directory, partitions resident by turns), even when it would fit in memory (slower). Without
  // it, segments run out of core only where the memory limit says so.
  bool out_of_core = false;
  // Backward kernel: save its state at level boundaries at most this often (seconds; 0: never),
  // so that a build killed in a large segment resumes there when the same command runs again.
  double checkpoint_seconds = 60;
  // Backward kernel: owner-computes partitions of each segment's index range (0: none; the
  // values do not depend on it; docs/ARCHITECTURE.md).
  std::uint64_t partitions = 0;
  Tuning tuning;  // kernel optimizations, switchable for measurements (docs/PERFORMANCE.md)
  // The ranks of an MPI build (src/cluster/mpi_cluster.hpp; null: this process alone). Every
  // rank runs the same request: segments one after another, each over all ranks (the backward
  // kernel, every array and capture target in memory); rank 0 writes the files and the
  // manifest, the other ranks read the directory.
  kernels::Cluster* cluster = nullptr;
  Progress* progress = nullptr;
  // Called once with the memory plan, before the first segment is built.
  std::function<void(const MemoryPlan&)> on_plan;
  // Only plan: report the plan (segments that do not fit the limit included, marked) and return
  // without touching the directory.
  bool plan_only = false;
  // Called when a segment is finished or found built already (serialized, any thread).
  std::function<void(const struct SegmentReport&)> on_segment;
  // One-line notes for the user: a segment resumed from a checkpoint, a checkpoint not used or
  // not saved (serialized, any thread).
  std::function<void(const std::string&)> on_note;
};

struct SegmentReport {
  std::string name;
  std::uint64_t entries = 0;
  bool skipped = false;  // built already
  std::string kernel;    // "backward" or "forward"
  std::string metric;    // dtm-kind games: "dtm" or "dtc"; empty for the others
  int iterations = 0;    // forward: sweeps; backward: frontier levels over all stages
  int threads = 0;
  double kernel_seconds = 0;
  double seconds = 0;  // kernel + reading what it needs + statistics + writing
  // Resident memory of the process when the segment's kernel finished (its arrays, the finished
  // values it reads and whatever was built beside it then).
  std::uint64_t rss_bytes = 0;
  std::uint64_t file_bytes = 0, raw_bytes = 0;
  // Backward kernel: checkpoints saved; the level at which this build resumed a killed one
  // (-1: it did not) and the positions decided by then.
  int checkpoints = 0;
  int resumed_level = -1;
  std::uint64_t resumed_decided = 0;
  std::string resumed_at;  // that level's progress label
  nlohmann::json stats;    // the game's statistics of the segment, as the manifest stores them

  double positions_per_second() const {
    return kernel_seconds > 0 ? static_cast<double>(entries) / kernel_seconds : 0;
  }
  // Forward iteration's work rate (each sweep visits every position); 0 for the backward kernel,
  // whose levels visit only the positions decided in them.
  double positions_iterations_per_second() const {
    return kernel == "forward" ? positions_per_second() * iterations : 0;
  }
  double compression() const {
    return file_bytes ? static_cast<double>(raw_bytes) / static_cast<double>(file_bytes) : 0;
  }
};

// Builds request.targets of request.game (and everything they need) into request.db. Segments
// are scheduled by their dependencies; reports come in dependency order.
Result<std::vector<SegmentReport>> build(const BuildRequest& request);

}  // namespace retra
