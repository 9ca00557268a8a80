// Options shared by the retrograde kernels. Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "src/progress.hpp"
#include "src/tuning.hpp"

namespace retra::kernels {

// Where a saved state stands, for people: the level's progress label and the positions decided.
struct CheckpointPoint {
  std::string at;
  std::uint64_t decided = 0;
};

// Where the backward kernel keeps its state at level boundaries, so that a run that is killed
// resumes at the last saved boundary instead of at the start (src/build/checkpoint.hpp keeps it
// in a file; the tests keep it in memory). The kernel asks due() at every level boundary and
// saves when told to; at its start it asks for a saved state. The kernel's scalars (`meta`) are
// opaque here; the arrays are its values, its counters and its frontier.
class Checkpoints {
 public:
  virtual ~Checkpoints() = default;
  virtual bool due() = 0;
  // An error stops the kernel (a store that can live without a checkpoint returns success).
  virtual Status save(std::span<const std::uint8_t> meta,
                      std::span<const std::span<const std::uint8_t>> arrays,
                      const CheckpointPoint& point) = 0;
  // The saved scalars, or nothing when no usable state was saved.
  virtual std::optional<std::vector<std::uint8_t>> load_meta() = 0;
  // Fills the arrays (sizes as saved; the kernel sized them from its scalars).
  virtual Status load_arrays(std::span<const std::span<std::uint8_t>> arrays) = 0;
};

struct KernelOptions {
  int threads = 1;
  std::uint64_t chunk = 1u << 16;  // positions per parallel task; equal to the block size
  Progress* progress = nullptr;
  std::string label;  // prefix of the progress phases, e.g. "16 stones"
  Tuning tuning;
  // Distance-to-mate games only: compute distance to conversion instead (Fang 3.3): a converting
  // move to a lost position is a win now (1), one to a won position a loss (2).
  bool dtc = false;
  // Forward kernel only: bytes its explicit graph of quiet moves may take beyond the planned
  // arrays (0: sweep the whole segment every time instead).
  std::uint64_t graph_bytes = 0;
  // Backward kernel only: owner-computes partitions of the index range (0 or 1: none). The
  // values do not depend on it (kernels/backward.hpp, expand_partitioned).
  std::uint64_t partitions = 0;
  // Backward kernel only: saves and restores its state at level boundaries (null: never).
  Checkpoints* checkpoints = nullptr;
};

}  // namespace retra::kernels
