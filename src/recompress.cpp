// `retra recompress` (src/recompress.hpp). Thread safety: see the header.
#include "src/recompress.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/io/file.hpp"
#include "src/memory.hpp"
#include "src/module/module.hpp"

namespace retra {

namespace fs = std::filesystem;

namespace {

// A segment lives in `<game>-<name>.rseg` (what builds write) or, after an odd number of
// recompressions, `<game>-<name>.z.rseg`: the new file never replaces the one the manifest names
// until the manifest names it.
std::string other_file(const std::string& file) {
  constexpr std::string_view alt = ".z.rseg", plain = ".rseg";
  if (file.size() > alt.size() && file.ends_with(alt))
    return file.substr(0, file.size() - alt.size()) + std::string(plain);
  return file.substr(0, file.size() - plain.size()) + std::string(alt);
}

}  // namespace

Result<std::vector<RecompressedSegment>> recompress(const fs::path& dir,
                                                    const RecompressOptions& opt) {
  if (opt.zstd_level < 1 || opt.zstd_level > 19)
    return Error(Errc::invalid_argument, "--level must be in 1..19");
  if (opt.block_entries < 256 || opt.block_entries > (1u << 26))
    return Error(Errc::invalid_argument, "--block-size must be in 256..67108864 entries");
  auto lock = io::DirectoryLock::acquire(dir);
  if (!lock) return std::move(lock).error();
  auto db = Database::open(dir);
  if (!db) return std::move(db).error();
  auto game = module_of(**db);
  if (!game) return std::move(game).error();

  std::vector<format::SegmentRecord> todo;
  const auto& all = (*db)->manifest().segments;
  // A name selects its segment; a name that is no segment selects every segment whose name
  // continues it with '_' or '.' (the segments of one table, by the table's name).
  auto selects = [&](const std::string& name, const std::string& segment) {
    if ((*db)->has_segment(name)) return segment == name;
    return segment.size() > name.size() && segment.compare(0, name.size(), name) == 0 &&
           (segment[name.size()] == '_' || segment[name.size()] == '.');
  };
  for (const auto& name : opt.segments)
    if (std::none_of(all.begin(), all.end(), [&](const auto& s) { return selects(name, s.name); }))
      return Error(Errc::not_found, fmt::format("database '{}' has no {} segment '{}'",
                                                dir.string(), (*db)->manifest().game, name));
  for (const auto& s : all)
    if (opt.segments.empty() || std::any_of(opt.segments.begin(), opt.segments.end(),
                                            [&](const auto& n) { return selects(n, s.name); }))
      todo.push_back(s);
  if (opt.dont_care) {
    // Dependents first: marking a segment's entries reads its dependencies' exact values.
    std::vector<std::string> names;
    for (const auto& s : todo) names.push_back(s.name);
    auto order = (*game)->dependency_order(names);
    if (!order) return std::move(order).error();
    std::vector<format::SegmentRecord> sorted;
    for (auto it = order->rbegin(); it != order->rend(); ++it)
      for (const auto& s : todo)
        if (s.name == *it) sorted.push_back(s);
    if (sorted.size() != todo.size())
      return Error(Errc::internal, "the game's dependency order lost a segment");
    todo = std::move(sorted);
  }

  std::uint64_t entries = 0;  // to rewrite: the bar's estimate of the time left counts them
  for (const auto& rec : todo) entries += rec.entries;
  progress_job(opt.progress, entries);
  std::vector<RecompressedSegment> out;
  for (const auto& rec : todo) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!rec.file.ends_with(".rseg"))
      return Error(Errc::invalid_argument,
                   fmt::format("segment '{}' lives in '{}', not a .rseg file: rebuild it instead",
                               rec.name, rec.file));
    const std::string next = other_file(rec.file);
    {
      std::error_code ec;  // a leftover of an interrupted run: not in the manifest, so not data
      fs::remove(dir / next, ec);
    }
    if (opt.progress) opt.progress->phase(fmt::format("{}: reading", rec.name), 0);
    auto reader = (*db)->segment(rec.name);
    if (!reader) return std::move(reader).error();
    const format::SegmentInfo info = (*reader)->info();
    RecompressedSegment r;
    r.name = rec.name;
    r.entries = info.entries;
    r.bytes_before = (*reader)->file_bytes();
    r.codec_before = std::string(format::codec_name((*reader)->codec()));
    r.order_before = format::entry_order_text((*reader)->order());
    auto values = LargeArray<std::uint8_t>::allocate(info.entries * info.entry_bytes, false);
    if (!values) return std::move(values).error();
    RETRA_TRY((*reader)->read_all(values->span(), opt.threads));
    r.class_half_before = std::string(format::class_half_name((*reader)->class_half()));
    format::ClassHalf half = (*reader)->class_half();
    if (half == format::ClassHalf::none && opt.class_half != format::ClassHalfChoice::none &&
        info.entry_bytes == 1 && info.entries % 2 == 0) {
      auto classes = (*game)->class_bytes(rec.name);
      if (!classes) return std::move(classes).error();
      if (*classes) {
        half = format::resolve_class_half(opt.class_half, values->span(), **classes);
        format::store_class_half(values->span(), half, **classes, opt.threads);
      }
    }

    std::shared_ptr<const format::EntryRules> rules;
    if (opt.fill_rule_entries && info.entry_bytes == 1) {
      auto rl = (*game)->entry_rules(rec.name);
      if (!rl) return std::move(rl).error();
      rules = std::move(*rl);
    }
    // Don't-care entries: a file that has them keeps them as stored (its bytes are no longer
    // all values, so none can be marked again); otherwise the game marks them if asked.
    std::optional<DontCareMask> mask;
    format::DontCare dc;
    const bool had_dont_care = (*reader)->dont_care();
    if (opt.dont_care && !had_dont_care && info.entry_bytes == 1) {
      if (opt.progress) opt.progress->phase(fmt::format("{}: don't-care entries", rec.name), 0);
      auto m = (*game)->dont_care(**db, rec.name, half, (*reader)->far(), values->span(),
                                  opt.dont_care_moves, opt.threads);
      if (!m) return std::move(m).error();
      mask = std::move(*m);
      if (mask) {
        dc.entries = mask->bits;
        dc.rank = mask->rank;
        dc.moves = opt.dont_care_moves;
        r.dont_care_entries = mask->marked;
      }
    }
    if (had_dont_care) dc.moves = (*reader)->dont_care_moves();  // the flag travels with them
    r.dont_care = had_dont_care || mask.has_value();
    if (r.dont_care) r.dont_care_moves = format::dont_care_moves_name(dc.moves);
    format::SegmentInfo next_info = info;
    next_info.block_entries = opt.block_entries;
    if (opt.progress) opt.progress->phase(fmt::format("{}: writing", rec.name), 0);
    format::WriteOptions wo;
    wo.zstd_level = opt.zstd_level;
    wo.threads = opt.threads;
    wo.codec = opt.codec;
    wo.rules = rules.get();
    wo.order = opt.order;
    if (info.entry_bytes == 1) {
      auto digits = (*game)->index_digits(rec.name);
      if (!digits) return std::move(digits).error();
      wo.digits = std::move(*digits);
    }
    wo.far = (*reader)->far();  // the values beyond a byte travel with the segment
    wo.class_half = half;
    if (r.dont_care) wo.dont_care = &dc;  // no bits where the file had the flag: kept as stored
    auto written = format::write_segment(dir / next, next_info, values->span(), wo);
    if (!written) return std::move(written).error();

    format::SegmentRecord updated = rec;
    updated.file = next;
    updated.file_bytes = written->file_bytes;
    updated.raw_bytes = written->raw_bytes;
    updated.header_checksum = written->header_checksum;
    updated.build["zstd_level"] = opt.zstd_level;
    updated.build["block_entries"] = opt.block_entries;
    updated.build["codec"] = std::string(format::codec_name(written->codec));
    updated.build["rule_entries"] = written->rule_entries;
    updated.build["entry_order"] = format::entry_order_text(written->order);
    updated.build["class_half"] = std::string(format::class_half_name(half));
    updated.build["dont_care"] = r.dont_care;
    if (r.dont_care) updated.build["dont_care_moves"] = r.dont_care_moves;
    updated.build["recompressed"] = format::utc_now_iso8601();
    // The manifest keeps its order: the record replaces itself in place.
    RETRA_TRY((*db)->commit_segment(std::move(updated)));
    r.bytes_after = written->file_bytes;
    r.codec_after = std::string(format::codec_name(written->codec));
    r.order_after = format::entry_order_text(written->order);
    r.class_half_after = std::string(format::class_half_name(half));
    r.rule_entries = written->rule_entries;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress_job_advance(opt.progress, r.entries);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace retra
