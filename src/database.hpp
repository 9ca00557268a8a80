// A database directory: manifest.json plus one segment file per segment. Opening checks that the
// directory holds a retra database of the expected game; segment readers open lazily.
// Thread safety: segment() may be called from many threads, also while commit_segment() runs
// (both lock); manifest() and has_segment() read the manifest unlocked, so callers that commit
// while others read it serialize those themselves; commit_segment() must not run concurrently
// with itself.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "retra/error.hpp"
#include "src/format/manifest.hpp"
#include "src/format/segment.hpp"

namespace retra {

namespace fs = std::filesystem;

// What identifies the contents of a database: game, rules variant, indexer and value encoding.
struct DatabaseIdentity {
  std::string game, variant, indexer, value_encoding;
};

class Database {
 public:
  // Opens an existing database. Errors: the directory is missing, is not a retra database, or its
  // manifest is damaged.
  static Result<std::unique_ptr<Database>> open(const fs::path& dir);
  // Opens a database for building: creates the directory and an empty manifest if needed and
  // refuses a directory that holds another game's database or unrelated files.
  static Result<std::unique_ptr<Database>> open_for_build(const fs::path& dir,
                                                          const DatabaseIdentity& id);

  const fs::path& dir() const noexcept { return dir_; }
  const format::Manifest& manifest() const noexcept { return manifest_; }
  // Reads the manifest again from disk, for a reader of a directory that another process
  // writes (the ranks beside rank 0 of a cluster build, between segments); readers of segments
  // whose record changed are dropped. Not while another thread reads manifest() or a reader.
  Status reload_manifest();
  bool has_segment(std::string_view name) const { return manifest_.find(name) != nullptr; }
  fs::path segment_path(std::string_view name) const;

  // The reader of a segment listed in the manifest; checks that the file is the one the manifest
  // recorded (header checksum, game, indexer, entry count).
  Result<const format::SegmentReader*> segment(std::string_view name) const;

  // Records a freshly written segment in the manifest (atomically rewritten). `order` sorts the
  // segment list (the game's segment order); without it segments stay in commit order.
  Status commit_segment(format::SegmentRecord record,
                        bool (*order)(const std::string&, const std::string&) = nullptr);
  // Records how far the build of a segment not yet committed got (its last checkpoint);
  // commit_segment forgets it.
  Status record_building(const std::string& name, nlohmann::json progress);

 private:
  Database() = default;
  Status save_manifest();

  fs::path dir_;
  format::Manifest manifest_;
  // Each record's text in the manifest file (format::segment_record_text), by segment name:
  // made once per record, not at every save. commit_segment drops the committed one's; a
  // reload drops them all.
  std::map<std::string, std::string, std::less<>> record_texts_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::unique_ptr<format::SegmentReader>, std::less<>> readers_;
};

// What `retra info --json` and the Python module's info() report: identity, every segment's
// sizes, compression and build record, and the totals.
nlohmann::json info_json(const Database& db);

}  // namespace retra
