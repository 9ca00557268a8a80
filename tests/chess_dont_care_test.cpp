// Chess tables archived with don't-care entries (`recompress --dont-care`, docs/FORMAT.md
// kDontCare), decided by the captures alone (the default, kDontCareCaptures) and by every
// zeroing move: every probe of every legal position equals the exact files' (the search over
// captures or zeroing moves restores what the file leaves out), the files really do store worse
// values, DTM segments stay exact, a later recompression keeps them, `verify` restores and
// checks them, and builds, which read bytes as values, refuse them. Labelled slow (release
// builds only).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <fstream>
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

// Pawnless and pawn tables, with captures and promotions into tables that have don't-care
// entries themselves (the search recurses), down to 3-piece tables whose only captures leave
// the bare kings.
constexpr const char* kTables[] = {"KQvK", "KPvK", "KRvKN", "KRvKP"};

// What the recompression reported of one segment (its JSON from the fixture, or the API's).
struct Reported {
  std::string name;
  std::uint64_t entries = 0, dont_care_entries = 0;
  bool dont_care = false;
};

class ChessDontCare : public ::testing::Test {
 protected:
  // ctest builds the databases once for every test (the fixture test ChessDontCare.Build runs
  // tests/chess_dont_care_db.sh, the CLI's build and `recompress --dont-care --json`); a run of
  // this binary alone builds the same through the API into a temporary directory.
  static void SetUpTestSuite() {
    const std::filesystem::path fixture = RETRA_CHESS_DONT_CARE_DB;
    for (auto*& r : report_) r = new std::vector<Reported>();
    if (std::filesystem::exists(fixture / "recompress.json")) {
      dir_ = fixture;
      for (const auto moves :
           {format::DontCareMoves::captures, format::DontCareMoves::conversions}) {
        std::ifstream in(fixture / (moves == format::DontCareMoves::captures ? "recompress.json"
                                                                             : "conversions.json"));
        const auto j = nlohmann::json::parse(in);
        for (const auto& r : j.at("segments"))
          report(moves).push_back(
              {r.at("name"), r.at("entries"), r.at("dont_care_entries"), r.at("dont_care")});
      }
    } else {
      temp_ = new test::TempDir();
      dir_ = temp_->path();
      OptionValues ov;
      ov["--endgame"] = {std::begin(kTables), std::end(kTables)};
      auto t = find_module("chess")->targets(ov);  // all three metrics
      ASSERT_TRUE(t) << t.error().message();
      BuildRequest r = test::build_request("chess", *t, exact());
      auto built = build(r);
      ASSERT_TRUE(built) << built.error().message();
      for (const auto moves :
           {format::DontCareMoves::captures, format::DontCareMoves::conversions}) {
        std::filesystem::copy(exact(), archived(moves), std::filesystem::copy_options::recursive);
        RecompressOptions opt;  // the same as the script's
        opt.zstd_level = 3;
        opt.block_entries = 4096;
        opt.dont_care = true;
        opt.dont_care_moves = moves;
        opt.threads = 2;
        auto rep = recompress(archived(moves), opt);
        ASSERT_TRUE(rep) << rep.error().message();
        for (const auto& x : *rep)
          report(moves).push_back({x.name, x.entries, x.dont_care_entries, x.dont_care});
      }
    }
    const std::filesystem::path dbs[] = {exact(), archived(),
                                         archived(format::DontCareMoves::conversions)};
    for (std::size_t k = 0; k < db_.size(); ++k) {
      probe::Value err;
      db_[k] = probe::Prober::open(dbs[k].string(), {}, &err).release();
      ASSERT_NE(db_[k], nullptr) << err.message;
    }
  }
  static void TearDownTestSuite() {
    for (auto*& d : db_) {
      delete d;
      d = nullptr;
    }
    for (auto*& r : report_) {
      delete r;
      r = nullptr;
    }
    delete temp_;
  }
  // Read only: the tests that change a database change a copy (tests may run side by side).
  static std::filesystem::path exact() { return dir_ / "exact"; }
  // A copy of database `from` in tmp.
  static std::filesystem::path copy_of(const std::filesystem::path& from,
                                       const test::TempDir& tmp) {
    const auto copy = tmp / "db";
    std::filesystem::copy(from, copy, std::filesystem::copy_options::recursive);
    return copy;
  }
  // With don't-care entries decided by the captures alone (the default), or by every zeroing
  // move.
  static std::filesystem::path archived(
      format::DontCareMoves moves = format::DontCareMoves::captures) {
    return dir_ / (moves == format::DontCareMoves::captures ? "archived" : "conversions");
  }
  static std::vector<Reported>& report(format::DontCareMoves moves) {
    return *report_[moves == format::DontCareMoves::captures ? 0 : 1];
  }
  static std::filesystem::path dir_;
  static test::TempDir* temp_;
  static std::array<std::vector<Reported>*, 2> report_;  // captures, conversions
  static std::array<probe::Prober*, 3> db_;              // exact, captures, conversions
};
std::filesystem::path ChessDontCare::dir_;
test::TempDir* ChessDontCare::temp_ = nullptr;
std::array<std::vector<Reported>*, 2> ChessDontCare::report_ = {};
std::array<probe::Prober*, 3> ChessDontCare::db_ = {};

using check::same;
using check::text;

// DTZ segments with converting moves get don't-care entries, DTM segments none; the files and
// the manifest say so, and which moves decided them; the captures alone mark as many entries as
// every zeroing move where there are no pawns, fewer where there are; and the stored bytes
// really differ from the exact ones in places.
TEST_F(ChessDontCare, DtzSegmentsHaveDontCareEntriesAndDtmSegmentsNone) {
  for (const auto moves : {format::DontCareMoves::captures, format::DontCareMoves::conversions}) {
    const std::string name(format::dont_care_moves_name(moves));
    SCOPED_TRACE(name);
    auto db = Database::open(archived(moves));
    ASSERT_TRUE(db) << db.error().message();
    int flagged = 0;
    for (const auto& r : report(moves)) {
      const bool is_dtm = r.name.ends_with(".dtm");
      auto seg = (*db)->segment(r.name);
      ASSERT_TRUE(seg) << seg.error().message();
      EXPECT_EQ((*seg)->dont_care(), !is_dtm) << r.name;
      EXPECT_EQ(r.dont_care, !is_dtm) << r.name;
      const auto& build = (*db)->manifest().find(r.name)->build;
      EXPECT_EQ(build.value("dont_care", false), !is_dtm) << r.name;
      if (is_dtm) {
        EXPECT_EQ(r.dont_care_entries, 0u) << r.name;
        continue;
      }
      EXPECT_EQ((*seg)->dont_care_moves(), moves) << r.name;
      EXPECT_EQ(build.value("dont_care_moves", std::string()), name) << r.name;
      ++flagged;
      if (r.name == "KRvKN" || r.name.starts_with("KRvKP")) {
        EXPECT_GT(r.dont_care_entries, r.entries / 50) << r.name;
      }
    }
    EXPECT_GE(flagged, 8);
  }
  const auto& captures = report(format::DontCareMoves::captures);
  const auto& conversions = report(format::DontCareMoves::conversions);
  ASSERT_EQ(captures.size(), conversions.size());
  std::uint64_t pawn_captures = 0, pawn_conversions = 0;
  for (std::size_t i = 0; i < captures.size(); ++i) {
    const Reported &a = captures[i], &b = conversions[i];
    ASSERT_EQ(a.name, b.name);
    if (a.name.find('P') == std::string::npos) {
      EXPECT_EQ(a.dont_care_entries, b.dont_care_entries) << a.name;
    } else {
      EXPECT_LE(a.dont_care_entries, b.dont_care_entries) << a.name;
      pawn_captures += a.dont_care_entries;
      pawn_conversions += b.dont_care_entries;
    }
  }
  EXPECT_LT(pawn_captures, pawn_conversions);
  EXPECT_GT(pawn_captures, 0u);
  auto db = Database::open(archived());
  ASSERT_TRUE(db) << db.error().message();
  std::uint64_t differ = 0, entries = 0;
  for (const char* name : {"KRvKN", "KRvKP_b4"}) {
    auto e = Database::open(exact());
    ASSERT_TRUE(e);
    const auto a = test::read_segment(**e, name), b = test::read_segment(**db, name);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
    entries += a.size();
  }
  EXPECT_GT(differ, entries / 100);
}

// Legal positions of every table, both colourings (every one of the 3-piece tables, those among
// every 47th placement and side to move of the others): WDL, DTZ and DTM by bitboards, WDL alone by
// bitboards (the engines' fast path) and by FEN, from the archived files equal the exact files';
// every move of every 61st of them at the root likewise; for the files whose entries every zeroing
// move decided, every fourth one of those positions.
TEST_F(ChessDontCare, EveryProbeEqualsTheExactFiles) {
  for (std::size_t k = 1; k < db_.size(); ++k)
    for (const char* name : kTables) {
      SCOPED_TRACE(k == 1 ? "captures" : "conversions");
      const Material m = *parse_material(name);
      const std::uint64_t every = (m.pieces() > 3 ? 47 : 1) * (k == 1 ? 1 : 4);
      std::uint64_t checked = 0, wrong = 0, roots = 0;
      for (const Material& coloured : {m, m.flipped()}) {
        check::for_each_board(
            coloured,
            [&](const Board& b) {
              const probe::ChessBoard cb = bitboards_of(b);
              const probe::ChessValue want = db_[0]->chess(cb), got = db_[k]->chess(cb);
              ASSERT_TRUE(want) << to_fen(b) << ": " << want.message;
              const probe::Value wdl = db_[k]->chess_wdl(cb), fen = db_[k]->probe(to_fen(b));
              if ((!same(want, got) || !wdl || wdl.value != want.wdl || !fen ||
                   fen.value != want.wdl) &&
                  ++wrong <= 5)
                ADD_FAILURE() << name << " " << to_fen(b) << ": exact " << text(want)
                              << "; archived " << text(got) << ", WDL " << wdl.value << " "
                              << wdl.message << ", FEN " << fen.value << " " << fen.message;
              if (++checked % 61 != 0) return;
              check::expect_same_root(*db_[0], *db_[k], b);
              ++roots;
            },
            every);
        if (m.symmetric()) break;
      }
      EXPECT_EQ(wrong, 0u) << checked << " positions of " << name;
      EXPECT_GT(checked, k == 1 ? 10000u : 2500u) << name;
      EXPECT_GT(roots, k == 1 ? 100u : 25u) << name;
    }
}

// `retra verify` restores the entries from their captures and passes, over the whole database
// and over one segment whose dependencies it then restores too; where every zeroing move decided
// them, over that segment.
TEST_F(ChessDontCare, TheVerifierRestoresThemAndPasses) {
  for (const auto moves : {format::DontCareMoves::captures, format::DontCareMoves::conversions})
    for (const std::vector<std::string>& only : {std::vector<std::string>{}, {"KRvKP_b4"}}) {
      if (moves == format::DontCareMoves::conversions && only.empty()) continue;
      auto db = Database::open(archived(moves));
      ASSERT_TRUE(db) << db.error().message();
      VerifyOptions opt;
      opt.threads = 2;
      opt.only = only;
      auto rep = verify(**db, opt);
      ASSERT_TRUE(rep) << rep.error().message();
      EXPECT_TRUE(rep->ok) << (rep->failure ? rep->failure->message : "");
    }
}

// A don't-care entry made better than its truth, and an entry the search cannot restore made
// worse, are each named by the verifier at their index.
TEST_F(ChessDontCare, TheVerifierNamesAValueBetterOrWorseThanItsMovesGive) {
  auto e = Database::open(exact());
  ASSERT_TRUE(e);
  const auto truth = test::read_segment(**e, "KRvKN");
  for (const bool better : {true, false}) {
    SCOPED_TRACE(better ? "better" : "worse");
    test::TempDir tmp;
    const auto copy = copy_of(archived(), tmp);
    std::size_t at = 0;
    {
      auto d = Database::open(copy);
      ASSERT_TRUE(d) << d.error().message();
      auto values = test::read_segment(**d, "KRvKN");
      auto seg = (*d)->segment("KRvKN");
      ASSERT_TRUE(seg);
      // An entry stored in full: a filled don't-care entry (stored worse than its value), made
      // a win in one ply, better than its value; or a win or loss in 2..100 plies (no zeroing
      // move gives that, so its byte is its value), made a draw or a loss in one ply.
      bool found = false;
      for (std::size_t i = 0; i < values.size() && !found; ++i) {
        if ((*seg)->class_only(i)) continue;
        const int t = static_cast<std::uint8_t>(truth[i]);
        found = better ? values[i] != truth[i] && t != 3
                       : values[i] == truth[i] && t >= 5 && t <= 2 * 100 + 2;
        if (found) at = i;
      }
      ASSERT_TRUE(found);
      const int t = static_cast<std::uint8_t>(truth[at]);
      values[at] = static_cast<std::int8_t>(better ? 3 : t % 2 ? 0 : 4);
      test::rewrite_segment(**d, "KRvKN", values);
    }
    auto d = Database::open(copy);
    ASSERT_TRUE(d) << d.error().message();
    VerifyOptions opt;
    opt.threads = 2;
    opt.only = {"KRvKN"};
    auto rep = verify(**d, opt);
    ASSERT_TRUE(rep) << rep.error().message();
    ASSERT_FALSE(rep->ok);
    ASSERT_TRUE(rep->failure);
    ASSERT_TRUE(rep->failure->index) << rep->failure->message;
    EXPECT_EQ(*rep->failure->index, at) << rep->failure->message;
  }
}

// Entries that a pawn move decided, in a file that says the captures alone decided them, are
// wrong for a probe that searches only captures: the verifier, which restores them as such a
// probe does, names one.
TEST_F(ChessDontCare, TheVerifierNamesEntriesTheCapturesCannotRestore) {
  test::TempDir tmp;
  const auto copy = copy_of(archived(format::DontCareMoves::conversions), tmp);
  {
    auto d = Database::open(copy);
    ASSERT_TRUE(d) << d.error().message();
    test::rewrite_segment(**d, "KRvKP_b4", test::read_segment(**d, "KRvKP_b4"), {},
                          format::DontCareMoves::captures);
  }
  auto d = Database::open(copy);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ((*(*d)->segment("KRvKP_b4"))->dont_care_moves(), format::DontCareMoves::captures);
  VerifyOptions opt;
  opt.threads = 2;
  opt.only = {"KRvKP_b4"};
  auto rep = verify(**d, opt);
  ASSERT_TRUE(rep) << rep.error().message();
  EXPECT_FALSE(rep->ok);
  ASSERT_TRUE(rep->failure);
  EXPECT_TRUE(rep->failure->index) << rep->failure->message;
}

// A build that converts into such files needs every byte to be a value: it refuses, with the
// reason.
TEST_F(ChessDontCare, BuildsRefuseThem) {
  test::TempDir tmp;
  const auto copy = copy_of(archived(), tmp);
  BuildRequest r = test::build_request("chess", {"KRvKP_b4"}, copy);
  r.force = true;
  auto built = build(r);
  ASSERT_FALSE(built);
  EXPECT_NE(built.error().message().find("don't-care"), std::string::npos)
      << built.error().message();
}

// Marking a segment reads its dependencies' exact values: where one already has don't-care
// entries (a run over the dependency alone came first), the run stops before it writes anything
// and says how to order it.
TEST_F(ChessDontCare, MarkingNeedsExactDependencies) {
  test::TempDir tmp;
  const auto copy = copy_of(exact(), tmp);
  RecompressOptions opt;
  opt.threads = 2;
  opt.zstd_level = 3;
  opt.dont_care = true;
  opt.segments = {"KRvK"};
  auto first = recompress(copy, opt);
  ASSERT_TRUE(first) << first.error().message();
  opt.segments = {"KRvKP_b4"};
  auto second = recompress(copy, opt);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message().find("KRvKP_b4"), std::string::npos)
      << second.error().message();
  EXPECT_NE(second.error().message().find("marks dependents first"), std::string::npos)
      << second.error().message();
  auto d = Database::open(copy);
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_FALSE((*(*d)->segment("KRvKP_b4"))->dont_care());
}

// Recompressed again without --dont-care (a table named: all its segments), a file keeps its
// flag, the moves that decided its entries, and its stored bytes.
TEST_F(ChessDontCare, ALaterRecompressionKeepsThem) {
  test::TempDir tmp;
  const auto copy = copy_of(archived(), tmp);
  RecompressOptions opt;
  opt.threads = 2;
  opt.segments = {"KRvKP"};
  auto rep = recompress(copy, opt);
  ASSERT_TRUE(rep) << rep.error().message();
  ASSERT_EQ(rep->size(), 12u);  // KRvKP_b2 .. _b7, each with its .dtm
  auto a = Database::open(archived()), b = Database::open(copy);
  ASSERT_TRUE(a && b);
  for (const auto& r : *rep) {
    EXPECT_TRUE(r.name.starts_with("KRvKP_b")) << r.name;
    EXPECT_EQ(r.dont_care, !r.name.ends_with(".dtm")) << r.name;
    EXPECT_EQ(r.dont_care_entries, 0u) << r.name;
    EXPECT_EQ(test::read_segment(**a, r.name), test::read_segment(**b, r.name)) << r.name;
    EXPECT_EQ((*(*b)->segment(r.name))->dont_care(), r.dont_care) << r.name;
    if (r.dont_care) {
      EXPECT_EQ((*(*b)->segment(r.name))->dont_care_moves(), format::DontCareMoves::captures)
          << r.name;
    }
  }
}

}  // namespace
}  // namespace retra::chess
