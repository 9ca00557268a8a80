// Anonymous mappings with transparent huge pages; RAM and RSS queries. Thread safety: reentrant.
#include "src/memory.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace retra::detail {

Result<void*> map_zeroed(std::size_t bytes, bool huge_pages) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return Error(Errc::resource,
                 fmt::format("cannot allocate {:.1f} MiB: {}",
                             static_cast<double>(bytes) / (1 << 20), std::strerror(errno)));
#ifdef MADV_HUGEPAGE
  // Only a hint: without THP support the mapping simply stays on 4 KiB pages.
  if (huge_pages && bytes >= (std::size_t{2} << 20)) ::madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)huge_pages;
#endif
  return p;
}

void unmap(void* p, std::size_t bytes) noexcept { ::munmap(p, bytes); }

}  // namespace retra::detail

namespace retra {

std::uint64_t physical_memory_bytes() noexcept {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

namespace {

// Bytes of address space the process maps now (/proc/self/statm: size).
std::uint64_t mapped_bytes() noexcept {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0;
  const int got = std::fscanf(f, "%llu", &size);
  std::fclose(f);
  const long page = ::sysconf(_SC_PAGESIZE);
  return got == 1 && page > 0 ? size * static_cast<std::uint64_t>(page) : 0;
}

// The first number in a file, or nullopt ("max", missing, unreadable).
std::optional<std::uint64_t> number_in(const char* path) noexcept {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return std::nullopt;
  unsigned long long v = 0;
  const int got = std::fscanf(f, "%llu", &v);
  std::fclose(f);
  if (got != 1) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

}  // namespace

MemoryCeiling memory_ceiling() noexcept {
  MemoryCeiling c;
  const std::uint64_t mapped = mapped_bytes();
  for (auto [resource, name] :
       {std::pair{RLIMIT_AS, "ulimit -v"}, std::pair{RLIMIT_DATA, "ulimit -d"}}) {
    struct rlimit rl {};
    if (::getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) continue;
    // What is left, less a fifth and 256 MiB for what the build maps besides its planned arrays
    // (thread stacks, a malloc arena per thread, the runtime libraries' pools).
    const std::uint64_t cur = rl.rlim_cur, left = cur > mapped ? cur - mapped : 0;
    const std::uint64_t reserve = left / 5 + (256ull << 20);
    const std::uint64_t usable = left > reserve ? left - reserve : 0;
    if (usable < c.bytes) c = {usable, name, resource == RLIMIT_AS};
  }
  // cgroup v2, then v1 (whose "unlimited" is a huge number, above the machine's memory).
  std::optional<std::uint64_t> cg = number_in("/sys/fs/cgroup/memory.max");
  if (!cg) cg = number_in("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  if (cg && *cg < physical_memory_bytes()) {
    const std::uint64_t usable = *cg / 5 * 4;
    if (usable < c.bytes) c = {usable, "the cgroup's memory.max"};
  }
  return c;
}

std::uint64_t peak_rss_bytes() noexcept {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
}

void return_free_memory() noexcept {
#ifdef __GLIBC__
  // One caller at a time: segments built side by side call this together, and the first
  // mallopt() initializes glibc's arenas, which a concurrent malloc_trim() walked half made (a
  // crash seen under AddressSanitizer, whose malloc leaves glibc's uninitialized until then).
  static std::mutex mu;
  const std::lock_guard lock(mu);
  // Fixing the mmap threshold also stops glibc from raising it (up to 32 MiB) each time a large
  // block is freed: blocks of 4 MiB and more are then mapped on their own and returned on free,
  // not kept in the heap.
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::malloc_trim(0);
#endif
}

std::uint64_t current_rss_bytes() noexcept {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  const long page = ::sysconf(_SC_PAGESIZE);
  return got == 2 && page > 0 ? resident * static_cast<std::uint64_t>(page) : 0;
}

}  // namespace retra
