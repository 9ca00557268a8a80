// The JSON manifest of a database directory: which game, which segments, how each was built and
// its statistics (docs/FORMAT.md). Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "retra/error.hpp"

namespace retra::format {

inline constexpr std::string_view kManifestName = "manifest.json";
// Version 2 seals the text with a checksum (manifest_text); version 1 manifests, written before
// the seal, are still read.
inline constexpr int kManifestVersion = 2;

struct SegmentRecord {
  std::string name;  // "16"
  std::string file;  // "<game>-<segment>.rseg", relative to the directory
  std::uint64_t entries = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t header_checksum = 0;                // must equal the file's header checksum
  nlohmann::json build = nlohmann::json::object();  // kernel, threads, iterations, seconds, ...
  nlohmann::json stats = nlohmann::json::object();  // game-specific statistics
};

struct Manifest {
  std::string game;
  std::string variant;
  std::string indexer;
  std::string value_encoding;
  std::string tool_version;  // retra version that last wrote the manifest
  std::string created;       // ISO 8601 UTC
  std::string updated;
  std::vector<SegmentRecord> segments;  // kept sorted by the game's segment order
  // Segments being built whose kernel saved a checkpoint: name -> {"checkpoint" (file), "at"
  // (the level), "decided", "entries", "saved" (ISO 8601)}. Written only while not empty.
  nlohmann::json building = nlohmann::json::object();

  const SegmentRecord* find(std::string_view name) const;
};

nlohmann::json to_json(const Manifest& m);
// The manifest's file text: to_json(m) sealed by seal_manifest.
std::string manifest_text(const Manifest& m);
// One segment's record as manifest_text writes it in the segments array: its object, indented
// for that depth, without a separator.
std::string segment_record_text(const SegmentRecord& s);
// The same text as manifest_text(m), from its records' texts as segment_record_text gives them
// (texts[i] is m.segments[i]'s): a database that keeps them rewrites its manifest after each
// segment without dumping every record's JSON again (with thousands of segments, that made each
// commit cost as much as a small segment's build).
std::string manifest_text(const Manifest& m, const std::vector<std::string>& texts);
// Sets j["checksum"] to the XXH3 of the text this returns (indented JSON) with the checksum's 16
// hex digits read as zeros, so that every byte of the file, whitespace included, is covered and a
// damaged manifest is refused rather than read with another meaning.
std::string seal_manifest(nlohmann::json j);
// `where` names the file in error messages. With check_seal false a version 2 manifest's checksum
// is not checked (the fuzzer, to reach the field checks behind it); everything else is.
Result<Manifest> manifest_from_json(std::string_view text, std::string_view where,
                                    bool check_seal = true);

std::string utc_now_iso8601();

}  // namespace retra::format
