// Large zero-initialized arrays backed by anonymous mmap with transparent huge pages requested
// (madvise), so random access in the kernels costs fewer TLB misses. Also reads the machine's RAM.
// Thread safety: an array is a plain buffer; concurrent access rules are the caller's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "retra/error.hpp"

namespace retra {

namespace detail {
// reserve_only: address space whose pages are taken as they are first written, with no commit
// charge up front (MAP_NORESERVE), so that a mapping sized for the worst case costs only what is
// used; it can still fail (ulimit -v, strict overcommit).
Result<void*> map_zeroed(std::size_t bytes, bool huge_pages, bool reserve_only = false);
void unmap(void* p, std::size_t bytes) noexcept;
// Gives back the pages of [p, p + bytes), the last one whole: p is page-aligned (a mapping's
// start). They read as zeros again.
void discard(void* p, std::size_t bytes) noexcept;
// Moves or extends the mapping [p, p + from) to `to` bytes (mremap), its pages kept and the new
// ones zeros, MAP_NORESERVE and the huge-page hint as before; the error where the address space
// cannot be had (ulimit -v).
Result<void*> remap(void* p, std::size_t from, std::size_t to, bool huge_pages);
}  // namespace detail

template <class T>
class LargeArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  LargeArray() = default;
  static Result<LargeArray> allocate(std::size_t n, bool huge_pages = true) {
    return map(n, huge_pages, false);
  }
  // Address space for n elements, zeros, whose pages are taken as they are first written and
  // given back by discard(): for an array sized for the worst case that rarely fills.
  static Result<LargeArray> reserve(std::size_t n, bool huge_pages = true) {
    return map(n, huge_pages, true);
  }
  LargeArray(LargeArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, 0)) {}
  LargeArray& operator=(LargeArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      mapped_ = std::exchange(o.mapped_, 0);
    }
    return *this;
  }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;
  ~LargeArray() { release(); }

  // Keeps the first n elements and returns the rest of the mapping to the system.
  void shrink(std::size_t n) noexcept {
    if (n >= size_) return;
    if (n == 0) {
      release();
      return;
    }
    const std::size_t keep = whole_pages(n * sizeof(T));
    const std::size_t total = mapped_bytes();
    if (keep < total) detail::unmap(reinterpret_cast<char*>(data_) + keep, total - keep);
    size_ = n;
    mapped_ = keep;
  }

  // Room for n elements (n > size()), the elements kept (the mapping may move: pointers into it
  // go stale). For an array that starts smaller than its worst case where address space is
  // bounded (ulimit -v), reserved address space counting as used there.
  Status grow(std::size_t n, bool huge_pages = true) {
    if (n <= size_) return {};
    if (!data_) {
      auto a = map(n, huge_pages, true);
      if (!a) return std::move(a).error();
      *this = std::move(*a);
      return {};
    }
    auto p = detail::remap(data_, mapped_bytes(), n * sizeof(T), huge_pages);
    if (!p) return std::move(p).error();
    data_ = static_cast<T*>(*p);
    size_ = n;
    mapped_ = 0;
    return {};
  }

  // Gives back the pages that hold the first n elements (the last one partly too: its other
  // elements are zeros again as well); they read as zeros.
  void discard(std::size_t n) noexcept {
    if (data_ && n > 0) detail::discard(data_, std::min(n, size_) * sizeof(T));
  }

  // Gives back the pages below element n, down to a 2 MiB boundary (a transparent huge page is
  // not split); they read as zeros. The elements from n on stay.
  void discard_below(std::size_t n) noexcept {
    if (!data_) return;
    constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
    const auto begin = reinterpret_cast<std::uintptr_t>(data_);
    const std::uintptr_t end = (begin + std::min(n, size_) * sizeof(T)) & ~(kHuge - 1);
    if (end > begin) detail::discard(data_, end - begin);
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::span<T> span() noexcept { return {data_, size_}; }
  std::span<const T> span() const noexcept { return {data_, size_}; }

 private:
  static std::size_t whole_pages(std::size_t bytes) noexcept {
    constexpr std::size_t kPage = 4096;
    return (bytes + kPage - 1) / kPage * kPage;
  }
  // The bytes the mapping spans, in whole pages (after shrink(), the pages it kept).
  std::size_t mapped_bytes() const noexcept {
    return mapped_ ? mapped_ : whole_pages(size_ * sizeof(T));
  }
  void release() noexcept {
    if (data_) detail::unmap(data_, mapped_bytes());
    data_ = nullptr;
    size_ = 0;
    mapped_ = 0;
  }
  static Result<LargeArray> map(std::size_t n, bool huge_pages, bool reserve_only) {
    LargeArray a;
    if (n == 0) return a;
    auto p = detail::map_zeroed(n * sizeof(T), huge_pages, reserve_only);
    if (!p) return std::move(p).error();
    a.data_ = static_cast<T*>(*p);
    a.size_ = n;
    return a;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;  // bytes mapped after shrink(); 0: mapped_bytes() follows size_
};

// Physical RAM in bytes (sysconf), the peak resident set size of this process (getrusage) and
// its resident set size now (/proc/self/statm; 0 where that cannot be read).
std::uint64_t physical_memory_bytes() noexcept;

// A hard bound on the memory this process can still use, and what sets it: the address-space
// and data limits (`ulimit -v`, `ulimit -d`: what is left of them, less a reserve for thread
// stacks and malloc arenas, which count against them too) and the cgroup's memory.max (what a
// container grants; beyond it the OOM killer ends the process). bytes is UINT64_MAX when nothing
// bounds the process but the machine.
struct MemoryCeiling {
  std::uint64_t bytes = ~std::uint64_t{0};
  std::string source;          // "ulimit -v", "ulimit -d", "the cgroup's memory.max"
  bool address_space = false;  // set by ulimit -v, which counts file mappings too
};
MemoryCeiling memory_ceiling() noexcept;
// True where `ulimit -v` or `ulimit -d` bounds this process: there address space reserved for a
// worst case (LargeArray::reserve) counts as if used, and takes it from the plan's other items.
bool address_space_limited() noexcept;

// The least memory limit of the cgroups this process is in, ancestors included (a parent's
// limit binds its children): cgroup v2's memory.max and memory.high (above it the kernel
// throttles the group), v1's memory.limit_in_bytes, found through /proc/self/cgroup and
// /proc/self/mountinfo, so that a limit set on the process's own group (systemd-run -p
// MemoryMax=, a non-root group) counts, not only the mount's root. `root` prefixes every path
// read ("" for the live system; tests pass a directory laid out like one). nullopt when none
// limits memory (v2's "max", v1's near-2^63) or nothing can be read.
struct CgroupLimit {
  std::uint64_t bytes = 0;
  std::string file;  // the file that set it, e.g. /sys/fs/cgroup/user.slice/x.scope/memory.max
};
std::optional<CgroupLimit> cgroup_memory_limit(const std::string& root = "");
std::uint64_t peak_rss_bytes() noexcept;
// Gives the allocator's free memory back to the system (glibc keeps freed chunks of up to 32 MiB
// in its heaps, and a build's resident set would carry every earlier segment's vectors).
void return_free_memory() noexcept;
std::uint64_t current_rss_bytes() noexcept;

}  // namespace retra
