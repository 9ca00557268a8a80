// Options shared by the retrograde kernels. Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>

#include "retra/progress.hpp"
#include "retra/tuning.hpp"

namespace retra::kernels {

struct KernelOptions {
  int threads = 1;
  std::uint64_t chunk = 1u << 16;  // positions per parallel task; equal to the block size
  Progress* progress = nullptr;
  std::string label;  // prefix of the progress phases, e.g. "16 stones"
  Tuning tuning;
};

}  // namespace retra::kernels
