// Chess tables whose DTZ segments keep one side to move as WDL50 classes (docs/FORMAT.md, "Class
// halves"): probes agree whichever side is stored as classes; the verifier restores the classes and
// finds a wrong one; recompress gives a class half to tables built without one. Labelled slow
// (release builds only).
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "chess_probe_compare.hpp"
#include "chess_reference_check.hpp"
#include "retra/probe.hpp"
#include "src/build/build.hpp"
#include "src/database.hpp"
#include "src/games/chess/module.hpp"
#include "src/recompress.hpp"
#include "src/verify/verify.hpp"
#include "test_util.hpp"

namespace retra::chess {
namespace {

using format::ClassHalf;
using format::ClassHalfChoice;

// The same tables twice: White to move (the lower half) as classes, and Black to move (the upper
// half). Where one searches, the other reads the stored value: they agree everywhere only if the
// search gives the stored values.
constexpr std::array<ClassHalfChoice, 2> kChoices = {ClassHalfChoice::lower,
                                                     ClassHalfChoice::upper};
constexpr const char* kTables[] = {"KQvK", "KPvK", "KRvKN"};

Result<std::vector<std::string>> targets(std::vector<std::string> tables) {
  OptionValues ov;
  ov["--endgame"] = std::move(tables);
  ov["--metrics"] = {"wdl", "dtz"};  // DTM segments never have a class half
  return find_module("chess")->targets(ov);
}

class ChessClassHalves : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto t = targets({std::begin(kTables), std::end(kTables)});
    ASSERT_TRUE(t) << t.error().message();
    for (std::size_t k = 0; k < kChoices.size(); ++k) {
      BuildRequest r = test::build_request("chess", {}, path(k));
      r.targets = *t;
      r.class_half = kChoices[k];
      auto built = build(r);
      ASSERT_TRUE(built) << built.error().message();
      probe::Value err;
      db_[k] = probe::Prober::open(path(k).string(), {}, &err).release();
      ASSERT_NE(db_[k], nullptr) << err.message;
    }
  }
  static void TearDownTestSuite() {
    for (auto*& d : db_) {
      delete d;
      d = nullptr;
    }
    delete dir_;
  }
  static std::filesystem::path path(std::size_t k) {
    return dir_->path() / ("db-" + std::to_string(k));
  }
  static test::TempDir* dir_;
  static std::array<probe::Prober*, 2> db_;
};
test::TempDir* ChessClassHalves::dir_ = nullptr;
std::array<probe::Prober*, 2> ChessClassHalves::db_ = {};

// `retra verify` of a whole database passes.
void expect_verified(const std::filesystem::path& dir) {
  auto db = Database::open(dir);
  ASSERT_TRUE(db) << db.error().message();
  VerifyOptions opt;
  opt.threads = 2;
  auto rep = verify(**db, opt);
  ASSERT_TRUE(rep) << rep.error().message();
  EXPECT_TRUE(rep->ok) << (rep->failure ? rep->failure->message : "");
}

using check::same;
using check::text;

TEST_F(ChessClassHalves, EveryDtzSegmentRecordsTheHalfItWasAskedFor) {
  for (std::size_t k = 0; k < kChoices.size(); ++k) {
    auto db = Database::open(path(k));
    ASSERT_TRUE(db) << db.error().message();
    int dtz = 0;
    for (const auto& rec : (*db)->manifest().segments) {
      auto seg = (*db)->segment(rec.name);
      ASSERT_TRUE(seg) << seg.error().message();
      const bool is_dtm = rec.name.ends_with(".dtm");
      const ClassHalf want = is_dtm                                  ? ClassHalf::none
                             : kChoices[k] == ClassHalfChoice::lower ? ClassHalf::lower
                                                                     : ClassHalf::upper;
      EXPECT_EQ((*seg)->class_half(), want) << rec.name;
      EXPECT_EQ(rec.build.value("class_half", ""), format::class_half_name(want)) << rec.name;
      dtz += !is_dtm;
    }
    EXPECT_GE(dtz, 8);
  }
}

// Legal positions of the tables in both colourings (so both sides to move of each table; every
// position of the 3-piece tables, those among every 5th placement and side of KRvKN), probed where
// one build searches and the other reads; every move of every 61st of them at the root.
// (ChessReference checks the default build, class halves included, against the independent solver,
// en passant included.)
TEST_F(ChessClassHalves, EveryProbeAgreesWithEitherHalfStoredAsClasses) {
  for (const char* name : kTables) {
    const Material m = *parse_material(name);
    const std::uint64_t every = m.pieces() > 3 ? 5 : 1;
    std::uint64_t checked = 0, wrong = 0, roots = 0;
    for (const Material& coloured : {m, m.flipped()}) {
      check::for_each_board(
          coloured,
          [&](const Board& b) {
            const probe::ChessBoard cb = bitboards_of(b);
            const probe::ChessValue lower = db_[0]->chess(cb), upper = db_[1]->chess(cb);
            ASSERT_TRUE(lower) << to_fen(b) << ": " << lower.message;
            if (!same(lower, upper) && ++wrong <= 5)
              ADD_FAILURE() << name << " " << to_fen(b) << ": White's side as classes "
                            << text(lower) << "; Black's " << text(upper);
            if (++checked % 61 != 0) return;
            check::expect_same_root(*db_[0], *db_[1], b);
            ++roots;
          },
          every);
      if (m.symmetric()) break;
    }
    EXPECT_EQ(wrong, 0u) << checked << " positions of " << name;
    EXPECT_GT(checked, 10000u) << name;
    EXPECT_GT(roots, 100u) << name;
  }
}

TEST_F(ChessClassHalves, TheVerifierRestoresTheClassesAndAgreesWithTheStatistics) {
  for (std::size_t k = 0; k < kChoices.size(); ++k) expect_verified(path(k));
}

// A class that is not the class of the position's value, and a byte that is no class at all,
// are each named by the verifier at their index.
TEST_F(ChessClassHalves, TheVerifierNamesAWrongClass) {
  struct Case {
    int from, to;  // a class byte and what it is changed to
  };
  for (const Case c : {Case{4, 204}, Case{4, 6}, Case{0, 3}}) {
    test::TempDir tmp;
    const auto copy = tmp / "db";
    std::filesystem::copy(path(1), copy, std::filesystem::copy_options::recursive);
    std::size_t at = 0;
    {
      auto d = Database::open(copy);
      ASSERT_TRUE(d) << d.error().message();
      auto values = test::read_segment(**d, "KRvKN");
      // In the upper half (Black to move, stored as classes): the middle entry with the byte.
      std::vector<std::size_t> with;
      for (std::size_t i = values.size() / 2; i < values.size(); ++i)
        if (static_cast<std::uint8_t>(values[i]) == c.from) with.push_back(i);
      ASSERT_FALSE(with.empty()) << c.from;
      at = with[with.size() / 2];
      values[at] = static_cast<std::int8_t>(c.to);
      test::rewrite_segment(**d, "KRvKN", values);
    }
    auto d = Database::open(copy);
    ASSERT_TRUE(d) << d.error().message();
    VerifyOptions opt;
    opt.threads = 2;
    opt.only = {"KRvKN"};
    auto rep = verify(**d, opt);
    ASSERT_TRUE(rep) << rep.error().message();
    ASSERT_FALSE(rep->ok) << c.from << " -> " << c.to;
    ASSERT_TRUE(rep->failure && rep->failure->index);
    EXPECT_EQ(rep->failure->segment, "KRvKN");
    EXPECT_EQ(*rep->failure->index, at) << rep->failure->message;
    EXPECT_EQ(rep->failure->stored, c.to) << rep->failure->message;
  }
}

// Tables built with both sides in full get a class half from recompress: smaller files, the same
// probes, and the verifier's approval.
TEST_F(ChessClassHalves, RecompressGivesTablesAClassHalf) {
  test::TempDir tmp;
  const auto copy = tmp / "db";
  {
    OptionValues ov;
    ov["--endgame"] = {"KQvK", "KRvK"};  // and DTM, which keeps both sides
    auto t = find_module("chess")->targets(ov);
    ASSERT_TRUE(t) << t.error().message();
    BuildRequest r = test::build_request("chess", *t, copy);
    r.class_half = ClassHalfChoice::none;
    auto built = build(r);
    ASSERT_TRUE(built) << built.error().message();
  }
  RecompressOptions opt;
  opt.zstd_level = 9;
  opt.block_entries = 1 << 18;
  opt.segments = {"KQvK", "KRvK", "KRvK.dtm"};
  opt.threads = 2;
  auto rep = recompress(copy, opt);
  ASSERT_TRUE(rep) << rep.error().message();
  ASSERT_EQ(rep->size(), 3u);
  for (const auto& r : *rep) {
    EXPECT_EQ(r.class_half_before, "none") << r.name;
    EXPECT_EQ(r.class_half_after == "none", r.name.ends_with(".dtm")) << r.name;
  }
  expect_verified(copy);
  probe::Value err;
  auto p = probe::Prober::open(copy.string(), {}, &err);
  ASSERT_NE(p, nullptr) << err.message;
  std::uint64_t checked = 0;
  for (const char* name : {"KQvK", "KRvK"}) {
    const Material m = *parse_material(name);
    for (const Material& coloured : {m, m.flipped()})
      check::for_each_board(coloured, [&](const Board& b) {
        probe::ChessValue want = db_[0]->chess(bitboards_of(b));
        const probe::ChessValue got = p->chess(bitboards_of(b));
        // db_ holds no DTM.
        want.has_dtm = got.has_dtm;
        want.dtm = got.dtm;
        EXPECT_TRUE(same(got, want)) << to_fen(b) << ": " << text(got) << "; " << text(want);
        ++checked;
      });
  }
  EXPECT_GT(checked, 100000u);
  // Recompressing again keeps the half: its distances are no longer in the file.
  opt.segments = {"KQvK"};
  opt.class_half = ClassHalfChoice::none;
  auto again = recompress(copy, opt);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->front().class_half_before, again->front().class_half_after);
  EXPECT_NE(again->front().class_half_after, "none");
}

}  // namespace
}  // namespace retra::chess
