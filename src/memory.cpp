// Anonymous mappings with transparent huge pages; RAM and RSS queries. Thread safety: reentrant.
#include "src/memory.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace retra::detail {

namespace {
// Only a hint: without THP support the mapping simply stays on 4 KiB pages.
void hint_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (bytes >= (std::size_t{2} << 20)) ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
}
}  // namespace

Result<void*> map_zeroed(std::size_t bytes, bool huge_pages, bool reserve_only) {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (reserve_only ? MAP_NORESERVE : 0);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED)
    return Error(Errc::resource,
                 fmt::format("cannot allocate {:.1f} MiB: {}",
                             static_cast<double>(bytes) / (1 << 20), std::strerror(errno)));
  if (huge_pages) hint_huge_pages(p, bytes);
  return p;
}

void unmap(void* p, std::size_t bytes) noexcept { ::munmap(p, bytes); }

Result<void*> remap(void* p, std::size_t from, std::size_t to, bool huge_pages) {
  void* q = ::mremap(p, from, to, MREMAP_MAYMOVE);
  if (q == MAP_FAILED)
    return Error(Errc::resource,
                 fmt::format("cannot grow a mapping from {:.1f} to {:.1f} MiB: {}",
                             static_cast<double>(from) / (1 << 20),
                             static_cast<double>(to) / (1 << 20), std::strerror(errno)));
  // The moved or added part keeps the flags of the mapping it came from; the hint again, for
  // a mapping that was too small for it.
  if (huge_pages) hint_huge_pages(q, to);
  return q;
}

void discard(void* p, std::size_t bytes) noexcept {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t whole = (bytes + page - 1) / page * page;
  ::madvise(p, whole, MADV_DONTNEED);
}

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

// The lines of a file, empty when it cannot be read.
std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A path field of /proc/self/mountinfo with its octal escapes (\040 for a space) decoded.
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3') {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t next = s.find(sep, at);
    out.push_back(
        s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

// A cgroup hierarchy as mounted: where, and which of its groups the mount shows at its top.
struct CgroupMount {
  std::string root, point;
};

}  // namespace

std::optional<CgroupLimit> cgroup_memory_limit(const std::string& root) {
  // The mounts of cgroup v2 and of v1's memory controller (the first of each).
  std::optional<CgroupMount> v2, v1;
  for (const std::string& line : lines_of(root + "/proc/self/mountinfo")) {
    const std::vector<std::string_view> f = split(line, ' ');
    std::size_t dash = 6;  // optional fields end at "-"; then type, source, super options
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash + 3 >= f.size()) continue;  // also every line too short for fields 3 and 4
    const std::string_view type = f[dash + 1];
    CgroupMount m{unescape(f[3]), unescape(f[4])};
    if (type == "cgroup2" && !v2) v2 = m;
    if (type == "cgroup" && !v1)
      for (std::string_view o : split(f[dash + 3], ','))
        if (o == "memory") v1 = m;
  }
  if (!v2) v2 = CgroupMount{"/", "/sys/fs/cgroup"};  // where /proc cannot tell, the usual places
  if (!v1) v1 = CgroupMount{"/", "/sys/fs/cgroup/memory"};
  std::optional<CgroupLimit> best;
  // Every limit file from the process's group up to the mount's top.
  auto walk = [&](const CgroupMount& m, std::string_view path,
                  std::initializer_list<const char*> files) {
    std::string rel(path);
    if (m.root != "/") {
      // A mount of a subtree (a container's): the group's path below it, or its top where the
      // group lies outside it.
      if (rel.starts_with(m.root) && (rel.size() == m.root.size() || rel[m.root.size()] == '/'))
        rel = rel.substr(m.root.size());
      else
        rel.clear();
    }
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    for (;;) {
      for (const char* name : files) {
        const std::string file = m.point + rel + "/" + name;
        const auto v = number_in((root + file).c_str());
        // v2 writes "max" for none (no number), v1 a number near 2^63.
        if (v && *v < (std::uint64_t{1} << 62) && (!best || *v < best->bytes))
          best = CgroupLimit{*v, file};
      }
      if (rel.empty()) return;
      const std::size_t slash = rel.rfind('/');
      rel.resize(slash == std::string::npos ? 0 : slash);
    }
  };
  for (const std::string& line : lines_of(root + "/proc/self/cgroup")) {
    // "hierarchy:controllers:path"; the path may hold ':' itself.
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(a + 1, b - a - 1);
    const std::string_view path = std::string_view(line).substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty())
      walk(*v2, path, {"memory.max", "memory.high"});
    for (std::string_view c : split(controllers, ','))
      if (c == "memory") walk(*v1, path, {"memory.limit_in_bytes"});
  }
  return best;
}

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
  // The process's own cgroups (v2, v1), not only the hierarchy's top: a limit set with
  // systemd-run or on a group below the container's binds as hard.
  if (const auto cg = cgroup_memory_limit(); cg && cg->bytes < physical_memory_bytes()) {
    const std::uint64_t usable = cg->bytes / 5 * 4;
    if (usable < c.bytes) c = {usable, fmt::format("80% of the cgroup's limit ({})", cg->file)};
  }
  return c;
}

bool address_space_limited() noexcept {
  for (const auto resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl {};
    if (::getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) return true;
  }
  return false;
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
