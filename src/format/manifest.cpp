// Manifest (de)serialization with strict validation. Thread safety: pure functions.
#include "src/format/manifest.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

namespace retra::format {

using nlohmann::json;

const SegmentRecord* Manifest::find(std::string_view name) const {
  for (const auto& s : segments)
    if (s.name == name) return &s;
  return nullptr;
}

json to_json(const Manifest& m) {
  json segs = json::array();
  for (const auto& s : m.segments) {
    segs.push_back({{"name", s.name},
                    {"file", s.file},
                    {"entries", s.entries},
                    {"file_bytes", s.file_bytes},
                    {"raw_bytes", s.raw_bytes},
                    {"header_checksum", fmt::format("{:016x}", s.header_checksum)},
                    {"build", s.build},
                    {"stats", s.stats}});
  }
  return {{"format", "retra-database"},
          {"format_version", kManifestVersion},
          {"game", m.game},
          {"variant", m.variant},
          {"indexer", m.indexer},
          {"value_encoding", m.value_encoding},
          {"tool", {{"name", "retra"}, {"version", m.tool_version}}},
          {"created", m.created},
          {"updated", m.updated},
          {"segments", segs}};
}

Result<Manifest> manifest_from_json(std::string_view text, std::string_view where) {
  auto bad = [&](std::string_view what) {
    return Error(Errc::corrupt, fmt::format("manifest '{}' is damaged: {}", where, what));
  };
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not valid JSON");
  if (!j.is_object() || j.value("format", "") != "retra-database")
    return Error(Errc::mismatch, fmt::format("'{}' is not a retra database manifest", where));
  if (j.value("format_version", 0) != kManifestVersion)
    return Error(Errc::mismatch,
                 fmt::format("manifest '{}' has format version {}, this retra "
                             "reads version {}",
                             where, j.value("format_version", 0), kManifestVersion));
  Manifest m;
  try {
    m.game = j.at("game").get<std::string>();
    m.variant = j.at("variant").get<std::string>();
    m.indexer = j.at("indexer").get<std::string>();
    m.value_encoding = j.at("value_encoding").get<std::string>();
    m.tool_version = j.at("tool").at("version").get<std::string>();
    m.created = j.at("created").get<std::string>();
    m.updated = j.at("updated").get<std::string>();
    for (const auto& s : j.at("segments")) {
      SegmentRecord r;
      r.name = s.at("name").get<std::string>();
      r.file = s.at("file").get<std::string>();
      r.entries = s.at("entries").get<std::uint64_t>();
      r.file_bytes = s.at("file_bytes").get<std::uint64_t>();
      r.raw_bytes = s.at("raw_bytes").get<std::uint64_t>();
      r.header_checksum = std::stoull(s.at("header_checksum").get<std::string>(), nullptr, 16);
      r.build = s.value("build", json::object());
      r.stats = s.value("stats", json::object());
      if (r.file.empty() || r.file.find('/') != std::string::npos || r.file.front() == '.')
        return bad(fmt::format("segment '{}' names an invalid file '{}'", r.name, r.file));
      m.segments.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    // nlohmann reports type errors and missing keys by exception; this is the parse boundary.
    return bad(e.what());
  }
  return m;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace retra::format
