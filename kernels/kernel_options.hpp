// Options shared by the retrograde kernels. Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>

#include "src/progress.hpp"
#include "src/tuning.hpp"

namespace retra::kernels {

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
};

}  // namespace retra::kernels
