// Plans the memory of a build before it starts: for each segment the kernel's own arrays and the
// finished segments its converting moves read. Those are decompressed into memory when everything
// fits the limit, probed block-wise from disk when only the kernel arrays fit, and the build is
// refused (before anything is written) when not even those fit.
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "retra/error.hpp"

namespace retra {

struct SegmentNeed {
  std::string name;
  std::uint64_t kernel_bytes = 0;      // values, counters/scratch and frontiers
  std::uint64_t dependency_bytes = 0;  // the finished segments its converting moves read
};

struct SegmentPlan {
  SegmentNeed need;
  bool dependencies_in_memory = true;
  bool fits = true;  // false only in a plan made with allow_over: not even the kernel arrays fit
  std::uint64_t bytes() const {
    return need.kernel_bytes + (dependencies_in_memory ? need.dependency_bytes : cache_bytes());
  }
  // Block-wise probing keeps a cache of decompressed blocks: an eighth of the dependencies,
  // between 1 and 64 MiB.
  std::uint64_t cache_bytes() const {
    return std::clamp<std::uint64_t>(need.dependency_bytes / 8, 1ull << 20, 64ull << 20);
  }
};

struct MemoryPlan {
  std::vector<SegmentPlan> segments;
  std::uint64_t limit = 0;
  std::uint64_t peak_bytes = 0;
  std::string peak_segment;
  std::string summary() const;  // one line for the build log
};

// A segment whose own arrays exceed the limit is an error, or (allow_over: for `build --plan`)
// a segment marked as not fitting.
Result<MemoryPlan> plan_memory(const std::vector<SegmentNeed>& needs, std::uint64_t limit,
                               bool allow_over = false);

// The default limit: 80% of physical RAM.
std::uint64_t default_memory_limit();

// Parses "80%", "12G", "512M", "64K", "1T" or a plain number of bytes.
Result<std::uint64_t> parse_memory_size(const std::string& text);

std::string format_bytes(std::uint64_t bytes);

}  // namespace retra
