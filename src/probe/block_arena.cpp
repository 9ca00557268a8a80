// Memory for the probe cache's decompressed blocks (block_arena.hpp).
// Thread safety: allocate() and release() lock the arena's mutex.
#include "src/probe/block_arena.hpp"

#include <bit>
#include <new>

#include "src/memory.hpp"

namespace retra::probe::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}  // namespace

BlockArena::~BlockArena() {
  for (const Mapping& m : chunks_) retra::detail::unmap(m.base, m.bytes);
}

std::size_t BlockArena::footprint(std::size_t bytes) {
  return std::bit_ceil(bytes < kMinBuffer ? kMinBuffer : bytes);
}

std::uint8_t* BlockArena::allocate(std::size_t bytes) {
  const std::size_t size = footprint(bytes);
  const auto log = static_cast<std::size_t>(std::countr_zero(size));
  std::lock_guard lock(mu_);
  if (auto& f = free_[log]; !f.empty()) {
    std::uint8_t* p = f.back();
    f.pop_back();
    return p;
  }
  // Room in the free list for this buffer's return, so that release() never allocates.
  try {
    free_[log].reserve(carved_[log] + 1);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  // One more huge page than asked, so that the usable part starts on a huge-page boundary.
  auto map = [&](std::size_t length) -> std::uint8_t* {
    auto m = retra::detail::map_zeroed(length + kHugePage, true);
    if (!m) return nullptr;
    chunks_.push_back({*m, length + kHugePage});
    const auto at = reinterpret_cast<std::uintptr_t>(*m);
    return reinterpret_cast<std::uint8_t*>((at + kHugePage - 1) & ~(kHugePage - 1));
  };
  std::uint8_t* p;
  if (size > kChunk) {
    p = map(size);  // a mapping of its own; the current chunk's tail stays for smaller ones
  } else {
    if (size > left_) {
      // A new chunk (the old tail's remainder stays unused: buffers of one database are mostly
      // of one size, and chunks hold whole powers of two of them).
      next_ = map(kChunk);
      left_ = next_ ? kChunk : 0;
    }
    p = next_;
    if (p) {
      next_ += size;
      left_ -= size;
    }
  }
  if (p) ++carved_[log];
  return p;
}

void BlockArena::release(std::uint8_t* p, std::size_t bytes) noexcept {
  if (!p) return;
  const auto log = static_cast<std::size_t>(std::countr_zero(footprint(bytes)));
  std::lock_guard lock(mu_);
  free_[log].push_back(p);  // within the capacity allocate() reserved
}

}  // namespace retra::probe::detail
