// Awari databases: build (one segment per stone count), probe, verify and statistics.
// Thread safety: build() and verify() use the given number of threads internally and must not
// run concurrently on one directory (build takes a lock); probe() may be called from many threads
// on one Database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "retra/error.hpp"
#include "src/database.hpp"
#include "src/format/segment.hpp"
#include "src/games/awari/board.hpp"
#include "src/memory_plan.hpp"
#include "src/progress.hpp"
#include "src/tuning.hpp"
#include "src/verify.hpp"

namespace retra::awari {

DatabaseIdentity identity();
std::string segment_name(int stones);
// Orders segment names numerically ("2" < "10").
bool segment_order(const std::string& a, const std::string& b);

enum class Kernel { forward, backward };
std::string_view kernel_name(Kernel k);

struct BuildOptions {
  int first = 0;  // stone counts [first, last]; missing smaller ones are built too (captures need
  int last = 0;   // them), existing ones are kept
  std::filesystem::path db;
  int threads = 1;
  bool force = false;  // rebuild segments in [first, last] that already exist
  Kernel kernel = Kernel::backward;
  int zstd_level = 3;
  std::uint32_t block_entries = format::kDefaultBlockEntries;
  // Memory the build may plan for (0: 80% of RAM). Checked before anything is written.
  std::uint64_t memory_limit = 0;
  // Probe capture targets block-wise from disk even when they would fit in memory (slower).
  bool low_memory = false;
  // Kernel optimizations, switchable for measurements (docs/PERFORMANCE.md).
  Tuning tuning;
  Progress* progress = nullptr;
  // Called once with the memory plan, before the first segment is built.
  std::function<void(const MemoryPlan&)> on_plan;
  // Called after each segment is finished or found already built (from the calling thread).
  std::function<void(const struct SegmentReport&)> on_segment;
};

struct SegmentReport {
  int stones = 0;
  std::uint64_t positions = 0;
  bool skipped = false;  // already built
  std::string kernel;
  int iterations = 0;  // forward: sweeps; backward: frontier levels over all thresholds
  double kernel_seconds = 0;
  double seconds = 0;  // kernel + loading dependencies + writing
  std::uint64_t file_bytes = 0;
  std::uint64_t raw_bytes = 0;
  double mean = 0;
  double positions_per_second() const {
    return kernel_seconds > 0 ? static_cast<double>(positions) / kernel_seconds : 0;
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

Result<std::vector<SegmentReport>> build(const BuildOptions& opt);

// Statistics of one finished segment as stored in the manifest:
// {"positions", "value_min", "counts": [count of value_min, ..., count of -value_min], "mean"}.
nlohmann::json segment_stats(std::span<const std::int8_t> values, int stones);

// ---- probing ---------------------------------------------------------------------------------

struct MoveValue {
  int pit = 0;
  MoveKind kind = MoveKind::empty_pit;
  int captured = 0;
  std::optional<int> value;  // for legal moves: the move's worth to the mover
};

struct ProbeResult {
  Board board;
  int stones = 0;
  int value = 0;
  std::uint64_t index = 0;
  std::vector<MoveValue> moves;  // pits 0..5
  std::vector<int> best;         // pits whose move achieves the value
  std::string terminal;          // "" or which rule ends the game here
};

// Reads the position's value and every legal move's value from the database. Errors: the
// segment (or a capture's target segment) is not built, a block is corrupt.
Result<ProbeResult> probe(const Database& db, const Board& b);

// ---- verification ----------------------------------------------------------------------------

using retra::VerifyFailure;
using retra::VerifyOptions;
using retra::VerifyReport;
using retra::VerifySegment;

// One pass per segment, sharing nothing with the build kernels but move generation: every block
// checksum is checked while the segment is read from disk, every stored value must equal the best
// over its legal moves (captures read the smaller segments from disk too), and the manifest's
// statistics must match the values. Returns a report; an Error only for failures to even start.
Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt);

}  // namespace retra::awari
