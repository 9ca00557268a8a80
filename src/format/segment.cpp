// Segment writer and reader (docs/FORMAT.md). Thread safety: see the header.
#include "src/format/segment.hpp"

#include <omp.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

namespace retra::format {

namespace fs = std::filesystem;

namespace {

template <std::size_t N>
Status put_field(char (&dst)[N], const std::string& s, std::string_view field) {
  if (s.size() >= N)
    return Error(Errc::internal,
                 fmt::format("segment {} '{}' is longer than {} bytes", field, s, N - 1));
  std::memset(dst, 0, N);
  std::memcpy(dst, s.data(), s.size());
  return {};
}

template <std::size_t N>
std::string get_field(const char (&src)[N]) {
  return std::string(src, strnlen(src, N));
}

std::uint64_t header_hash(const SegmentHeader& h) {
  return XXH3_64bits(&h, offsetof(SegmentHeader, header_checksum));
}

}  // namespace

Result<WriteReport> write_segment(const fs::path& path, const SegmentInfo& info,
                                  std::span<const std::uint8_t> data, const WriteOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (info.block_entries == 0 || info.entry_bytes == 0)
    return Error(Errc::invalid_argument, "segment block size and entry size must be positive");
  if (data.size() != info.entries * info.entry_bytes)
    return Error(Errc::internal,
                 fmt::format("segment '{}': {} bytes given for {} entries of {}", info.name,
                             data.size(), info.entries, info.entry_bytes));
  SegmentHeader h{};
  std::memcpy(h.magic, kSegmentMagic, sizeof h.magic);
  h.version = kSegmentVersion;
  h.header_bytes = sizeof(SegmentHeader);
  RETRA_TRY(put_field(h.game, info.game, "game"));
  RETRA_TRY(put_field(h.variant, info.variant, "variant"));
  RETRA_TRY(put_field(h.indexer, info.indexer, "indexer"));
  RETRA_TRY(put_field(h.value_encoding, info.value_encoding, "value encoding"));
  RETRA_TRY(put_field(h.name, info.name, "name"));
  h.entries = info.entries;
  h.entry_bytes = info.entry_bytes;
  h.block_entries = info.block_entries;
  h.blocks = info.blocks();
  h.table_offset = sizeof(SegmentHeader);
  h.data_offset = h.table_offset + h.blocks * sizeof(BlockEntry);
  h.zstd_level = opt.zstd_level;

  auto file = io::AtomicFile::create(path);
  if (!file) return std::move(file).error();

  std::vector<BlockEntry> table(h.blocks);
  const std::uint64_t block_bytes = std::uint64_t{info.block_entries} * info.entry_bytes;
  // Compress a batch of blocks in parallel, then append them in order; batches bound the memory
  // held in compressed buffers to about batch * block_bytes.
  const std::uint64_t batch =
      std::max<std::uint64_t>(64, 4 * static_cast<std::uint64_t>(opt.threads));
  std::vector<std::vector<std::uint8_t>> bufs(batch);
  std::vector<std::size_t> sizes(batch);
  std::uint64_t offset = h.data_offset;
  for (std::uint64_t first = 0; first < h.blocks; first += batch) {
    const std::uint64_t count = std::min(batch, h.blocks - first);
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads)) reduction(+ : failed)
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t b = first + k;
      const std::uint64_t begin = b * block_bytes;
      const std::uint64_t raw = std::min<std::uint64_t>(block_bytes, data.size() - begin);
      auto& buf = bufs[k];
      buf.resize(ZSTD_compressBound(raw));
      const std::size_t c =
          ZSTD_compress(buf.data(), buf.size(), data.data() + begin, raw, opt.zstd_level);
      if (ZSTD_isError(c)) {
        failed += 1;
        sizes[k] = 0;
        continue;
      }
      sizes[k] = c;
      table[b].raw_bytes = static_cast<std::uint32_t>(raw);
      table[b].compressed_bytes = static_cast<std::uint32_t>(c);
      table[b].checksum = XXH3_64bits(buf.data(), c);
    }
    if (failed)
      return Error(Errc::internal, fmt::format("zstd failed on a block of '{}'", info.name));
    for (std::uint64_t k = 0; k < count; ++k) {
      table[first + k].offset = offset;
      RETRA_TRY(file->pwrite(bufs[k].data(), sizes[k], offset));
      offset += sizes[k];
    }
  }
  h.file_bytes = offset;
  h.table_checksum = XXH3_64bits(table.data(), table.size() * sizeof(BlockEntry));
  h.header_checksum = header_hash(h);
  RETRA_TRY(file->pwrite(table.data(), table.size() * sizeof(BlockEntry), h.table_offset));
  RETRA_TRY(file->pwrite(&h, sizeof h, 0));
  RETRA_TRY(file->commit());
  WriteReport r;
  r.file_bytes = h.file_bytes;
  r.raw_bytes = data.size();
  r.header_checksum = h.header_checksum;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---------------------------------------------------------------------------------------------

struct SegmentReader::Cache {
  std::mutex mu;
  std::size_t capacity;
  std::list<std::pair<std::uint64_t, std::vector<std::uint8_t>>> lru;  // front = most recent
  std::unordered_map<std::uint64_t, decltype(lru)::iterator> where;
};

SegmentReader::~SegmentReader() = default;

Result<std::unique_ptr<SegmentReader>> SegmentReader::open(const fs::path& path,
                                                           std::size_t cache_blocks) {
  auto m = io::MappedFile::open(path);
  if (!m) return std::move(m).error();
  std::unique_ptr<SegmentReader> r(new SegmentReader());
  r->file_ = std::move(*m);
  const auto bytes = r->file_.bytes();
  auto corrupt = [&](std::string_view what) {
    return Error(Errc::corrupt, fmt::format("segment file '{}' is damaged: {}; rebuild it with "
                                            "`retra build ... --force`",
                                            path.string(), what));
  };
  if (bytes.size() < sizeof(SegmentHeader)) return corrupt("shorter than its 256-byte header");
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kSegmentMagic, sizeof h.magic) != 0)
    return Error(Errc::corrupt,
                 fmt::format("'{}' is not a retra segment file (bad magic)", path.string()));
  if (h.header_checksum != header_hash(h)) return corrupt("header checksum mismatch");
  if (h.version != kSegmentVersion)
    return Error(Errc::mismatch, fmt::format("segment '{}' has format version {}, this retra "
                                             "reads version {}",
                                             path.string(), h.version, kSegmentVersion));
  if (h.header_bytes != sizeof(SegmentHeader) || h.entry_bytes == 0 || h.block_entries == 0 ||
      h.blocks != (h.entries + h.block_entries - 1) / h.block_entries ||
      h.table_offset != sizeof(SegmentHeader) ||
      h.data_offset != h.table_offset + h.blocks * sizeof(BlockEntry) ||
      h.file_bytes != bytes.size())
    return corrupt("inconsistent header fields (or the file was truncated)");
  r->table_.resize(h.blocks);
  if (h.blocks)  // an empty segment has no table (and data() may be null)
    std::memcpy(r->table_.data(), bytes.data() + h.table_offset, h.blocks * sizeof(BlockEntry));
  if (XXH3_64bits(r->table_.data(), h.blocks * sizeof(BlockEntry)) != h.table_checksum)
    return corrupt("block table checksum mismatch");
  const std::uint64_t block_bytes = std::uint64_t{h.block_entries} * h.entry_bytes;
  for (std::uint64_t b = 0; b < h.blocks; ++b) {
    const BlockEntry& e = r->table_[b];
    const std::uint64_t want = std::min(block_bytes, h.entries * h.entry_bytes - b * block_bytes);
    if (e.raw_bytes != want || e.offset < h.data_offset ||
        e.offset + e.compressed_bytes > h.file_bytes)
      return corrupt(fmt::format("block table row {} is out of bounds", b));
  }
  r->info_.game = get_field(h.game);
  r->info_.variant = get_field(h.variant);
  r->info_.indexer = get_field(h.indexer);
  r->info_.value_encoding = get_field(h.value_encoding);
  r->info_.name = get_field(h.name);
  r->info_.entries = h.entries;
  r->info_.entry_bytes = h.entry_bytes;
  r->info_.block_entries = h.block_entries;
  r->header_checksum_ = h.header_checksum;
  r->cache_ = std::make_unique<Cache[]>(kCacheShards);
  for (std::size_t i = 0; i < kCacheShards; ++i)
    r->cache_[i].capacity =
        std::max<std::size_t>(1, (cache_blocks + kCacheShards - 1) / kCacheShards);
  return r;
}

Error SegmentReader::block_error(std::uint64_t b, std::string_view what) const {
  const std::uint64_t first = b * info_.block_entries;
  const std::uint64_t last = std::min(info_.entries, first + info_.block_entries) - 1;
  return Error(Errc::corrupt, Cause::bad_block,
               fmt::format("segment '{}' block {} (entries {}..{}) is corrupt: {}; rebuild the "
                           "segment with `retra build ... --force`",
                           file_.path().string(), b, first, last, what))
      .at_block(b);
}

Status SegmentReader::read_block(std::uint64_t b, std::span<std::uint8_t> out) const {
  const BlockEntry& e = table_[b];
  if (out.size() != e.raw_bytes)
    return Error(Errc::internal, "read_block: output buffer has the wrong size");
  const std::byte* src = file_.bytes().data() + e.offset;
  if (XXH3_64bits(src, e.compressed_bytes) != e.checksum)
    return block_error(b, "checksum mismatch");
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), src, e.compressed_bytes);
  if (ZSTD_isError(n)) return block_error(b, ZSTD_getErrorName(n));
  if (n != e.raw_bytes) return block_error(b, "decompressed size mismatch");
  return {};
}

Status SegmentReader::read_all(std::span<std::uint8_t> out, int threads) const {
  if (out.size() != info_.entries * info_.entry_bytes)
    return Error(Errc::internal, "read_all: output buffer has the wrong size");
  const std::uint64_t block_bytes = std::uint64_t{info_.block_entries} * info_.entry_bytes;
  const std::uint64_t nblocks = table_.size();
  // The first failing block (lowest number) is reported, whatever the thread schedule.
  std::uint64_t bad = nblocks;
  std::vector<Error> errors;
  std::mutex mu;
#pragma omp parallel for schedule(dynamic, 4) num_threads(std::max(1, threads))
  for (std::uint64_t b = 0; b < nblocks; ++b) {
    Status s = read_block(b, out.subspan(b * block_bytes, table_[b].raw_bytes));
    if (!s) {
      std::lock_guard lock(mu);
      if (b < bad) {
        bad = b;
        errors.assign(1, s.error());
      }
    }
  }
  if (bad != nblocks) return errors.front();
  return {};
}

Result<std::uint8_t> SegmentReader::byte_at(std::uint64_t index) const {
  if (index >= info_.entries)
    return Error(Errc::invalid_argument, fmt::format("index {} outside segment '{}' ({} entries)",
                                                     index, info_.name, info_.entries));
  const std::uint64_t b = index / info_.block_entries;
  const std::uint64_t off = (index % info_.block_entries) * info_.entry_bytes;
  Cache& c = cache_[b % kCacheShards];
  {
    std::lock_guard lock(c.mu);
    if (auto it = c.where.find(b); it != c.where.end()) {
      c.lru.splice(c.lru.begin(), c.lru, it->second);
      return it->second->second[off];
    }
  }
  std::vector<std::uint8_t> buf(table_[b].raw_bytes);
  RETRA_TRY(read_block(b, buf));
  const std::uint8_t v = buf[off];
  std::lock_guard lock(c.mu);
  if (c.where.find(b) == c.where.end()) {
    c.lru.emplace_front(b, std::move(buf));
    c.where[b] = c.lru.begin();
    if (c.lru.size() > c.capacity) {
      c.where.erase(c.lru.back().first);
      c.lru.pop_back();
    }
  }
  return v;
}

}  // namespace retra::format
