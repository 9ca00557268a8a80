// Database directories and manifests: round trips, damaged or foreign manifests, directories
// that are not databases, and segment files that do not match their manifest entry.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "awari_util.hpp"
#include "src/database.hpp"
#include "src/io/file.hpp"
#include "src/module/module.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

// A manifest with the header fields set, no segments.
format::Manifest sample_manifest(std::string variant) {
  format::Manifest m;
  m.game = "awari";
  m.variant = std::move(variant);
  m.indexer = "awari-colex-v1";
  m.value_encoding = "score-i8";
  m.tool_version = "0.1.0";
  m.created = m.updated = "2026-01-01T00:00:00Z";
  return m;
}

TEST(Manifest, RoundTrip) {
  format::Manifest m = sample_manifest("olympiad");
  format::SegmentRecord r;
  r.name = "3";
  r.file = "awari-3.rseg";
  r.entries = 364;
  r.file_bytes = 429;
  r.raw_bytes = 364;
  r.header_checksum = 0xfedcba9876543210ull;
  r.build = {{"kernel", "forward"}};
  r.stats = {{"mean", -0.5}};
  m.segments.push_back(r);
  const std::string text = format::manifest_text(m);
  auto back = format::manifest_from_json(text, "test");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->game, "awari");
  ASSERT_EQ(back->segments.size(), 1u);
  EXPECT_EQ(back->segments[0].header_checksum, 0xfedcba9876543210ull);
  EXPECT_EQ(back->segments[0].build["kernel"], "forward");
  EXPECT_EQ(back->find("3")->entries, 364u);
  EXPECT_EQ(back->find("4"), nullptr);
}

// The text a database writes from its kept record texts (segment_record_text) is the same as the
// whole manifest dumped at once, byte for byte: with no record, with nested, empty and escaped
// values (a quote, a line feed, non-ASCII), and with a segment being built.
TEST(Manifest, TextFromRecordTextsIsTheWholeDump) {
  format::Manifest m = sample_manifest("olympiad");
  auto same = [&] {
    std::vector<std::string> texts;
    for (const auto& s : m.segments) texts.push_back(format::segment_record_text(s));
    const std::string whole = format::manifest_text(m);
    EXPECT_EQ(format::manifest_text(m, texts), whole);
    auto back = format::manifest_from_json(whole, "test");
    EXPECT_TRUE(back) << back.error().message();
  };
  same();
  format::SegmentRecord r;
  r.name = "KRvK";
  r.file = "chess-KRvK.rseg";
  r.entries = 0;
  r.header_checksum = 0x0123456789abcdefull;
  m.segments.push_back(r);  // empty build and stats objects
  same();
  r.name = "KQvK \"q\"\n\u00e9";
  r.entries = 18446744073709551615ull;
  r.file_bytes = 1;
  r.raw_bytes = 2;
  r.build = {
      {"kernel", "sweep"},
      {"kernel_stats", {{"plies", 3}, {"seconds", 0.25}, {"empty", nlohmann::json::object()}}},
      {"list", {1, 2, {{"a", nlohmann::json::array()}}}},
      {"negative", -7}};
  r.stats = {{"white", {{"wdl", {{"win", 5}, {"draw", 0}}}, {"longest", nullptr}}}};
  m.segments.push_back(r);
  same();
  m.building["KQRvK"] = {{"checkpoint", "chess-KQRvK.ckpt"}, {"at", "ply 7"}, {"decided", 12}};
  same();
}

// A segment being built records its last checkpoint; the record is written only while there is
// one, reads back, and is refused when it is not an object of objects.
TEST(Manifest, BuildingRecordsRoundTripAndAreChecked) {
  format::Manifest m = sample_manifest("olympiad");
  EXPECT_EQ(format::manifest_text(m).find("building"), std::string::npos);
  m.building["28"] = {{"checkpoint", "awari-28.ckpt"},
                      {"at", "28 stones: threshold 5 level 3"},
                      {"decided", 12345},
                      {"entries", 1676056044},
                      {"saved", "2026-11-27"}};
  auto back = format::manifest_from_json(format::manifest_text(m), "test");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->building, m.building);
  for (const nlohmann::json& bad : {nlohmann::json::array({1}), nlohmann::json{{"28", 5}},
                                    nlohmann::json{{"28", {{"decided", 1e300}}}}}) {
    m.building = bad;
    auto r = format::manifest_from_json(format::manifest_text(m), "test");
    EXPECT_FALSE(r) << bad.dump();
  }
}

TEST(Manifest, DamagedOrForeignManifestsAreRefused) {
  auto a = format::manifest_from_json("{not json", "m");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code(), Errc::corrupt);
  auto b = format::manifest_from_json(R"({"name": "something else"})", "m");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code(), Errc::mismatch);
  auto c = format::manifest_from_json(
      R"({"format": "retra-database", "format_version": 1, "game": 3})", "m");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code(), Errc::corrupt);
  auto d = format::manifest_from_json(R"({"format": "retra-database", "format_version": 99})", "m");
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message().find("version 99"), std::string::npos);
  auto e = format::manifest_from_json(
      R"({"format": "retra-database", "format_version": 2, "game": "awari"})", "m");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("checksum is missing"), std::string::npos);
}

// Counts must be whole numbers >= 0 and build/stats numbers within range: converting 1e96 to an
// integer is undefined behaviour (the fuzzer found it), so such a manifest is damage.
TEST(Manifest, NumbersOutOfRangeAreRefused) {
  format::Manifest m = sample_manifest("olympiad");
  format::SegmentRecord r;
  r.name = "3";
  r.file = "awari-3.rseg";
  r.entries = 364;
  m.segments.push_back(r);
  const auto good = nlohmann::json::parse(format::manifest_text(m));
  ASSERT_TRUE(format::manifest_from_json(good.dump(2), "m", /*check_seal=*/false));
  for (const char* key : {"entries", "file_bytes", "raw_bytes"})
    for (const nlohmann::json& v :
         {nlohmann::json(1.1e96), nlohmann::json(-3), nlohmann::json(2.5), nlohmann::json("364")}) {
      auto bad = good;
      bad["segments"][0][key] = v;
      auto back = format::manifest_from_json(bad.dump(2), "m", /*check_seal=*/false);
      ASSERT_FALSE(back) << key << " = " << v.dump();
      EXPECT_EQ(back.error().code(), Errc::corrupt);
    }
  for (const char* part : {"build", "stats"}) {
    auto bad = good;
    bad["segments"][0][part] = {{"counts", {1, 2, 3e40}}};
    auto back = format::manifest_from_json(bad.dump(2), "m", /*check_seal=*/false);
    ASSERT_FALSE(back) << part;
    EXPECT_NE(back.error().message().find("out of range"), std::string::npos);
  }
}

// The seal covers every byte: any one byte changed anywhere in a manifest's text, to any of
// several values, is refused with an error, never read with another meaning.
TEST(Manifest, EveryChangedByteIsRefused) {
  format::Manifest m = sample_manifest("standard");
  for (int k = 2; k <= 3; ++k) {
    format::SegmentRecord r;
    r.name = std::to_string(k);
    r.file = "awari-" + r.name + ".rseg";
    r.entries = 100u * static_cast<unsigned>(k);
    r.header_checksum = 0x0123456789abcdefull + static_cast<unsigned>(k);
    r.stats = {{"mean", -0.5}, {"wins", k}};
    m.segments.push_back(r);
  }
  const std::string text = format::manifest_text(m);
  ASSERT_TRUE(format::manifest_from_json(text, "m"));
  // A version 1 manifest (before the seal) is still read, but not one that claims a seal.
  auto legacy = nlohmann::json::parse(text);
  legacy["format_version"] = 1;
  EXPECT_FALSE(format::manifest_from_json(legacy.dump(2), "m"));
  legacy.erase("checksum");
  EXPECT_TRUE(format::manifest_from_json(legacy.dump(2), "m"));
  int refused = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    for (int flip : {0x01, 0x02, 0x10, 0x20, 0x80}) {
      std::string bad = text;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ flip);
      auto r = format::manifest_from_json(bad, "m");
      EXPECT_FALSE(r) << "byte " << i << " ^ " << flip << " was read";
      if (!r) {
        EXPECT_NE(r.error().message().find("manifest"), std::string::npos);
        ++refused;
      }
    }
  EXPECT_EQ(refused, static_cast<int>(text.size()) * 5);
  // Cut short anywhere: refused too.
  for (std::size_t n = 0; n < text.size(); n += 7)
    EXPECT_FALSE(format::manifest_from_json(text.substr(0, n), "m"));
}

DatabaseIdentity awari_identity() { return find_module("awari")->identity(); }

TEST(DatabaseDir, MissingOrForeignDirectories) {
  test::TempDir dir;
  auto missing = Database::open(dir / "nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
  EXPECT_NE(missing.error().message().find("does not exist"), std::string::npos);

  auto empty = Database::open(dir.path());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message().find("is not a retra database"), std::string::npos);

  std::ofstream(dir / "notes.txt") << "mine";
  auto foreign = Database::open_for_build(dir.path(), awari_identity());
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), Errc::mismatch);
  EXPECT_TRUE(std::filesystem::exists(dir / "notes.txt")) << "never touch foreign files";

  std::ofstream(dir / "file") << "x";
  auto not_dir = Database::open_for_build(dir / "file", awari_identity());
  ASSERT_FALSE(not_dir);
  EXPECT_EQ(not_dir.error().code(), Errc::invalid_argument);
}

TEST(DatabaseDir, AnotherGamesDatabaseIsRefused) {
  test::TempDir dir;
  DatabaseIdentity other{"xiangqi", "asian", "xq-v1", "dtm-u8"};
  ASSERT_TRUE(Database::open_for_build(dir.path(), other));
  auto r = Database::open_for_build(dir.path(), awari_identity());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::mismatch);
  EXPECT_NE(r.error().message().find("holds a xiangqi database"), std::string::npos);
}

TEST(DatabaseDir, SegmentsMustMatchTheManifest) {
  test::TempDir dir;
  ASSERT_TRUE(build(test::awari_request(3, dir.path())));
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  EXPECT_TRUE((*db)->segment("3"));
  auto absent = (*db)->segment("9");
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code(), Errc::not_found);
  // Swap in a different file under segment 3's name: same format, different contents.
  std::filesystem::copy_file(dir / "awari-2.rseg", dir / "awari-3.rseg",
                             std::filesystem::copy_options::overwrite_existing);
  auto db2 = Database::open(dir.path());
  auto swapped = (*db2)->segment("3");
  ASSERT_FALSE(swapped);
  EXPECT_EQ(swapped.error().code(), Errc::corrupt);
  std::filesystem::remove(dir / "awari-3.rseg");
  auto db3 = Database::open(dir.path());
  auto gone = (*db3)->segment("3");
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message().find("missing"), std::string::npos);
}

TEST(DatabaseDir, ExistingSegmentsAreSkippedUnlessForced) {
  test::TempDir dir;
  BuildRequest opt = test::awari_request(5, dir.path());
  auto first = build(opt);
  ASSERT_TRUE(first);
  const auto before = std::filesystem::last_write_time(dir / "awari-5.rseg");
  opt.targets = awari::stone_range(4, 5);
  auto again = build(opt);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->size(), 2u);
  EXPECT_TRUE((*again)[0].skipped && (*again)[1].skipped);
  EXPECT_EQ(std::filesystem::last_write_time(dir / "awari-5.rseg"), before);
  opt.force = true;
  auto forced = build(opt);
  ASSERT_TRUE(forced);
  EXPECT_FALSE((*forced)[1].skipped);
  // Missing smaller segments are built first: a range starting above 0 on an empty directory.
  test::TempDir dir2;
  auto r = build(test::build_request("awari", {"6"}, dir2.path()));
  ASSERT_TRUE(r) << r.error().message();
  auto db = Database::open(dir2.path());
  for (int n = 0; n <= 6; ++n) EXPECT_TRUE((*db)->has_segment(std::to_string(n)));
}

// A request that leaves the zstd level and block size 0 gets its game's defaults (chess: -9 with
// 256 Ki-entry blocks; the others: -3 with 64 Ki), in the file and in the manifest; given values
// win.
TEST(DatabaseDir, BuildsWriteWithTheirGamesCompressionDefaults) {
  auto written = [](const std::filesystem::path& dir, const std::string& segment) {
    auto db = Database::open(dir).value();
    const auto* rec = db->manifest().find(segment);
    EXPECT_NE(rec, nullptr) << segment;
    const auto seg = db->segment(segment).value();
    EXPECT_EQ(rec->build.value("block_entries", 0u), seg->info().block_entries) << segment;
    return std::pair{rec->build.value("zstd_level", 0), seg->info().block_entries};
  };
  EXPECT_EQ(find_module("chess")->write_defaults().zstd_level, 9);
  EXPECT_EQ(find_module("awari")->write_defaults().zstd_level, format::kDefaultZstdLevel);
  test::TempDir chess, awari, given;
  ASSERT_TRUE(build(test::build_request("chess", {"KRvK"}, chess.path())));
  EXPECT_EQ(written(chess.path(), "KRvK"), (std::pair{9, 1u << 18}));
  ASSERT_TRUE(build(test::build_request("awari", {"4"}, awari.path())));
  EXPECT_EQ(written(awari.path(), "4"), (std::pair{3, format::kDefaultBlockEntries}));
  auto req = test::build_request("chess", {"KRvK"}, given.path());
  req.zstd_level = 5;
  req.block_entries = 4096;
  ASSERT_TRUE(build(req));
  EXPECT_EQ(written(given.path(), "KRvK"), (std::pair{5, 4096u}));
}

// A reader of a directory that another process writes (the ranks beside rank 0 of a cluster
// build) sees new segments after reload_manifest(), and a rebuilt segment through a new reader.
TEST(DatabaseDir, ReloadSeesWhatAnotherWriterCommitted) {
  test::TempDir dir;
  BuildRequest opt = test::awari_request(4, dir.path());
  ASSERT_TRUE(build(opt));
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  auto old_reader = (*db)->segment("4");
  ASSERT_TRUE(old_reader);
  // The reload drops this reader (its segment is rebuilt below): only its checksum is kept.
  const std::uint64_t old_checksum = (*old_reader)->header_checksum();
  opt.targets = awari::stone_range(0, 6);
  ASSERT_TRUE(build(opt));
  opt.targets = {"4"};
  opt.force = true;
  opt.block_entries = 256;  // another file for segment 4
  ASSERT_TRUE(build(opt));
  EXPECT_FALSE((*db)->has_segment("6"));
  ASSERT_TRUE((*db)->reload_manifest());
  EXPECT_TRUE((*db)->has_segment("6"));
  auto six = (*db)->segment("6");
  ASSERT_TRUE(six) << six.error().message();
  auto four = (*db)->segment("4");
  ASSERT_TRUE(four) << four.error().message();
  // The reader of the file now on disk, not the one opened before the rebuild.
  EXPECT_EQ((*four)->header_checksum(), (*db)->manifest().find("4")->header_checksum);
  EXPECT_NE((*four)->header_checksum(), old_checksum);
}

TEST(DatabaseDir, ConcurrentBuildsAreLockedOut) {
  test::TempDir dir;
  auto lock = io::DirectoryLock::acquire(dir.path());
  ASSERT_TRUE(lock);
  auto r = build(test::awari_request(2, dir.path()));
  ASSERT_FALSE(r);
  // The message names the holder (this process), so the user knows whom to wait for.
  EXPECT_NE(r.error().message().find(fmt::format("locked by retra process {} on ", ::getpid())),
            std::string::npos)
      << r.error().message();
}

// Temporary files of a writer that died (kill -9) are removed by the next writer, which holds
// the lock; those of a live process are kept.
TEST(DatabaseDir, DeadWritersTemporariesAreRemovedByTheNextWriter) {
  test::TempDir dir;
  ASSERT_TRUE(build(test::awari_request(2, dir.path())));
  pid_t dead = ::fork();  // a pid that surely exists no more once reaped
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  const auto stale = dir.path() / fmt::format("awari-3.rseg.tmp-{}", dead);
  const auto live = dir.path() / fmt::format("awari-3.rseg.tmp-{}", ::getppid());
  std::ofstream(stale) << "half";
  std::ofstream(live) << "half";
  ASSERT_TRUE(build(test::awari_request(3, dir.path())));
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
}

}  // namespace
}  // namespace retra
