// `retra recompress`: finished segments rewritten with other settings keep every value, verify,
// replace their files without ever leaving the manifest naming a missing or half-written file,
// and fill the entries the rules answer (xiangqi) where the build did not.
#include <gtest/gtest.h>

#include <filesystem>

#include <random>

#include "retra/probe.hpp"
#include "src/database.hpp"
#include "src/games/xiangqi/board.hpp"
#include "src/games/xiangqi/game.hpp"
#include "src/recompress.hpp"
#include "src/verify/verify.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::vector<std::int8_t>> all_values(const fs::path& dir) {
  auto db = Database::open(dir).value();
  std::map<std::string, std::vector<std::int8_t>> v;
  for (const auto& s : db->manifest().segments) v[s.name] = test::read_segment(*db, s.name);
  return v;
}

int rseg_files(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".rseg";
  return n;
}

TEST(Recompress, AwariValuesAndVerificationSurviveEveryCodec) {
  test::TempDir dir;
  ASSERT_TRUE(build(
      test::build_request("awari", {"0", "1", "2", "3", "4", "5", "6", "7", "8"}, dir.path())));
  const auto before = all_values(dir.path());
  const int files = rseg_files(dir.path());
  RecompressOptions opt;
  opt.threads = 2;
  opt.block_entries = 1024;
  opt.codec = format::CodecChoice::zstd;
  auto r = recompress(dir.path(), opt);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->size(), 9u);
  for (const auto& s : *r) EXPECT_EQ(s.codec_after, "zstd");
  {
    auto db = Database::open(dir.path()).value();
    for (const auto& s : db->manifest().segments) {
      EXPECT_TRUE(s.file.ends_with(".z.rseg")) << s.file;
      EXPECT_EQ(s.build.value("block_entries", 0u), 1024u);
      EXPECT_EQ((*db->segment(s.name))->info().block_entries, 1024u);
    }
  }
  EXPECT_EQ(rseg_files(dir.path()), files) << "the replaced files are removed";
  EXPECT_EQ(all_values(dir.path()), before);
  // And back, with rANS, under the build's file names.
  opt.codec = format::CodecChoice::rans_o1;
  opt.block_entries = 65536;
  ASSERT_TRUE(recompress(dir.path(), opt));
  {
    auto db = Database::open(dir.path()).value();
    for (const auto& s : db->manifest().segments) {
      EXPECT_FALSE(s.file.ends_with(".z.rseg")) << s.file;
      EXPECT_EQ(s.build.value("codec", ""), "rans-o1");
    }
    auto v = verify(*db, {2, nullptr, false});
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_TRUE(v->ok);
  }
  EXPECT_EQ(rseg_files(dir.path()), files);
  EXPECT_EQ(all_values(dir.path()), before);
}

TEST(Recompress, LeftoversOfAnInterruptedRunAreReplaced) {
  test::TempDir dir;
  ASSERT_TRUE(build(test::build_request("awari", {"5"}, dir.path())));
  const auto before = all_values(dir.path());
  // A run killed after writing its new file but before the manifest named it.
  fs::copy_file(dir / "awari-5.rseg", dir / "awari-5.z.rseg");
  RecompressOptions opt;
  opt.segments = {"5"};
  auto r = recompress(dir.path(), opt);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->size(), 1u);
  EXPECT_FALSE(fs::exists(dir / "awari-5.rseg"));
  EXPECT_EQ(all_values(dir.path()), before);
}

TEST(Recompress, XiangqiFillsWhatTheRulesAnswer) {
  test::TempDir dir;
  auto req = test::build_request("xiangqi", {"KRKG"}, dir.path());
  req.fill_rule_entries = false;
  ASSERT_TRUE(build(req));
  const auto before = all_values(dir.path());
  {
    auto db = Database::open(dir.path()).value();
    EXPECT_FALSE((*db->segment("KRKG"))->rules_filled());
  }
  RecompressOptions opt;
  opt.threads = 2;
  opt.zstd_level = 3;  // the build's settings: only the filling differs
  opt.block_entries = format::kDefaultBlockEntries;
  auto r = recompress(dir.path(), opt);
  ASSERT_TRUE(r) << r.error().message();
  for (const auto& s : *r) {
    EXPECT_GT(s.rule_entries, 0u) << s.name << ": every table has positions whose king hangs";
    EXPECT_LE(s.bytes_after, s.bytes_before) << s.name;
  }
  auto db = Database::open(dir.path()).value();
  EXPECT_TRUE((*db->segment("KRKG"))->rules_filled());
  EXPECT_EQ(all_values(dir.path()), before);
  auto v = verify(*db, {2, nullptr, false});
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_TRUE(v->ok);
}

// A segment stored in another entry order (the xiangqi index's digits permuted): every value
// the same through read_all, verify, single probes by index and batches of positions.
TEST(Recompress, XiangqiInAnotherEntryOrderProbesTheSame) {
  test::TempDir a, b;
  auto req = test::build_request("xiangqi", {"KCPK"}, a.path());
  req.order = format::OrderChoice::index;
  ASSERT_TRUE(build(req));
  req.db = b.path();
  ASSERT_TRUE(build(req));
  RecompressOptions opt;
  opt.threads = 2;
  opt.zstd_level = 3;
  opt.block_entries = 65536;
  auto r = recompress(b.path(), opt);
  ASSERT_TRUE(r) << r.error().message();
  {
    auto db = Database::open(b.path()).value();
    const auto& rec = *db->manifest().find("KCPK");
    EXPECT_NE(rec.build.value("entry_order", ""), "index") << "KCPK compresses better reordered";
    EXPECT_FALSE((*db->segment("KCPK"))->order().identity());
    auto v = verify(*db, {2, nullptr, false});
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_TRUE(v->ok);
  }
  const auto want = all_values(a.path());
  EXPECT_EQ(all_values(b.path()), want);

  probe::Value err;
  auto pa = probe::Prober::open(a.path().string(), {.cache_bytes = 1 << 20}, &err);
  auto pb = probe::Prober::open(b.path().string(), {.cache_bytes = 1 << 20}, &err);
  ASSERT_TRUE(pa && pb) << err.message;
  const auto& kcpk = want.at("KCPK");
  for (std::uint64_t i = 0; i < kcpk.size(); i += 7) {
    const auto v = pb->stored("KCPK", i);
    ASSERT_TRUE(v) << v.message;
    ASSERT_EQ(static_cast<std::int8_t>(v.value), kcpk[i]) << i;
  }
  // Positions in batches (each block read once, sorted by where the entries lie on disk).
  auto m = xiangqi::parse_material("KCPK");
  auto g = xiangqi::Game::closure({*m}).value();
  const int s = g->find("KCPK");
  std::mt19937_64 rng(5);
  std::vector<std::string> fens;
  while (fens.size() < 3000) {
    const auto p = g->unrank(s, rng() % g->segment_size(s));
    if (p.valid) fens.push_back(xiangqi::to_fen(g->board(s, p), p.side));
  }
  std::vector<std::string_view> views(fens.begin(), fens.end());
  std::vector<probe::Value> va(views.size()), vb(views.size());
  pa->probe_batch(views, va);
  pb->probe_batch(views, vb);
  int ok = 0;
  for (std::size_t k = 0; k < views.size(); ++k) {
    ok += va[k] ? 1 : 0;
    ASSERT_EQ(va[k].status, vb[k].status) << fens[k];
    ASSERT_EQ(va[k].value, vb[k].value) << fens[k];
    const auto one = pb->probe(fens[k]);
    ASSERT_EQ(one.value, va[k].value) << fens[k];
  }
  EXPECT_GT(ok, 2000);
}

TEST(Recompress, BadRequestsAreRefused) {
  test::TempDir dir;
  ASSERT_TRUE(build(test::build_request("awari", {"3"}, dir.path())));
  RecompressOptions opt;
  opt.segments = {"30"};
  auto r = recompress(dir.path(), opt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::not_found);
  opt.segments = {};
  opt.zstd_level = 40;
  EXPECT_EQ(recompress(dir.path(), opt).error().code(), Errc::invalid_argument);
  opt.zstd_level = 3;
  auto missing = recompress(dir / "nothing-here", opt);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("does not exist"), std::string::npos)
      << missing.error().message();
}

}  // namespace
}  // namespace retra
