// Plans the memory of a build before it starts: for each segment the kernel's own arrays and the
// finished segments its converting moves read. Everything in memory when it fits the limit; else
// the kernel out of core (its arrays in files, partitions resident by turns) with the finished
// segments in memory; else those probed block-wise from disk, with the kernel in memory or, where
// that does not fit either, out of core; the build is refused (before anything is written) where
// nothing fits. The kernel out of core comes before block-wise probing because it costs less:
// Awari's 20-stone kernel takes 2.7x its in-memory time out of core, 5.6x probing block-wise.
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
  // Out of core: the least memory the kernel can run in (0: it cannot run out of core) and the
  // disk its files take.
  std::uint64_t out_of_core_bytes = 0;
  std::uint64_t disk_bytes = 0;
  bool prefer_out_of_core = false;  // out of core even where it would fit in memory
};

struct SegmentPlan {
  SegmentNeed need;
  bool dependencies_in_memory = true;
  bool out_of_core = false;  // the kernel's arrays in files
  bool fits = true;          // false only in a plan made with allow_over: not even out of core
  std::uint64_t bytes() const {
    return (out_of_core ? need.out_of_core_bytes : need.kernel_bytes) +
           (dependencies_in_memory ? need.dependency_bytes : cache_bytes());
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
  std::uint64_t disk_bytes = 0;  // the most an out-of-core segment's files take (0: none)
  // What the database directory's file system has free, and --disk (0: not given): where
  // disk_bytes passes either, the build is refused (disk_fits()).
  std::uint64_t disk_free_bytes = 0;
  std::uint64_t disk_limit_bytes = 0;
  bool disk_fits() const {
    return disk_bytes <= disk_free_bytes &&
           (disk_limit_bytes == 0 || disk_bytes <= disk_limit_bytes);
  }
  std::string summary() const;  // one line for the build log
};

// The limit a build plans with, and what set it (for messages).
struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string source;  // "--memory", "80% of the machine's memory", "ulimit -v", ...
  bool hard = false;   // set by a limit of the process (ulimit, cgroup), not by --memory
  // Set by the address-space limit (ulimit -v), which file mappings count against too: the
  // out-of-core kernel, whose arrays are mappings, cannot run under it.
  bool address_space = false;
};

// `asked` (0: the default, 80% of physical RAM), never above what the process may use at all
// (memory_ceiling(): ulimit -v / -d, the cgroup's memory.max), so a build refuses before it
// allocates instead of failing or being killed half way.
MemoryLimit effective_memory_limit(std::uint64_t asked);

// A segment whose own arrays exceed the limit runs out of core when it can; one that cannot, or
// whose out-of-core minimum exceeds the limit too, is an error, or (allow_over: for
// `build --plan`) a segment marked as not fitting. The error says what to raise.
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
// --disk: the same sizes, without percentages.
Result<std::uint64_t> parse_disk_size(const std::string& text);

std::string format_bytes(std::uint64_t bytes);

}  // namespace retra
