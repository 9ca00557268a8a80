// The on-disk segment: one file of fixed-size entries, cut into blocks that are compressed
// independently with zstd, with a block table and XXH3 checksums (layout: docs/FORMAT.md).
// Thread safety: write_segment is reentrant; a SegmentReader may be shared by many threads
// (its block cache is locked; the mapping is read-only).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "retra/error.hpp"
#include "src/io/file.hpp"

namespace retra::format {

static_assert(std::endian::native == std::endian::little,
              "the segment format is little-endian and retra reads it in place");

inline constexpr char kSegmentMagic[8] = {'R', 'E', 'T', 'R', 'A', 'S', 'E', 'G'};
inline constexpr std::uint32_t kSegmentVersion = 1;
inline constexpr std::uint32_t kDefaultBlockEntries = 1u << 16;

// What a segment holds; every string field must fit its header slot (checked by the writer).
struct SegmentInfo {
  std::string game;            // the game's name              (<= 15 bytes)
  std::string variant;         // "olympiad"                   (<= 15 bytes)
  std::string indexer;         // the index scheme             (<= 31 bytes)
  std::string value_encoding;  // "score-i8"                   (<= 15 bytes)
  std::string name;            // segment name, e.g. "16"      (<= 31 bytes)
  std::uint64_t entries = 0;
  std::uint32_t entry_bytes = 1;
  std::uint32_t block_entries = kDefaultBlockEntries;
  std::uint64_t blocks() const noexcept {
    return block_entries ? (entries + block_entries - 1) / block_entries : 0;
  }
};

// Header, 256 bytes at offset 0. Drawn byte by byte in docs/FORMAT.md.
struct SegmentHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;
  char game[16];
  char variant[16];
  char indexer[32];
  char value_encoding[16];
  char name[32];
  std::uint64_t entries;
  std::uint32_t entry_bytes;
  std::uint32_t block_entries;
  std::uint64_t blocks;
  std::uint64_t table_offset;
  std::uint64_t data_offset;
  std::uint64_t file_bytes;
  std::uint64_t table_checksum;  // XXH3-64 of the block table
  std::int32_t zstd_level;
  std::uint32_t reserved0;
  std::uint8_t reserved[56];
  std::uint64_t header_checksum;  // XXH3-64 of bytes [0, 248)
};
static_assert(sizeof(SegmentHeader) == 256);
static_assert(offsetof(SegmentHeader, entries) == 128);
static_assert(offsetof(SegmentHeader, header_checksum) == 248);

// One block table row, 24 bytes.
struct BlockEntry {
  std::uint64_t offset;    // file offset of the compressed block
  std::uint64_t checksum;  // XXH3-64 of the compressed bytes
  std::uint32_t compressed_bytes;
  std::uint32_t raw_bytes;  // block_entries * entry_bytes, less for the last block
};
static_assert(sizeof(BlockEntry) == 24);

struct WriteOptions {
  int zstd_level = 3;
  int threads = 1;
};

struct WriteReport {
  std::uint64_t file_bytes = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t header_checksum = 0;
  double seconds = 0;
};

// Writes `data` (entries * entry_bytes bytes) as a segment at `path`, atomically: the file appears
// under its name only complete and fsync'd. Blocks are compressed in parallel.
Result<WriteReport> write_segment(const std::filesystem::path& path, const SegmentInfo& info,
                                  std::span<const std::uint8_t> data, const WriteOptions& opt);

// Read access to one segment file. Opening validates magic, version, header and table checksums
// and the table's bounds; every block read validates that block's checksum before decompressing,
// so a flipped byte is reported (Errc::corrupt, naming file and block) instead of read as a value.
class SegmentReader {
 public:
  // cache_blocks: decompressed blocks kept for byte_at(), spread over kCacheShards locks.
  static Result<std::unique_ptr<SegmentReader>> open(const std::filesystem::path& path,
                                                     std::size_t cache_blocks = 64);
  static constexpr std::size_t kCacheShards = 16;
  ~SegmentReader();

  const SegmentInfo& info() const noexcept { return info_; }
  const std::filesystem::path& path() const noexcept { return file_.path(); }
  std::uint64_t file_bytes() const noexcept { return file_.bytes().size(); }
  std::uint64_t header_checksum() const noexcept { return header_checksum_; }

  // Decompresses block b into out (exactly raw_bytes(b) bytes). No caching.
  Status read_block(std::uint64_t b, std::span<std::uint8_t> out) const;
  std::uint32_t raw_bytes(std::uint64_t b) const noexcept { return table_[b].raw_bytes; }
  // All entries, decompressed with `threads` threads; out.size() == entries * entry_bytes.
  Status read_all(std::span<std::uint8_t> out, int threads) const;
  // One single-byte entry, through the block cache (thread-safe).
  Result<std::uint8_t> byte_at(std::uint64_t index) const;

 private:
  SegmentReader() = default;
  Error block_error(std::uint64_t b, std::string_view what) const;

  io::MappedFile file_;
  SegmentInfo info_;
  std::uint64_t header_checksum_ = 0;
  std::vector<BlockEntry> table_;

  // LRUs of decompressed blocks for point probes, sharded by block number so that threads
  // probing different blocks rarely wait for each other.
  struct Cache;
  std::unique_ptr<Cache[]> cache_;
};

}  // namespace retra::format
