// Anonymous mappings with transparent huge pages; RAM and RSS queries. Thread safety: reentrant.
#include "src/memory.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

std::uint64_t peak_rss_bytes() noexcept {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
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
