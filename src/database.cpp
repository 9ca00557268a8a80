// Database directories: manifest loading, validation and atomic updates.
// Thread safety: see include/retra/database.hpp.
#include "src/database.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "src/io/file.hpp"
#include "src/module/module.hpp"
#include "src/version.hpp"

namespace retra {

namespace {
Result<format::Manifest> load_manifest(const fs::path& dir) {
  const fs::path mpath = dir / format::kManifestName;
  auto text = io::read_file(mpath);
  if (!text) {
    if (text.error().code() == Errc::not_found)
      return Error(Errc::not_found,
                   fmt::format("'{}' is not a retra database (no {}); build one with `retra "
                               "build <game> ... --db {}`",
                               dir.string(), format::kManifestName, dir.string()));
    return std::move(text).error();
  }
  return format::manifest_from_json(*text, mpath.string());
}
}  // namespace

Result<std::unique_ptr<Database>> Database::open(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return Error(Errc::not_found,
                 fmt::format("database directory '{}' does not exist", dir.string()));
  if (!fs::is_directory(dir, ec))
    return Error(Errc::invalid_argument, fmt::format("'{}' is not a directory", dir.string()));
  auto m = load_manifest(dir);
  if (!m) return std::move(m).error();
  std::unique_ptr<Database> db(new Database());
  db->dir_ = dir;
  db->manifest_ = std::move(*m);
  return db;
}

Status Database::reload_manifest() {
  auto m = load_manifest(dir_);
  if (!m) return std::move(m).error();
  std::lock_guard lock(mu_);
  for (auto it = readers_.begin(); it != readers_.end();) {
    const format::SegmentRecord* was = manifest_.find(it->first);
    const format::SegmentRecord* now = m->find(it->first);
    const bool same =
        was && now && was->file == now->file && was->header_checksum == now->header_checksum;
    it = same ? std::next(it) : readers_.erase(it);
  }
  manifest_ = std::move(*m);
  record_texts_.clear();
  return {};
}

Result<std::unique_ptr<Database>> Database::open_for_build(const fs::path& dir,
                                                           const DatabaseIdentity& id) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return Error(
        Errc::invalid_argument,
        fmt::format("'{}' exists and is not a directory; choose another --db", dir.string()));
  if (!fs::exists(dir / format::kManifestName, ec)) {
    // A new database: the directory must be new or empty, so that retra never mixes its files
    // with someone else's.
    if (fs::exists(dir, ec)) {
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name != ".retra.lock" && name.find(".tmp-") == std::string::npos)
          return Error(Errc::mismatch,
                       fmt::format("'{}' is not empty and holds no retra database; choose an "
                                   "empty or new directory for --db",
                                   dir.string()));
      }
    }
    fs::create_directories(dir, ec);
    if (ec)
      return Error(Errc::io, fmt::format("cannot create database directory '{}': {}", dir.string(),
                                         ec.message()));
    std::unique_ptr<Database> db(new Database());
    db->dir_ = dir;
    db->manifest_.game = id.game;
    db->manifest_.variant = id.variant;
    db->manifest_.indexer = id.indexer;
    db->manifest_.value_encoding = id.value_encoding;
    db->manifest_.tool_version = std::string(kVersion);
    db->manifest_.created = db->manifest_.updated = format::utc_now_iso8601();
    RETRA_TRY(db->save_manifest());
    return db;
  }
  auto db = open(dir);
  if (!db) return db;
  const auto& m = (*db)->manifest_;
  if (m.game != id.game || m.variant != id.variant || m.indexer != id.indexer ||
      m.value_encoding != id.value_encoding)
    return Error(Errc::mismatch,
                 fmt::format("'{}' holds a {} database ({}, {}, {}), not {} ({}, {}, {}); choose "
                             "another --db",
                             dir.string(), m.game, m.variant, m.indexer, m.value_encoding, id.game,
                             id.variant, id.indexer, id.value_encoding));
  return db;
}

fs::path Database::segment_path(std::string_view name) const {
  return dir_ / fmt::format("{}-{}.rseg", manifest_.game, name);
}

Result<const format::SegmentReader*> Database::segment(std::string_view name) const {
  std::lock_guard lock(mu_);
  if (auto it = readers_.find(name); it != readers_.end()) return it->second.get();
  const format::SegmentRecord* rec = manifest_.find(name);
  if (!rec)
    return Error(Errc::not_found,
                 fmt::format("database '{}' has no {} segment '{}'; build it first", dir_.string(),
                             manifest_.game, name));
  auto r = format::SegmentReader::open(dir_ / rec->file);
  if (r && (*r)->rules_filled()) {
    // The file leaves some entries to the game's rules: open it with them, so that every read
    // sees the rules' values (src/format/segment.hpp, EntryRules).
    const GameModule* game = find_module(manifest_.game);
    if (!game)
      return Error(Errc::mismatch, fmt::format("segment '{}' needs the rules of game '{}', which "
                                               "this retra does not know",
                                               (dir_ / rec->file).string(), manifest_.game));
    auto rules = game->entry_rules(name);
    if (!rules) return std::move(rules).error();
    r = format::SegmentReader::open(dir_ / rec->file, 64, std::move(*rules));
  }
  if (!r) {
    Error e = std::move(r).error();
    if (e.code() == Errc::not_found)
      return Error(Errc::corrupt, fmt::format("segment file '{}' listed in the manifest is "
                                              "missing; rebuild it with --force",
                                              (dir_ / rec->file).string()));
    return e;
  }
  const auto& info = (*r)->info();
  if (info.game != manifest_.game || info.variant != manifest_.variant ||
      info.indexer != manifest_.indexer || info.value_encoding != manifest_.value_encoding ||
      info.name != rec->name || info.entries != rec->entries ||
      (*r)->header_checksum() != rec->header_checksum)
    return Error(Errc::corrupt,
                 fmt::format("segment file '{}' is not the one the manifest recorded (header "
                             "differs); rebuild it with --force",
                             (dir_ / rec->file).string()));
  const format::SegmentReader* p = r->get();
  readers_.emplace(std::string(name), std::move(*r));
  return p;
}

Status Database::commit_segment(format::SegmentRecord record,
                                bool (*order)(const std::string&, const std::string&)) {
  // Under the lock: readers may look segments up (segment()) while a build commits another.
  std::lock_guard lock(mu_);
  readers_.erase(record.name);  // a rebuilt file must be reopened
  record_texts_.erase(record.name);
  manifest_.building.erase(record.name);
  auto& segs = manifest_.segments;
  auto it =
      std::find_if(segs.begin(), segs.end(), [&](const auto& s) { return s.name == record.name; });
  std::string replaced;  // the file the record named before, if another one
  if (it != segs.end()) {
    if (it->file != record.file) replaced = it->file;
    *it = std::move(record);
  } else {
    segs.push_back(std::move(record));
  }
  if (order)
    std::stable_sort(segs.begin(), segs.end(),
                     [&](const auto& a, const auto& b) { return order(a.name, b.name); });
  manifest_.updated = format::utc_now_iso8601();
  manifest_.tool_version = std::string(kVersion);
  RETRA_TRY(save_manifest());
  // Only once the manifest names the new file may the old one go (`retra recompress` writes a
  // segment under a second name so that a crash leaves the manifest's file intact).
  if (!replaced.empty()) {
    std::error_code ec;
    fs::remove(dir_ / replaced, ec);  // a leftover is harmless: the next recompress removes it
  }
  return {};
}

Status Database::record_building(const std::string& name, nlohmann::json progress) {
  std::lock_guard lock(mu_);
  manifest_.building[name] = std::move(progress);
  return save_manifest();
}

Status Database::save_manifest() {
  std::vector<std::string> texts;
  texts.reserve(manifest_.segments.size());
  for (const auto& s : manifest_.segments) {
    auto it = record_texts_.find(s.name);
    if (it == record_texts_.end())
      it = record_texts_.emplace(s.name, format::segment_record_text(s)).first;
    texts.push_back(it->second);
  }
  return io::write_file_atomic(dir_ / format::kManifestName,
                               format::manifest_text(manifest_, texts));
}

nlohmann::json info_json(const Database& db) {
  const auto& m = db.manifest();
  auto ratio = [](std::uint64_t raw, std::uint64_t file) {
    return file ? static_cast<double>(raw) / static_cast<double>(file) : 0.0;
  };
  std::uint64_t entries = 0, file = 0, raw = 0;
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : m.segments) {
    entries += s.entries;
    file += s.file_bytes;
    raw += s.raw_bytes;
    segs.push_back({{"name", s.name},
                    {"file", s.file},
                    {"entries", s.entries},
                    {"file_bytes", s.file_bytes},
                    {"raw_bytes", s.raw_bytes},
                    {"compression", ratio(s.raw_bytes, s.file_bytes)},
                    {"build", s.build}});
  }
  nlohmann::json j = {{"game", m.game},
                      {"variant", m.variant},
                      {"indexer", m.indexer},
                      {"value_encoding", m.value_encoding},
                      {"tool_version", m.tool_version},
                      {"created", m.created},
                      {"updated", m.updated},
                      {"segments", segs},
                      {"entries", entries},
                      {"file_bytes", file},
                      {"raw_bytes", raw},
                      {"compression", ratio(raw, file)}};
  if (!m.building.empty()) j["building"] = m.building;
  return j;
}

}  // namespace retra
