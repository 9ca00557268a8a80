// Manifest (de)serialization with strict validation. Thread safety: pure functions.
#include "src/format/manifest.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>
#include <xxhash.h>

namespace retra::format {

using nlohmann::json;

const SegmentRecord* Manifest::find(std::string_view name) const {
  for (const auto& s : segments)
    if (s.name == name) return &s;
  return nullptr;
}

namespace {
// Everything of the manifest but its records (an empty segments array).
json top_json(const Manifest& m) {
  json j = {{"format", "retra-database"},
            {"format_version", kManifestVersion},
            {"game", m.game},
            {"variant", m.variant},
            {"indexer", m.indexer},
            {"value_encoding", m.value_encoding},
            {"tool", {{"name", "retra"}, {"version", m.tool_version}}},
            {"created", m.created},
            {"updated", m.updated},
            {"segments", json::array()}};
  if (!m.building.empty()) j["building"] = m.building;
  return j;
}
}  // namespace

json to_json(const Manifest& m) {
  json j = top_json(m);
  json& segs = j["segments"];
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
  return j;
}

namespace {
constexpr std::string_view kSealKey = "\"checksum\": \"";
constexpr std::string_view kSealZero = "0000000000000000";

// The seal of `text`, whose checksum field holds `stored` at `pos`: XXH3 with those digits zeroed.
std::uint64_t seal_of(std::string text, std::size_t pos) {
  text.replace(pos, kSealZero.size(), kSealZero);
  return XXH3_64bits(text.data(), text.size());
}
}  // namespace

namespace {
// The text of a manifest dumped with its checksum's digits zero, sealed (seal_manifest).
std::string seal_text(std::string text) {
  const std::size_t pos = text.find(fmt::format("{}{}\"", kSealKey, kSealZero));
  const std::string hex = fmt::format("{:016x}", seal_of(text, pos + kSealKey.size()));
  text.replace(pos + kSealKey.size(), hex.size(), hex);
  return text;
}
}  // namespace

std::string seal_manifest(json j) {
  j["checksum"] = std::string(kSealZero);
  return seal_text(j.dump(2) + "\n");
}

std::string manifest_text(const Manifest& m) { return seal_manifest(to_json(m)); }

namespace {
// j.dump(2) as it reads `depth` levels down in an indented dump: every line after the first
// indented by 2 * depth spaces more (a dump has no raw line feed inside a string).
std::string dump_at(const json& j, int depth) {
  const std::string text = j.dump(2);
  const std::string pad(static_cast<std::size_t>(2 * depth), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}
}  // namespace

std::string segment_record_text(const SegmentRecord& s) {
  // The keys in json's (std::map) order, as to_json's object dumps them, at depth 2 (the
  // manifest's object, then its segments array).
  const std::pair<const char*, std::string> fields[] = {
      {"build", dump_at(s.build, 3)},
      {"entries", json(s.entries).dump()},
      {"file", json(s.file).dump()},
      {"file_bytes", json(s.file_bytes).dump()},
      {"header_checksum", json(fmt::format("{:016x}", s.header_checksum)).dump()},
      {"name", json(s.name).dump()},
      {"raw_bytes", json(s.raw_bytes).dump()},
      {"stats", dump_at(s.stats, 3)}};
  std::string out = "    {";
  for (std::size_t i = 0; i < std::size(fields); ++i)
    out += fmt::format("{}\n      \"{}\": {}", i ? "," : "", fields[i].first, fields[i].second);
  return out + "\n    }";
}

std::string manifest_text(const Manifest& m, const std::vector<std::string>& texts) {
  assert(texts.size() == m.segments.size());
  json j = top_json(m);
  j["checksum"] = std::string(kSealZero);
  std::string text = j.dump(2) + "\n";
  if (!texts.empty()) {
    // The manifest's own key (one level down: no key inside "building" is indented so).
    constexpr std::string_view kEmpty = "\n  \"segments\": []";
    const std::size_t at = text.find(kEmpty);
    assert(at != std::string::npos);
    std::string records = "\n  \"segments\": [\n";
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (i > 0) records += ",\n";
      records += texts[i];
    }
    records += "\n  ]";
    text.replace(at, kEmpty.size(), records);
  }
  return seal_text(std::move(text));
}

namespace {
// A count (entries, bytes): a whole JSON number >= 0. nlohmann would also convert a float, and
// one out of range (1e96) is undefined behaviour, so anything else is refused as damage.
std::uint64_t count_at(const json& s, const char* key) {
  const json& v = s.at(key);
  if (!v.is_number_unsigned())
    throw std::invalid_argument(fmt::format("'{}' is not a whole number >= 0", key));
  return v.get<std::uint64_t>();
}

// Readers take build and stats numbers as integers of up to 32 bits or as doubles; a float of
// 2^31 or more there can only be damage, and converting it to an integer would be undefined.
bool numbers_in_range(const json& j) {
  if (j.is_number_float()) return std::abs(j.get<double>()) < 2147483648.0;
  if (j.is_structured())
    return std::all_of(j.begin(), j.end(), [](const json& x) { return numbers_in_range(x); });
  return true;
}
}  // namespace

Result<Manifest> manifest_from_json(std::string_view text, std::string_view where,
                                    bool check_seal) {
  auto bad = [&](std::string_view what) {
    return Error(Errc::corrupt, fmt::format("manifest '{}' is damaged: {}", where, what));
  };
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not valid JSON");
  if (!j.is_object() || j.value("format", "") != "retra-database")
    return Error(Errc::mismatch, fmt::format("'{}' is not a retra database manifest", where));
  const json& version = j.contains("format_version") ? j["format_version"] : json();
  const int v = version.is_number_integer() ? version.get<int>() : 0;
  if (v != 1 && v != kManifestVersion)
    return Error(Errc::mismatch,
                 fmt::format("manifest '{}' has format version {}, this retra "
                             "reads versions 1 and {}; rebuild the database with this version",
                             where, version.dump(), kManifestVersion));
  if (v == 1 && j.contains("checksum"))  // version 1 had no seal: a damaged "2"
    return bad("a version 1 manifest with a checksum");
  if (v == kManifestVersion && check_seal) {
    const json& c = j.contains("checksum") ? j["checksum"] : json();
    if (!c.is_string() || c.get_ref<const std::string&>().size() != kSealZero.size())
      return bad("its checksum is missing");
    const std::string& stored = c.get_ref<const std::string&>();
    const std::size_t pos = text.find(fmt::format("{}{}\"", kSealKey, stored));
    if (pos == std::string_view::npos ||
        fmt::format("{:016x}", seal_of(std::string(text), pos + kSealKey.size())) != stored)
      return bad(
          "its checksum does not match its text (the file was changed after retra wrote it); "
          "restore it from a copy, or rebuild the database");
  }
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
      r.entries = count_at(s, "entries");
      r.file_bytes = count_at(s, "file_bytes");
      r.raw_bytes = count_at(s, "raw_bytes");
      r.header_checksum = std::stoull(s.at("header_checksum").get<std::string>(), nullptr, 16);
      r.build = s.value("build", json::object());
      r.stats = s.value("stats", json::object());
      if (!numbers_in_range(r.build) || !numbers_in_range(r.stats))
        return bad(fmt::format("segment '{}' has a number out of range", r.name));
      if (r.file.empty() || r.file.find('/') != std::string::npos || r.file.front() == '.')
        return bad(fmt::format("segment '{}' names an invalid file '{}'", r.name, r.file));
      m.segments.push_back(std::move(r));
    }
    if (j.contains("building")) {
      m.building = j["building"];
      if (!m.building.is_object() || !numbers_in_range(m.building))
        return bad("its 'building' record is not an object of segments");
      for (const auto& [name, b] : m.building.items())
        if (!b.is_object()) return bad(fmt::format("building record '{}' is not an object", name));
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
