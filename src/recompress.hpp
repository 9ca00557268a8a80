// `retra recompress`: rewrites the finished segments of a database with other block settings
// (zstd level, block size, codec, rule-entry filling) without rebuilding them. Values are read
// exactly (rules applied) and written again; every file and the manifest are replaced
// atomically, so an interrupted run leaves each segment either old or new, never broken.
// Thread safety: one call per directory at a time (it holds the directory's lock).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "src/format/segment.hpp"
#include "src/progress.hpp"

namespace retra {

struct RecompressOptions {
  int zstd_level = 19;
  std::uint32_t block_entries = 1u << 20;
  format::CodecChoice codec = format::CodecChoice::automatic;
  bool fill_rule_entries = true;
  format::OrderChoice order = format::OrderChoice::automatic;
  // A segment's class half is always kept (its distances are gone from the file); automatic
  // also gives one to segments that can have one and do not (docs/FORMAT.md, "Class halves"),
  // none leaves those as they are.
  format::ClassHalfChoice class_half = format::ClassHalfChoice::automatic;
  // Stores don't-care entries where the game's probes restore them by a search (docs/FORMAT.md,
  // kDontCare): smaller archives, probes that search, and files that builds and `verify` refuse.
  // The segments are then rewritten dependents first, so that each one's dependencies are still
  // exact when its entries are marked. A segment that has the flag keeps it either way.
  bool dont_care = false;
  // Which converting moves decide them (kDontCareCaptures): the captures alone give fewer
  // entries than every conversion, and probes that search fewer moves.
  format::DontCareMoves dont_care_moves = format::DontCareMoves::captures;
  // Segment names; a name that is no segment selects every segment continuing it with '_' or
  // '.' (the segments of one table, by the table's name). Empty: all.
  std::vector<std::string> segments;
  int threads = 1;
  Progress* progress = nullptr;
};

struct RecompressedSegment {
  std::string name;
  std::uint64_t entries = 0;
  std::uint64_t bytes_before = 0, bytes_after = 0;
  std::string codec_before, codec_after;
  std::string order_before, order_after;            // entry_order_text()
  std::string class_half_before, class_half_after;  // class_half_name()
  std::uint64_t rule_entries = 0;
  bool dont_care = false;               // the file has don't-care entries (kDontCare)
  std::uint64_t dont_care_entries = 0;  // entries newly marked don't care
  std::string dont_care_moves;          // with dont_care: dont_care_moves_name()
  double seconds = 0;
};

Result<std::vector<RecompressedSegment>> recompress(const std::filesystem::path& dir,
                                                    const RecompressOptions& opt);

}  // namespace retra
