// Memory for the probe cache's decompressed blocks: carved from 2 MiB-aligned chunks that the
// kernel may back with transparent huge pages, so that warm probes reading at random across
// gigabytes of cached blocks miss the TLB far less often (one entry maps 2 MiB, not 4 KiB).
// Thread safety: allocate() and release() lock the arena's mutex; a buffer is its holder's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace retra::probe::detail {

class BlockArena {
 public:
  // Chunks are this large (and 2 MiB-aligned); larger buffers get a mapping of their own.
  static constexpr std::size_t kChunk = std::size_t{32} << 20;
  static constexpr std::size_t kMinBuffer = 64;  // a cache line

  BlockArena() = default;
  BlockArena(const BlockArena&) = delete;
  BlockArena& operator=(const BlockArena&) = delete;
  ~BlockArena();

  // The bytes a buffer of `bytes` takes: the power of two at or above it (at least kMinBuffer),
  // what the cache counts against its capacity.
  static std::size_t footprint(std::size_t bytes);
  // A buffer of at least `bytes` bytes (uninitialized), or nullptr where memory runs out.
  std::uint8_t* allocate(std::size_t bytes);
  // Gives back a buffer allocate(bytes) returned, for the next buffer of its size.
  void release(std::uint8_t* p, std::size_t bytes) noexcept;

 private:
  struct Mapping {
    void* base;
    std::size_t bytes;
  };
  std::mutex mu_;
  std::vector<Mapping> chunks_;
  std::uint8_t* next_ = nullptr;  // the current chunk's unused tail
  std::size_t left_ = 0;
  std::array<std::vector<std::uint8_t*>, 64> free_{};  // released buffers by log2 of footprint
  std::array<std::size_t, 64> carved_{};               // buffers carved, by log2 of footprint
};

}  // namespace retra::probe::detail
