// The segment format: round trips, per-block random access, and corruption of every part
// (header, table, block, truncation) reported as a typed error naming the damaged part.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <xxhash.h>

#include "src/format/segment.hpp"
#include "src/io/file.hpp"
#include "test_util.hpp"

namespace retra::format {
namespace {

SegmentInfo info(std::uint64_t entries, std::uint32_t block) {
  return {"awari", "olympiad", "awari-colex-v1", "score-i8", "7", entries, 1, block};
}

std::vector<std::uint8_t> sample(std::size_t n) {
  std::mt19937 rng(42);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) x = static_cast<std::uint8_t>(rng() % 9);  // compressible like real values
  return v;
}

void flip_byte(const std::filesystem::path& p, std::uint64_t offset) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

// Whether byte_at's cache holds a whole file decides whether the build sorts its block-wise
// lookups into that file (kernels/backward.hpp).
TEST(Segment, CacheHoldsEveryBlockOnlyWhenItHasRoomForThem) {
  test::TempDir dir;
  const auto data = sample(64 * kDefaultBlockEntries);
  ASSERT_TRUE(
      write_segment(dir / "big.rseg", info(data.size(), kDefaultBlockEntries), data, {1, 2}));
  for (std::size_t cache : {16, 48, 64, 100}) {  // rounded up to whole shards
    auto r = SegmentReader::open(dir / "big.rseg", cache);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)->caches_every_block(), cache >= 64) << cache;
  }
}

TEST(Segment, RoundTripWithPartialLastBlock) {
  test::TempDir dir;
  const auto data = sample(10'000);
  auto w = write_segment(dir / "s.rseg", info(data.size(), 1024), data, {3, 2});
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->raw_bytes, data.size());
  EXPECT_EQ(w->file_bytes, std::filesystem::file_size(dir / "s.rseg"));
  auto r = SegmentReader::open(dir / "s.rseg");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)->info().entries, data.size());
  EXPECT_EQ((*r)->info().blocks(), 10u);
  EXPECT_EQ((*r)->info().game, "awari");
  EXPECT_EQ((*r)->info().indexer, "awari-colex-v1");
  EXPECT_EQ((*r)->header_checksum(), w->header_checksum);
  std::vector<std::uint8_t> all(data.size());
  ASSERT_TRUE((*r)->read_all(all, 3));
  EXPECT_EQ(all, data);
  for (std::uint64_t i : {0ull, 1023ull, 1024ull, 9999ull, 5000ull}) {
    auto b = (*r)->byte_at(i);
    ASSERT_TRUE(b);
    EXPECT_EQ(*b, data[i]);
  }
  EXPECT_FALSE((*r)->byte_at(10'000));
  // The cache counts default-sized blocks: 64 of them hold these ten small ones, 16 (one per
  // shard) do not hold 64 default-sized ones.
  EXPECT_TRUE((*r)->caches_every_block());
  std::vector<std::uint8_t> last((*r)->raw_bytes(9));
  EXPECT_EQ(last.size(), 10'000u - 9 * 1024);
  ASSERT_TRUE((*r)->read_block(9, last));
  EXPECT_TRUE(std::equal(last.begin(), last.end(), data.begin() + 9 * 1024));
}

TEST(Segment, EmptyAndSingleEntrySegments) {
  test::TempDir dir;
  ASSERT_TRUE(write_segment(dir / "e.rseg", info(0, 1024), {}, {}));
  auto e = SegmentReader::open(dir / "e.rseg");
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ((*e)->info().entries, 0u);
  std::vector<std::uint8_t> one = {0xfe};
  ASSERT_TRUE(write_segment(dir / "o.rseg", info(1, 1024), one, {}));
  auto o = SegmentReader::open(dir / "o.rseg");
  ASSERT_TRUE(o);
  EXPECT_EQ(*(*o)->byte_at(0), 0xfe);
}

TEST(Segment, FlippedByteInABlockNamesThatBlock) {
  test::TempDir dir;
  const auto data = sample(8192);
  ASSERT_TRUE(write_segment(dir / "s.rseg", info(data.size(), 1024), data, {}));
  std::uint64_t offset;
  {
    auto r = SegmentReader::open(dir / "s.rseg");
    ASSERT_TRUE(r);
    // Find block 5's offset through the table in the file.
    auto m = io::MappedFile::open(dir / "s.rseg");
    BlockEntry e;
    std::memcpy(&e, m->bytes().data() + sizeof(SegmentHeader) + 5 * sizeof(BlockEntry), sizeof e);
    offset = e.offset + e.compressed_bytes / 2;
  }
  flip_byte(dir / "s.rseg", offset);
  auto r = SegmentReader::open(dir / "s.rseg");
  ASSERT_TRUE(r) << "header and table are intact, opening must work";
  auto bad = (*r)->byte_at(5 * 1024 + 7);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::corrupt);
  EXPECT_NE(bad.error().message().find("block 5 "), std::string::npos) << bad.error().message();
  EXPECT_TRUE((*r)->byte_at(4 * 1024));  // other blocks still read
  std::vector<std::uint8_t> all(data.size());
  auto s = (*r)->read_all(all, 2);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("block 5 "), std::string::npos);
}

TEST(Segment, DamagedHeaderTableOrLengthIsRefused) {
  test::TempDir dir;
  const auto data = sample(5000);
  ASSERT_TRUE(write_segment(dir / "s.rseg", info(data.size(), 1024), data, {}));
  const auto good = io::read_file(dir / "s.rseg").value();
  auto write = [&](const std::string& bytes) {
    std::ofstream(dir / "x.rseg", std::ios::binary | std::ios::trunc) << bytes;
  };
  auto expect_open_error = [&](std::string_view fragment) {
    auto r = SegmentReader::open(dir / "x.rseg");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), Errc::corrupt);
    EXPECT_NE(r.error().message().find(fragment), std::string::npos) << r.error().message();
  };
  std::string h = good;
  h[130] ^= 1;  // entry count
  write(h);
  expect_open_error("header checksum");
  std::string t = good;
  t[sizeof(SegmentHeader) + 3] ^= 1;
  write(t);
  expect_open_error("block table checksum");
  write(good.substr(0, good.size() - 1));
  expect_open_error("truncated");
  write(good.substr(0, 100));
  expect_open_error("shorter than");
  write(std::string(300, 'x'));
  expect_open_error("not a retra segment");
  auto missing = SegmentReader::open(dir / "missing.rseg");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
}

TEST(Segment, OverlongNamesAreRejected) {
  test::TempDir dir;
  SegmentInfo i = info(1, 1024);
  i.game = "a-game-name-that-is-too-long";
  std::vector<std::uint8_t> one = {1};
  EXPECT_FALSE(write_segment(dir / "s.rseg", i, one, {}));
  EXPECT_FALSE(std::filesystem::exists(dir / "s.rseg"));
}

TEST(AtomicFile, UncommittedWritesLeaveNothingBehind) {
  test::TempDir dir;
  ASSERT_TRUE(io::write_file_atomic(dir / "f", "old"));
  {
    auto f = io::AtomicFile::create(dir / "f");
    ASSERT_TRUE(f);
    ASSERT_TRUE(f->write("new content", 11));
    // destroyed without commit(): a crash or an error before the rename
  }
  EXPECT_EQ(io::read_file(dir / "f").value(), "old");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1) << "the temporary file must be removed";
  ASSERT_TRUE(io::write_file_atomic(dir / "f", "new"));
  EXPECT_EQ(io::read_file(dir / "f").value(), "new");
}

// Move-assigning over a live object (a mapping held between a checkpoint's header and its
// arrays) used to end the paths' lifetimes before assigning them: a double free.
TEST(AtomicFile, MoveAssignmentOverALiveFileAbandonsItOnly) {
  test::TempDir dir;
  auto a = io::AtomicFile::create(dir / "a");
  auto b = io::AtomicFile::create(dir / "b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->write("aaa", 3));
  ASSERT_TRUE(b->write("bb", 2));
  *a = std::move(*b);
  ASSERT_TRUE(a->commit());
  EXPECT_EQ(io::read_file(dir / "b").value(), "bb");
  EXPECT_FALSE(std::filesystem::exists(dir / "a"));
  ASSERT_TRUE(io::write_file_atomic(dir / "c", "ccc"));
  auto m = io::MappedFile::open(dir / "b");
  auto n = io::MappedFile::open(dir / "c");
  ASSERT_TRUE(m && n);
  *m = std::move(*n);
  EXPECT_EQ(m->bytes().size(), 3u);
  EXPECT_EQ(m->path(), dir / "c");
  *m = {};
  EXPECT_TRUE(m->bytes().empty());
}

// Every codec round-trips, through read_all, read_block and byte_at, with partial last blocks.
TEST(SegmentCodecs, EveryCodecRoundTrips) {
  test::TempDir dir;
  const auto data = sample(300'000);
  for (auto [choice, codec] : {std::pair{CodecChoice::zstd, Codec::zstd},
                               std::pair{CodecChoice::zstd_dict, Codec::zstd_dict},
                               std::pair{CodecChoice::rans_o1, Codec::rans_o1}}) {
    const auto path = dir / fmt::format("c{}.rseg", static_cast<int>(codec));
    auto w = write_segment(path, info(data.size(), 4096), data, {3, 2, choice});
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(w->codec, codec);
    auto r = SegmentReader::open(path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ((*r)->codec(), codec);
    EXPECT_EQ((*r)->version(), 2u);  // index order: version 3 only with an entry order
    EXPECT_EQ((*r)->model_bytes() > 0, codec != Codec::zstd);
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, data) << codec_name(codec);
    for (std::uint64_t i : {0ull, 4095ull, 4096ull, 299'999ull, 123'456ull})
      EXPECT_EQ(*(*r)->byte_at(i), data[i]) << codec_name(codec) << " entry " << i;
  }
}

// Wider entries: every codec choice samples and writes whole entries (block sizes in bytes).
TEST(SegmentCodecs, TwoByteEntriesRoundTripUnderEveryChoice) {
  test::TempDir dir;
  const auto data = sample(2 * 150'001);
  SegmentInfo two = info(150'001, 4096);
  two.entry_bytes = 2;
  for (auto choice :
       {CodecChoice::automatic, CodecChoice::zstd, CodecChoice::zstd_dict, CodecChoice::rans_o1}) {
    auto w = write_segment(dir / "w.rseg", two, data, {3, 2, choice});
    ASSERT_TRUE(w) << w.error().message();
    auto r = SegmentReader::open(dir / "w.rseg");
    ASSERT_TRUE(r) << r.error().message();
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, data) << codec_name(w->codec);
  }
}

// auto keeps the smaller codec: rANS for noisy small values, zstd for repeated patterns.
TEST(SegmentCodecs, AutomaticChoiceFollowsTheData) {
  test::TempDir dir;
  const auto noisy = sample(500'000);
  auto a = write_segment(dir / "a.rseg", info(noisy.size(), 65536), noisy, {3, 2});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->codec, Codec::rans_o1);
  auto z =
      write_segment(dir / "z.rseg", info(noisy.size(), 65536), noisy, {3, 2, CodecChoice::zstd});
  ASSERT_TRUE(z);
  EXPECT_LT(a->file_bytes, z->file_bytes);
  std::vector<std::uint8_t> runs(500'000);  // a noisy stretch of 1,000 values, repeated
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i] = noisy[i % 1000];
  auto b = write_segment(dir / "b.rseg", info(runs.size(), 65536), runs, {3, 2});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->codec, Codec::zstd);
}

// Rules for the tests: every entry whose index is a multiple of 3 is answered by the rules,
// with the value index % 7.
struct ThirdsRules final : EntryRules {
  void rule_values(std::uint64_t first, std::span<std::int16_t> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = (first + i) % 3 == 0 ? static_cast<std::int16_t>((first + i) % 7) : kStored;
  }
};

std::vector<std::uint8_t> with_rules(std::size_t n) {
  auto v = sample(n);
  for (std::size_t i = 0; i < n; i += 3) v[i] = static_cast<std::uint8_t>(i % 7);
  return v;
}

TEST(SegmentRules, FilledEntriesReadAsTheRulesValues) {
  test::TempDir dir;
  const auto data = with_rules(100'000);
  auto rules = std::make_shared<ThirdsRules>();
  for (auto choice : {CodecChoice::zstd, CodecChoice::rans_o1}) {
    auto w =
        write_segment(dir / "r.rseg", info(data.size(), 4096), data, {3, 2, choice, rules.get()});
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_EQ(w->rule_entries, (data.size() + 2) / 3);
    // The file really holds filler: read as stored, a rule entry repeats the entry before it.
    auto r = SegmentReader::open(dir / "r.rseg", 64, rules);
    ASSERT_TRUE(r);
    EXPECT_TRUE((*r)->rules_filled());
    std::vector<std::uint8_t> stored((*r)->raw_bytes(1));
    ASSERT_TRUE((*r)->read_stored_block(1, stored));
    EXPECT_EQ(stored[3 - 4096 % 3], stored[2 - 4096 % 3]);  // entry 4098 (a rule entry) = 4097
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, data);
    for (std::uint64_t i : {0ull, 3ull, 4098ull, 99'999ull, 4097ull})
      EXPECT_EQ(*(*r)->byte_at(i), data[i]) << i;
    // Without the rules nothing is read: filler is never a value.
    auto bare = SegmentReader::open(dir / "r.rseg");
    ASSERT_TRUE(bare);
    EXPECT_FALSE((*bare)->byte_at(1));
    EXPECT_FALSE((*bare)->read_all(all, 1));
  }
}

// Rules that answer holes alone (EntryRules::holes_only): every third entry holds 0.
struct ThirdHoles final : EntryRules {
  void rule_values(std::uint64_t first, std::span<std::int16_t> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (first + i) % 3 == 0 ? 0 : kStored;
  }
  bool holes_only() const override { return true; }
};

// A reader that only follows moves (Exact::reached_by_moves) gets every other entry exactly and
// the holes as filler, in index order and in a stored order; rules that fix values besides holes
// are always put back; a plain read_all always gives the holes' values.
TEST(SegmentRules, ReadsForMovesMayLeaveHolesFilled) {
  test::TempDir dir;
  auto data = sample(100'000);
  for (std::size_t i = 0; i < data.size(); i += 3) data[i] = 0;
  auto holes = std::make_shared<ThirdHoles>();
  for (bool ordered : {false, true}) {
    WriteOptions wo{3, 2, CodecChoice::zstd, holes.get()};
    if (ordered) {
      wo.digits = {100, 1000};
      wo.stored_order = {1, 0};
    }
    ASSERT_TRUE(write_segment(dir / "h.rseg", info(data.size(), 4096), data, wo));
    auto r = SegmentReader::open(dir / "h.rseg", 64, holes);
    ASSERT_TRUE(r);
    EXPECT_EQ(!(*r)->order().identity(), ordered);
    std::vector<std::uint8_t> all(data.size()), moves(data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, data);
    ASSERT_TRUE((*r)->read_all(moves, 2, Exact::reached_by_moves));
    std::size_t filler = 0, single_filler = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
      // One entry at a time (the build's block-wise lookups) as read_all reads them all.
      auto exact = (*r)->byte_at(i), as_moved = (*r)->byte_at(i, Exact::reached_by_moves);
      ASSERT_TRUE(exact && as_moved);
      ASSERT_EQ(*exact, data[i]) << i;
      ASSERT_EQ(*as_moved, moves[i]) << i;
      if (i % 3) {
        ASSERT_EQ(moves[i], data[i]) << i;
      } else {
        filler += moves[i] != 0;
        single_filler += *as_moved != 0;
      }
    }
    EXPECT_GT(filler, 0u);  // the holes really were left as stored
    EXPECT_EQ(single_filler, filler);
  }
  const auto thirds = with_rules(100'000);
  auto rules = std::make_shared<ThirdsRules>();
  ASSERT_TRUE(write_segment(dir / "t.rseg", info(thirds.size(), 4096), thirds,
                            {3, 2, CodecChoice::zstd, rules.get()}));
  auto r = SegmentReader::open(dir / "t.rseg", 64, rules);
  ASSERT_TRUE(r);
  std::vector<std::uint8_t> moves(thirds.size());
  ASSERT_TRUE((*r)->read_all(moves, 2, Exact::reached_by_moves));
  EXPECT_EQ(moves, thirds);
  for (std::size_t i = 0; i < thirds.size(); i += 7)
    ASSERT_EQ(*(*r)->byte_at(i, Exact::reached_by_moves), thirds[i]) << i;
}

TEST(SegmentRules, AValueTheRulesContradictIsNotFilled) {
  test::TempDir dir;
  auto data = with_rules(10'000);
  data[3 * 1000] ^= 1;  // the kernel stored something else where the rules answer
  ThirdsRules rules;
  auto w = write_segment(dir / "r.rseg", info(data.size(), 4096), data,
                         {3, 1, CodecChoice::zstd, &rules});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), Errc::internal);
  EXPECT_NE(w.error().message().find("entry 3000"), std::string::npos) << w.error().message();
  EXPECT_FALSE(std::filesystem::exists(dir / "r.rseg"));
}

// Files of format version 1 (zstd, no model, no flags) are still read.
TEST(SegmentCodecs, VersionOneFilesAreRead) {
  test::TempDir dir;
  const auto data = sample(10'000);
  ASSERT_TRUE(
      write_segment(dir / "s.rseg", info(data.size(), 1024), data, {3, 1, CodecChoice::zstd}));
  std::string bytes = io::read_file(dir / "s.rseg").value();
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  h.version = 1;
  h.header_checksum = XXH3_64bits(&h, offsetof(SegmentHeader, header_checksum));
  std::memcpy(bytes.data(), &h, sizeof h);
  ASSERT_TRUE(io::write_file_atomic(dir / "v1.rseg", bytes));
  auto r = SegmentReader::open(dir / "v1.rseg");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)->version(), 1u);
  std::vector<std::uint8_t> all(data.size());
  ASSERT_TRUE((*r)->read_all(all, 1));
  EXPECT_EQ(all, data);
  // A version 1 header with a codec is damaged, not a newer file.
  h.codec = 2;
  h.header_checksum = XXH3_64bits(&h, offsetof(SegmentHeader, header_checksum));
  std::memcpy(bytes.data(), &h, sizeof h);
  ASSERT_TRUE(io::write_file_atomic(dir / "v1.rseg", bytes));
  auto bad = SegmentReader::open(dir / "v1.rseg");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::corrupt);
}

TEST(SegmentCodecs, DamagedModelSectionIsRefused) {
  test::TempDir dir;
  const auto data = sample(100'000);
  auto w =
      write_segment(dir / "s.rseg", info(data.size(), 4096), data, {3, 1, CodecChoice::rans_o1});
  ASSERT_TRUE(w);
  const std::uint64_t model_at = sizeof(SegmentHeader) + 25 * sizeof(BlockEntry);
  flip_byte(dir / "s.rseg", model_at + 5);
  auto r = SegmentReader::open(dir / "s.rseg");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::corrupt);
  EXPECT_NE(r.error().message().find("model"), std::string::npos) << r.error().message();
}

// Values beyond a byte: listed in the far section at the end of the file (version 4), read by
// value_at and far(); the bytes stay what was written. A file without them stays version 2.
TEST(SegmentFar, FarValuesRoundTripAndDamageIsRefused) {
  test::TempDir dir;
  const auto data = sample(50'000);
  const std::vector<FarValue> far = {{7, 259}, {4096, 300}, {49'999, 1001}};
  WriteOptions wo(3, 2);
  wo.far = far;
  auto w = write_segment(dir / "s.rseg", info(data.size(), 4096), data, wo);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->file_bytes, std::filesystem::file_size(dir / "s.rseg"));
  auto r = SegmentReader::open(dir / "s.rseg");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)->version(), 4u);
  EXPECT_EQ((*r)->far(), far);
  for (const auto& [i, v] : far) {
    auto got = (*r)->value_at(i);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, v);
    EXPECT_EQ(*(*r)->byte_at(i), data[i]);
  }
  EXPECT_EQ(*(*r)->value_at(8), data[8]);
  std::vector<std::uint8_t> all(data.size());
  ASSERT_TRUE((*r)->read_all(all, 2));
  EXPECT_EQ(all, data);

  auto plain = write_segment(dir / "p.rseg", info(data.size(), 4096), data, {3, 2});
  ASSERT_TRUE(plain);
  auto pr = SegmentReader::open(dir / "p.rseg");
  ASSERT_TRUE(pr);
  EXPECT_EQ((*pr)->version(), 2u);
  EXPECT_TRUE((*pr)->far().empty());
  EXPECT_EQ((*pr)->class_half(), ClassHalf::none);  // no entry a class (SegmentClassHalves)
  EXPECT_FALSE((*pr)->class_only(0));

  // A flipped byte in a row, or a truncated section: refused on open, naming the section.
  const std::uint64_t size = std::filesystem::file_size(dir / "s.rseg");
  flip_byte(dir / "s.rseg", size - 5);
  auto bad = SegmentReader::open(dir / "s.rseg");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::corrupt);
  EXPECT_NE(bad.error().message().find("far section"), std::string::npos) << bad.error().message();
  flip_byte(dir / "s.rseg", size - 5);
  ASSERT_TRUE(SegmentReader::open(dir / "s.rseg"));
  std::filesystem::resize_file(dir / "s.rseg", size - 12);
  EXPECT_FALSE(SegmentReader::open(dir / "s.rseg"));
}

// A class half (docs/FORMAT.md, "Class halves"): the writer records which half, the reader says
// which entries hold only a class (that half, less its far values) and returns the bytes as
// written. Both halves at once, or an odd count, are refused; so are the choice's bad names.
TEST(SegmentClassHalves, TheHalfRoundTripsAndNamesItsEntries) {
  test::TempDir dir;
  const auto data = sample(50'000);
  const std::vector<FarValue> far = {{7, 259}, {30'000, 300}};
  for (const ClassHalf half : {ClassHalf::lower, ClassHalf::upper}) {
    WriteOptions wo(3, 2);
    wo.far = far;
    wo.class_half = half;
    auto w = write_segment(dir / "s.rseg", info(data.size(), 4096), data, wo);
    ASSERT_TRUE(w) << w.error().message();
    auto r = SegmentReader::open(dir / "s.rseg");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ((*r)->version(), 4u);
    EXPECT_EQ((*r)->class_half(), half);
    std::uint64_t classes = 0;
    for (std::uint64_t i = 0; i < data.size(); ++i) classes += (*r)->class_only(i);
    EXPECT_EQ(classes, data.size() / 2 - 1);  // one far value in each half
    EXPECT_EQ((*r)->class_only(0), half == ClassHalf::lower);
    EXPECT_FALSE((*r)->class_only(7));       // a far value
    EXPECT_FALSE((*r)->class_only(30'000));  // likewise
    EXPECT_EQ((*r)->class_only(49'999), half == ClassHalf::upper);
    std::vector<std::uint8_t> all(data.size());
    ASSERT_TRUE((*r)->read_all(all, 2));
    EXPECT_EQ(all, data);
  }
  // Both flags: a damaged header, refused.
  std::string bytes = io::read_file(dir / "s.rseg").value();
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  h.flags |= kClassLowerHalf | kClassUpperHalf;
  h.header_checksum = XXH3_64bits(&h, offsetof(SegmentHeader, header_checksum));
  std::memcpy(bytes.data(), &h, sizeof h);
  ASSERT_TRUE(io::write_file_atomic(dir / "both.rseg", bytes));
  auto both = SegmentReader::open(dir / "both.rseg");
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().code(), Errc::corrupt);

  // An odd number of entries has no halves.
  WriteOptions odd(3, 1);
  odd.class_half = ClassHalf::lower;
  EXPECT_FALSE(write_segment(dir / "o.rseg", info(data.size() - 1, 4096),
                             std::span(data).first(data.size() - 1), odd));
  EXPECT_FALSE(parse_class_half_choice("white"));
  EXPECT_EQ(*parse_class_half_choice("upper"), ClassHalfChoice::upper);
}

// The half whose classes save more is chosen: here the upper half's values vary within one class
// (they compress only as classes), the lower half's are one value already; and none where
// classes save nothing.
TEST(SegmentClassHalves, TheChoiceKeepsTheHalfThatShrinksMore) {
  std::array<std::uint8_t, 256> classes;
  for (int b = 0; b < 256; ++b) classes[static_cast<std::size_t>(b)] = b ? 3 : 0;
  std::vector<std::uint8_t> v(4 << 20, 3);
  std::mt19937 rng(5);
  for (std::size_t i = v.size() / 2; i < v.size(); ++i)
    v[i] = static_cast<std::uint8_t>(1 + rng() % 200);
  EXPECT_EQ(choose_class_half(v, classes), ClassHalf::upper);
  std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  EXPECT_EQ(choose_class_half(v, classes), ClassHalf::lower);
  store_class_half(v, ClassHalf::lower, classes, 2);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](std::uint8_t b) { return b == 3; }));
  // Nothing to gain (every value is its class already): neither half.
  EXPECT_EQ(choose_class_half(v, classes), ClassHalf::none);
}

// Don't-care entries (kDontCare): a marked entry is stored as the byte stored before it where
// that ranks no higher than its own, every other entry as it is; the stored blocks are compared
// with that rule applied by hand, in index order and in a stored order, with and without rule
// entries (which still read as the rules' values). The ranks here reverse the bytes' order.
TEST(SegmentDontCare, MarkedEntriesTakeTheByteBeforeThemWhereItRanksNoHigher) {
  test::TempDir dir;
  const auto data = with_rules(100'000);
  const std::uint64_t n = data.size();
  DontCare dc;
  for (int b = 0; b < 256; ++b)
    dc.rank[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(255 - b);
  std::vector<std::uint64_t> bits((n + 63) / 64, 0);
  std::mt19937 rng(7);
  for (std::uint64_t i = 0; i < n; ++i)
    if (rng() % 2) bits[i / 64] |= 1ull << (i % 64);
  dc.entries = bits;
  auto thirds = std::make_shared<ThirdsRules>();
  for (const bool ordered : {false, true})
    for (const bool ruled : {false, true}) {
      SCOPED_TRACE(fmt::format("ordered {}, rules {}", ordered, ruled));
      WriteOptions wo{3, 2, CodecChoice::zstd, ruled ? thirds.get() : nullptr};
      if (ordered) {
        wo.digits = {100, 1000};
        wo.stored_order = {1, 0};
      }
      auto plain = write_segment(dir / "p.rseg", info(n, 4096), data, wo);
      ASSERT_TRUE(plain) << plain.error().message();
      wo.dont_care = &dc;
      auto w = write_segment(dir / "d.rseg", info(n, 4096), data, wo);
      ASSERT_TRUE(w) << w.error().message();
      EXPECT_LT(w->file_bytes, plain->file_bytes);
      auto r = SegmentReader::open(dir / "d.rseg", 64, thirds);
      ASSERT_TRUE(r) << r.error().message();
      EXPECT_TRUE((*r)->dont_care());
      EXPECT_EQ((*r)->version(), 4u);
      EXPECT_FALSE((*SegmentReader::open(dir / "p.rseg", 64, thirds))->dont_care());
      // The blocks as the rule says they are stored.
      std::vector<std::uint8_t> want(n), mark(n);
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t p = (*r)->position(i);
        want[p] = data[i];
        mark[p] = ruled && i % 3 == 0 ? 1 : (bits[i / 64] >> (i % 64)) & 1 ? 2 : 0;
      }
      std::uint64_t filled = 0;
      for (std::uint64_t first = 0; first < n; first += 4096) {
        const std::uint64_t end = std::min<std::uint64_t>(n, first + 4096);
        std::uint8_t prev = 0;
        for (std::uint64_t p = first; p < end; ++p)
          if (mark[p] != 1) {
            prev = want[p];
            break;
          }
        for (std::uint64_t p = first; p < end; ++p) {
          if (mark[p] == 1 || (mark[p] == 2 && dc.rank[prev] <= dc.rank[want[p]])) {
            filled += mark[p] == 2 && want[p] != prev;
            want[p] = prev;
          }
          prev = want[p];
        }
        std::vector<std::uint8_t> stored((*r)->raw_bytes(first / 4096));
        ASSERT_TRUE((*r)->read_stored_block(first / 4096, stored));
        ASSERT_TRUE(std::equal(stored.begin(), stored.end(),
                               want.begin() + static_cast<std::ptrdiff_t>(first)))
            << "block " << first / 4096;
      }
      EXPECT_GT(filled, n / 10);
      // Read as values: rule entries exact, unmarked entries exact, marked ones never better.
      std::vector<std::uint8_t> all(n);
      ASSERT_TRUE((*r)->read_all(all, 2));
      for (std::uint64_t i = 0; i < n; ++i) {
        if ((ruled && i % 3 == 0) || !((bits[i / 64] >> (i % 64)) & 1))
          ASSERT_EQ(all[i], data[i]) << i;
        else
          ASSERT_LE(dc.rank[all[i]], dc.rank[data[i]]) << i;
        ASSERT_EQ(*(*r)->byte_at(i), all[i]) << i;
      }
    }
  // The flag alone (no entry newly marked) keeps every byte; wrong bit counts and wide entries
  // are refused.
  DontCare flag_only;
  WriteOptions wo(3, 1);
  wo.dont_care = &flag_only;
  ASSERT_TRUE(write_segment(dir / "f.rseg", info(n, 4096), data, wo));
  auto f = SegmentReader::open(dir / "f.rseg", 64, thirds);
  ASSERT_TRUE(f);
  EXPECT_TRUE((*f)->dont_care());
  std::vector<std::uint8_t> all(n);
  ASSERT_TRUE((*f)->read_all(all, 1));
  EXPECT_EQ(all, data);
  DontCare short_bits;
  short_bits.entries = std::span(bits).first(bits.size() - 1);
  wo.dont_care = &short_bits;
  EXPECT_FALSE(write_segment(dir / "s.rseg", info(n, 4096), data, wo));
  wo.dont_care = &flag_only;
  SegmentInfo wide = info(n / 2, 4096);
  wide.entry_bytes = 2;
  EXPECT_FALSE(write_segment(dir / "w.rseg", wide, data, wo));
}

// Which moves decided the don't-care entries (kDontCareCaptures) travels in the header: every
// converting move by default, the captures alone where the writer says so; the flag without
// kDontCare is a damaged header.
TEST(SegmentDontCare, TheMovesThatDecidedThemAreRecorded) {
  test::TempDir dir;
  const auto data = with_rules(10'000);
  for (const DontCareMoves moves : {DontCareMoves::conversions, DontCareMoves::captures}) {
    DontCare dc;
    dc.moves = moves;
    WriteOptions wo(3, 1);
    wo.dont_care = &dc;
    ASSERT_TRUE(write_segment(dir / "m.rseg", info(data.size(), 4096), data, wo));
    auto r = SegmentReader::open(dir / "m.rseg");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE((*r)->dont_care());
    EXPECT_EQ((*r)->dont_care_moves(), moves);
  }
  std::string bytes = io::read_file(dir / "m.rseg").value();
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  EXPECT_EQ(h.flags & (kDontCare | kDontCareCaptures), kDontCare | kDontCareCaptures);
  h.flags &= ~kDontCare;
  h.header_checksum = XXH3_64bits(&h, offsetof(SegmentHeader, header_checksum));
  std::memcpy(bytes.data(), &h, sizeof h);
  ASSERT_TRUE(io::write_file_atomic(dir / "alone.rseg", bytes));
  auto alone = SegmentReader::open(dir / "alone.rseg");
  ASSERT_FALSE(alone);
  EXPECT_EQ(alone.error().code(), Errc::corrupt);
  EXPECT_EQ(*parse_dont_care_moves("captures"), DontCareMoves::captures);
  EXPECT_EQ(*parse_dont_care_moves("conversions"), DontCareMoves::conversions);
  auto bad = parse_dont_care_moves("pushes");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::invalid_argument);
}

TEST(SegmentCodecs, UnknownCodecNamesAreRefused) {
  EXPECT_EQ(parse_codec_choice("rans-o1").value(), CodecChoice::rans_o1);
  EXPECT_EQ(parse_codec_choice("auto").value(), CodecChoice::automatic);
  auto bad = parse_codec_choice("lzma");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::invalid_argument);
}

TEST(AtomicFile, UnwritableDirectoryIsAnIoError) {
  auto f = io::AtomicFile::create("/nonexistent-dir/x");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code(), Errc::not_found);
}

}  // namespace
}  // namespace retra::format
