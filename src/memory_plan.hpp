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
  std::string limit_source;  // what set the limit (MemoryLimit::source)
  std::uint64_t peak_bytes = 0;
  std::string peak_segment;
  std::string summary() const;  // one line for the build log
};

// The limit a build plans with, and what set it (for messages).
struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string source;  // "--memory", "80% of the machine's memory", "ulimit -v", ...
  bool hard = false;   // set by a limit of the process (ulimit, cgroup), not by --memory
};

// `asked` (0: the default, 80% of physical RAM), never above what the process may use at all
// (memory_ceiling(): ulimit -v / -d, the cgroup's memory.max), so a build refuses before it
// allocates instead of failing or being killed half way.
MemoryLimit effective_memory_limit(std::uint64_t asked);

// A segment whose own arrays exceed the limit is an error, or (allow_over: for `build --plan`)
// a segment marked as not fitting. The error says what to raise.
Result<MemoryPlan> plan_memory(const std::vector<SegmentNeed>& needs, const MemoryLimit& limit,
                               bool allow_over = false);
inline Result<MemoryPlan> plan_memory(const std::vector<SegmentNeed>& needs, std::uint64_t limit,
                                      bool allow_over = false) {
  return plan_memory(needs, MemoryLimit{limit, "--memory", false}, allow_over);
}

// The default limit: 80% of physical RAM.
std::uint64_t default_memory_limit();

// Parses "80%", "12G", "512M", "64K", "1T" or a plain number of bytes.
Result<std::uint64_t> parse_memory_size(const std::string& text);

std::string format_bytes(std::uint64_t bytes);

}  // namespace retra
