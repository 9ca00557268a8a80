// The on-disk segment: one file of fixed-size entries, cut into blocks that are compressed
// independently (zstd, zstd with a dictionary, or order-1 rANS), with a block table, an optional
// model (dictionary or rANS tables) and XXH3 checksums (layout: docs/FORMAT.md).
// Thread safety: write_segment is reentrant; a SegmentReader may be shared by many threads
// (its block cache is locked; the mapping is read-only).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "retra/error.hpp"
#include "src/format/entry_order.hpp"
#include "src/io/file.hpp"

namespace retra::format {

static_assert(std::endian::native == std::endian::little,
              "the segment format is little-endian and retra reads it in place");

inline constexpr char kSegmentMagic[8] = {'R', 'E', 'T', 'R', 'A', 'S', 'E', 'G'};
// Version 2 added the codec and the model section (and entries the rules answer), version 3 the
// entry order section (written only by files whose entries are stored out of index order, the
// others stay version 2), version 4 the far section and class halves (only files that have them);
// versions 1 to 3 are still read.
inline constexpr std::uint32_t kSegmentVersion = 4;
inline constexpr std::uint32_t kDefaultBlockEntries = 1u << 16;
inline constexpr int kDefaultZstdLevel = 3;

// The compression a build writes with unless told otherwise. A game may choose its own
// (descriptor member kWriteDefaults, src/module/descriptor.hpp): the best trade between bytes,
// write time and cold-probe time depends on how far its values' patterns reach.
struct WriteDefaults {
  int zstd_level = kDefaultZstdLevel;
  std::uint32_t block_entries = kDefaultBlockEntries;
};

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
  std::uint32_t codec;         // Codec (version 2; 0 in version 1)
  std::uint64_t model_offset;  // the model section: zstd dictionary or rANS tables (or 0)
  std::uint64_t model_bytes;
  std::uint64_t model_checksum;   // XXH3-64 of the model section
  std::uint32_t flags;            // kRuleEntriesFilled, kEntryOrder
  std::uint32_t order_digits;     // version 3: digits of the entry order (9 section bytes each)
  std::uint64_t order_offset;     // the entry order section (or 0)
  std::uint64_t order_checksum;   // XXH3-64 of the entry order section
  std::uint64_t far_offset;       // version 4: the far section, at the end of the file (or 0)
  std::uint64_t header_checksum;  // XXH3-64 of bytes [0, 248)
};
static_assert(sizeof(SegmentHeader) == 256);
static_assert(offsetof(SegmentHeader, entries) == 128);
static_assert(offsetof(SegmentHeader, codec) == 188);
static_assert(offsetof(SegmentHeader, flags) == 216);
static_assert(offsetof(SegmentHeader, order_offset) == 224);
static_assert(offsetof(SegmentHeader, header_checksum) == 248);

// How the blocks are coded. Every block stays an independent unit under each codec.
enum class Codec : std::uint32_t {
  zstd = 0,       // one zstd frame per block
  zstd_dict = 1,  // one zstd frame per block, against the segment's dictionary (the model)
  rans_o1 = 2,    // order-1 rANS with the segment's frequency tables (the model)
};
// "zstd", "zstd-dict", "rans-o1".
std::string_view codec_name(Codec c) noexcept;

// Header flag: entries that the rules answer are stored as filler, see EntryRules.
inline constexpr std::uint32_t kRuleEntriesFilled = 1;
// Header flag (version 3): entries are stored in the order of the entry order section.
inline constexpr std::uint32_t kEntryOrder = 2;
// Header flag (version 4): the file ends with a far section, values that do not fit an entry's
// byte (a distance to zeroing of 127 plies or more): u64 count, u64 XXH3-64 of the rows, then
// count rows of u64 index and u32 value, indices ascending. A listed entry's value is the row's;
// its byte holds what the value encoding clamps it to.
inline constexpr std::uint32_t kFarValues = 4;
// A far value: an entry's index and its value.
using FarValue = std::pair<std::uint64_t, std::uint32_t>;
// Header flags (version 4): a class half. The entries of the lower half [0, entries / 2) or the
// upper half [entries / 2, entries) hold only their value's class (the game's class_of, e.g. a
// win without its distance), except those the far section lists, which keep their far value.
// The game computes such an entry's value from its moves, whose children lie in the other half
// or in other segments (include/retra/game.hpp, HasClassHalves). At most one of the two is set.
inline constexpr std::uint32_t kClassLowerHalf = 8;
inline constexpr std::uint32_t kClassUpperHalf = 16;
enum class ClassHalf : std::uint8_t { none, lower, upper };
std::string_view class_half_name(ClassHalf h) noexcept;  // "none", "lower", "upper"
// Header flag (version 4): "don't care" entries. An entry's byte may be worse for the side to
// move than its true value, and never better: the truth is the better of the byte and the best
// the game's converting moves give (moves that leave the segment, such as captures), which only
// a reader that searches those moves can restore. So a reader that reads bytes as values (a
// build's conversions, a verifier without the search) must refuse such a segment; the format
// layer gives its bytes as stored.
inline constexpr std::uint32_t kDontCare = 32;
// Header flag (version 4), only with kDontCare: the don't-care entries were decided by the
// captures among the converting moves alone (DontCareMoves::captures), so that a probe's search
// covers only those; without it, by every converting move, all of which a probe must then search
// (a search over captures alone would miss values that other converting moves gave).
inline constexpr std::uint32_t kDontCareCaptures = 64;
// Which converting moves decide the don't-care entries: all of them (captures and the game's
// other conversions), or the captures alone (fewer entries, a smaller search per probe).
enum class DontCareMoves : std::uint8_t { conversions, captures };
std::string_view dont_care_moves_name(DontCareMoves m) noexcept;  // "conversions", "captures"
// Parses "conversions" or "captures".
Result<DontCareMoves> parse_dont_care_moves(std::string_view text);
// What the writer may do with don't-care entries: store an entry the caller marks as the byte
// stored before it (in the stored order), where that byte ranks no higher than the entry's own,
// so that it extends a run. Which entries qualify is the game's to say (their true value is
// what their zeroing moves give).
struct DontCare {
  // Bit i % 64 of entries[i / 64]: entry i (index order) may hold any byte that ranks no higher.
  // Empty: no entry is newly marked (a segment that has the flag keeps it, as stored).
  std::span<const std::uint64_t> entries;
  // rank[b]: the order of the bytes' values for the side to move, higher is better.
  std::array<std::uint8_t, 256> rank{};
  // The moves that decided them (kDontCareCaptures where captures).
  DontCareMoves moves = DontCareMoves::conversions;
};

// One block table row, 24 bytes.
struct BlockEntry {
  std::uint64_t offset;    // file offset of the compressed block
  std::uint64_t checksum;  // XXH3-64 of the compressed bytes
  std::uint32_t compressed_bytes;
  std::uint32_t raw_bytes;  // block_entries * entry_bytes, less for the last block
};
static_assert(sizeof(BlockEntry) == 24);

// Entries a game's rules answer without the file: holes of the index, positions whose value the
// rules fix (a mover that can capture the king). The writer stores each as a copy of the entry
// before it, so that they extend runs instead of breaking them, and sets kRuleEntriesFilled; a
// reader of such a file puts the rules' value back into every block it decodes, so no read ever
// sees a filler. Implemented once for every game (src/module/module_of.hpp). Thread safety:
// rule_values is called concurrently.
class EntryRules {
 public:
  virtual ~EntryRules() = default;
  // out[i] = the byte the rules give entry first + i, or kStored if the entry must be stored.
  static constexpr std::int16_t kStored = -1;
  virtual void rule_values(std::uint64_t first, std::span<std::int16_t> out) const = 0;
  // Whether every entry the rules answer is a hole: a position no legal move leads to (a game
  // with validity and without terminal values). A reader that only follows moves never
  // reads one, so it may leave their filler in place (Exact::reached_by_moves) and skip the
  // rules, which cost a position step per entry.
  virtual bool holes_only() const { return false; }
  // The entries the rules answer, one bit per entry in index order, where they are exactly the
  // set bits and each of them is 0 (KnownHoles); else empty. The writer then takes the bits as
  // they are instead of asking rule_values for every entry.
  virtual std::span<const std::uint64_t> zero_bits() const { return {}; }
};

// Which entries a whole-segment read must give exactly: all of them, or only the positions a
// legal move reaches (the build kernels' conversions), where holes may keep their filler.
enum class Exact { every_entry, reached_by_moves };

// Which codec the writer uses: `automatic` estimates zstd (by compressing a sample of blocks)
// and order-1 rANS (exactly, from the model's statistics) and keeps the smaller.
enum class CodecChoice { automatic, zstd, zstd_dict, rans_o1 };
// Parses "auto", "zstd", "zstd-dict", "rans-o1".
Result<CodecChoice> parse_codec_choice(std::string_view text);

// Which entry order the writer uses, given the index's digits: `automatic` measures candidate
// orders on a sample of blocks (greedily, the fastest-varying digit first) and keeps the
// smallest, `index` stores entries in index order.
enum class OrderChoice { automatic, index };
// Parses "auto", "index".
Result<OrderChoice> parse_order_choice(std::string_view text);

struct WriteOptions {
  // The common settings positionally ({level, threads, codec, rules}); the entry order by name.
  WriteOptions(int level = kDefaultZstdLevel, int thread_count = 1,
               CodecChoice c = CodecChoice::automatic, const EntryRules* r = nullptr)
      : zstd_level(level), threads(thread_count), codec(c), rules(r) {}
  int zstd_level = kDefaultZstdLevel;
  int threads = 1;
  CodecChoice codec = CodecChoice::automatic;
  const EntryRules* rules = nullptr;  // fill the entries the rules answer (see EntryRules)
  // The index as a mixed-radix number (EntryOrder), most significant digit first; empty: the
  // entries are stored in index order. One-byte entries only.
  std::vector<std::uint64_t> digits;
  OrderChoice order = OrderChoice::automatic;
  std::vector<std::uint8_t> stored_order;  // with digits: this stored order, no measuring
  // Values beyond the entries' bytes, indices ascending (kFarValues); one-byte entries only.
  std::span<const FarValue> far;
  // The half whose entries `data` holds as classes (kClassLowerHalf, kClassUpperHalf): the writer
  // records it, the caller has already put the classes there. One-byte entries, an even count.
  ClassHalf class_half = ClassHalf::none;
  // Sets kDontCare and fills the entries it marks (DontCare); one-byte entries only.
  const DontCare* dont_care = nullptr;
};

// Which half of a segment a build stores as classes (kClassLowerHalf): `automatic` measures
// both on a sample (choose_class_half), `none` keeps every value.
enum class ClassHalfChoice { automatic, none, lower, upper };
// Parses "auto", "none", "lower", "upper".
Result<ClassHalfChoice> parse_class_half_choice(std::string_view text);
// The half of `data` (one-byte entries, an even count) whose entries shrink the file more when
// each byte b becomes classes[b]: both halves' bytes compressed as they are and as classes on a
// sample of runs spread over each half (zstd -3, index order); none when that half would shrink
// by less than 1%. Reentrant.
ClassHalf choose_class_half(std::span<const std::uint8_t> data,
                            const std::array<std::uint8_t, 256>& classes);
// The half `choice` names: lower or upper as asked, choose_class_half's for automatic, none.
ClassHalf resolve_class_half(ClassHalfChoice choice, std::span<const std::uint8_t> data,
                             const std::array<std::uint8_t, 256>& classes);
// Puts classes[b] in place of every byte b of `half` of `data`, with `threads` threads.
void store_class_half(std::span<std::uint8_t> data, ClassHalf half,
                      const std::array<std::uint8_t, 256>& classes, int threads);

// OK, or for a segment with don't-care entries (kDontCare) an error saying that `who` needs
// every entry's exact value, which only a probe's search restores, and what to do.
Status require_exact_bytes(const class SegmentReader& r, std::string_view who);

struct WriteReport {
  Codec codec = Codec::zstd;
  EntryOrder order;                // as written (identity: index order)
  std::uint64_t rule_entries = 0;  // entries stored as filler
  std::uint64_t file_bytes = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t header_checksum = 0;
  double seconds = 0;
  // Where `seconds` went, in order: checking and marking the rule entries; choosing the entry
  // order (its trials); choosing the codec (its sample, rANS model or dictionary); gathering,
  // compressing and writing the blocks; the file's tables, fsync and rename.
  double rules_seconds = 0, order_seconds = 0, codec_seconds = 0, blocks_seconds = 0,
         commit_seconds = 0;
};

// Writes `data` (entries * entry_bytes bytes) as a segment at `path`, atomically: the file appears
// under its name only complete and fsync'd. Blocks are compressed in parallel. With opt.rules,
// an entry the rules answer must hold the rules' value (else Errc::internal: filling it would
// lose a value).
Result<WriteReport> write_segment(const std::filesystem::path& path, const SegmentInfo& info,
                                  std::span<const std::uint8_t> data, const WriteOptions& opt);

// The stored ranges (first, length) whose compression measures an entry order in write_segment:
// 64 pieces of min(block_entries, 256 Ki) entries, one drawn from each 64th of [0, entries) on
// a piece boundary (deterministic); every piece of the segment where 64 do not fit.
std::vector<std::pair<std::uint64_t, std::uint64_t>> order_trial_pieces(
    std::uint64_t entries, std::uint64_t block_entries);

// Read access to one segment file. Opening validates magic, version, header and table checksums
// and the table's bounds; every block read validates that block's checksum before decompressing,
// so a flipped byte is reported (Errc::corrupt, naming file and block) instead of read as a value.
class SegmentReader {
 public:
  // cache_blocks: decompressed blocks kept for byte_at(), spread over kCacheShards locks.
  // rules: needed to read a file whose rule entries are filled (rules_filled()); a block read
  // from such a file without them is an error, never filler. The reader keeps the pointer.
  static Result<std::unique_ptr<SegmentReader>> open(const std::filesystem::path& path,
                                                     std::size_t cache_blocks = 64,
                                                     std::shared_ptr<const EntryRules> rules = {});
  static constexpr std::size_t kCacheShards = 16;
  ~SegmentReader();

  const SegmentInfo& info() const noexcept { return info_; }
  const std::filesystem::path& path() const noexcept { return file_.path(); }
  std::uint64_t file_bytes() const noexcept { return file_.bytes().size(); }
  std::uint64_t header_checksum() const noexcept { return header_checksum_; }
  std::uint32_t version() const noexcept { return version_; }
  Codec codec() const noexcept { return codec_; }
  int zstd_level() const noexcept { return zstd_level_; }
  std::uint64_t model_bytes() const noexcept { return model_bytes_; }
  bool rules_filled() const noexcept { return rules_filled_; }
  // The half whose entries hold only their class (kClassLowerHalf), and whether entry `index`
  // is one of them: in that half and without a far value.
  ClassHalf class_half() const noexcept { return class_half_; }
  bool class_only(std::uint64_t index) const noexcept {
    if (class_half_ == ClassHalf::none) return false;
    if ((index < info_.entries / 2) != (class_half_ == ClassHalf::lower)) return false;
    return !far_value(index);
  }
  // Whether the entries may hold less than their value (kDontCare): bytes are lower bounds.
  bool dont_care() const noexcept { return dont_care_; }
  // With dont_care(): which converting moves restore them (kDontCareCaptures).
  DontCareMoves dont_care_moves() const noexcept { return dont_care_moves_; }
  const EntryOrder& order() const noexcept { return order_; }
  // Where entry `index` lies in the stored order; blocks (read_block, read_stored_block,
  // raw_bytes) are numbered in the stored order, so entry i is in block position(i) /
  // block_entries.
  std::uint64_t position(std::uint64_t index) const noexcept { return order_.position(index); }

  // Decompresses block b into out (exactly raw_bytes(b) bytes), every entry exact (the rules'
  // values put back where rules_filled()), in the stored order. No caching.
  Status read_block(std::uint64_t b, std::span<std::uint8_t> out) const;
  // The same as stored: where rules_filled(), the entries the rules answer hold filler. For
  // block caches that serve single entries through entry_value(), which costs one position's
  // rules instead of a whole block's.
  Status read_stored_block(std::uint64_t b, std::span<std::uint8_t> out) const;
  // The value of entry `index` whose stored byte is `stored`.
  std::uint8_t entry_value(std::uint64_t index, std::uint8_t stored) const;
  std::uint32_t raw_bytes(std::uint64_t b) const noexcept { return table_[b].raw_bytes; }
  // All entries in index order, decompressed with `threads` threads; out.size() == entries *
  // entry_bytes. With Exact::reached_by_moves and rules that answer only holes, the holes keep
  // the file's filler (EntryRules::holes_only).
  Status read_all(std::span<std::uint8_t> out, int threads, Exact exact = Exact::every_entry) const;
  // Unmaps the file's pages from this process (they stay in the page cache and come back on the
  // next read): after read_all(), so that a decoded segment is not also resident compressed.
  void drop_resident_pages() const noexcept { file_.drop_resident_pages(); }
  // One single-byte entry, through the block cache of stored blocks (thread-safe). With
  // Exact::reached_by_moves and rules that answer only holes, the stored byte as it is: a hole
  // may read as filler, and the entry costs no position step of the rules (a build's
  // conversions read dependencies this way when they stay on disk).
  Result<std::uint8_t> byte_at(std::uint64_t index, Exact exact = Exact::every_entry) const;
  // Whether byte_at's cache holds every block of the file at once (shard b % kCacheShards holds
  // block b): then each block is decoded at most once however the entries are read.
  bool caches_every_block() const noexcept { return cached_blocks_ >= table_.size(); }
  // The far values (kFarValues), indices ascending; the far value of one entry, if it has one;
  // and the value of one entry: its far value when it has one, else its byte (thread-safe).
  const std::vector<FarValue>& far() const noexcept { return far_; }
  std::optional<std::uint32_t> far_value(std::uint64_t index) const noexcept {
    if (far_.empty()) return std::nullopt;  // most segments: inline, no search (verifier's loop)
    const auto it = std::lower_bound(far_.begin(), far_.end(), FarValue{index, 0});
    if (it != far_.end() && it->first == index) return it->second;
    return std::nullopt;
  }
  Result<std::uint32_t> value_at(std::uint64_t index) const;

 private:
  SegmentReader() = default;
  Error block_error(std::uint64_t b, std::string_view what) const;
  // Puts the rules' values back into entries [first, first + out.size()) in index order.
  void restore_rule_entries(std::uint64_t first, std::span<std::uint8_t> out) const;

  io::MappedFile file_;
  SegmentInfo info_;
  std::uint64_t header_checksum_ = 0;
  std::uint32_t version_ = 0;
  Codec codec_ = Codec::zstd;
  int zstd_level_ = 0;
  std::uint64_t model_bytes_ = 0;
  bool rules_filled_ = false;
  ClassHalf class_half_ = ClassHalf::none;
  bool dont_care_ = false;
  DontCareMoves dont_care_moves_ = DontCareMoves::conversions;
  EntryOrder order_;
  std::vector<FarValue> far_;
  std::shared_ptr<const EntryRules> rules_;
  bool holes_only_ = false;  // rules_ answer only holes (asked once: byte_at runs per lookup)
  std::vector<BlockEntry> table_;
  struct Model;  // the decoder side of the model section
  std::unique_ptr<Model> model_;

  // LRUs of decompressed blocks for point probes, sharded by block number so that threads
  // probing different blocks rarely wait for each other.
  struct Cache;
  std::unique_ptr<Cache[]> cache_;
  std::uint64_t cached_blocks_ = 0;  // kCacheShards * each shard's capacity
};

}  // namespace retra::format
