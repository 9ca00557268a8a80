// The chess game's own kernel for DTZ and DTM segments, pawnless or with one to three pawns, with
// or without other pieces (src/games/chess/sweep.hpp, Game::own_kernel), against retra's generic
// backward kernel: the same values on every entry and the holes it marks exactly the game's invalid
// entries, on two threads (so that ThreadSanitizer sees the sweeps' shared bytes); the codes
// rebased; conversions beyond the 50-move horizon; what it declines; and the build driver taking it
// unless told not to. Thread safety: none.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/backward.hpp"
#include "src/build/build.hpp"
#include "src/database.hpp"
#include "src/games/chess/game.hpp"
#include "src/games/chess/sweep.hpp"
#include "src/games/chess/values.hpp"
#include "test_util.hpp"

namespace retra::chess {
namespace {

// KQvKR and its sub-tables, DTZ and DTM, built by the generic kernel, every entry stored exactly
// (no class half), and the game of that build.
class ChessSweepKernel : public ::testing::Test {
 protected:
  static constexpr std::array<const char*, 6> kNames{"KQvK",     "KRvK",     "KQvKR",
                                                     "KQvK.dtm", "KRvK.dtm", "KQvKR.dtm"};
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    BuildRequest r = test::build_request("chess", {"KQvKR", "KQvKR.dtm"}, dir_->path());
    r.tuning.own_kernel = false;
    r.class_half = format::ClassHalfChoice::none;
    auto built = build(r);
    ASSERT_TRUE(built) << built.error().message();
    auto db = Database::open(dir_->path());
    ASSERT_TRUE(db) << db.error().message();
    for (const char* name : kNames) {
      const auto v = test::read_segment(**db, name);
      values_->emplace_back(reinterpret_cast<const std::uint8_t*>(v.data()),
                            reinterpret_cast<const std::uint8_t*>(v.data()) + v.size());
    }
    auto kqkr = parse_material("KQvKR");
    ASSERT_TRUE(kqkr);
    auto g = Game::closure({*kqkr}, true);
    ASSERT_TRUE(g) << g.error().message();
    game_ = new std::shared_ptr<const Game>(*g);
  }
  static void TearDownTestSuite() {
    delete game_;
    delete dir_;
    values_->clear();
  }
  static const Game& game() { return **game_; }
  // The generic kernel's values of segment `name`.
  static const std::vector<std::uint8_t>& values(const std::string& name) {
    const auto at = std::find(kNames.begin(), kNames.end(), name);
    EXPECT_NE(at, kNames.end()) << name;
    return (*values_)[static_cast<std::size_t>(at - kNames.begin())];
  }
  // lower() over the generic kernel's sub-tables.
  static kernels::Lower<int> lower() {
    return
        [](const int& s, std::uint64_t i) -> int { return values(game().segment_name(s)).at(i); };
  }
  static kernels::KernelOptions two_threads() {
    kernels::KernelOptions o;
    o.threads = 2;
    return o;
  }
  static constexpr std::uint64_t kPlenty = std::uint64_t{1} << 30;

  static test::TempDir* dir_;
  static std::shared_ptr<const Game>* game_;
  static std::unique_ptr<std::vector<std::vector<std::uint8_t>>> values_;
};
test::TempDir* ChessSweepKernel::dir_ = nullptr;
std::shared_ptr<const Game>* ChessSweepKernel::game_ = nullptr;
std::unique_ptr<std::vector<std::vector<std::uint8_t>>> ChessSweepKernel::values_ =
    std::make_unique<std::vector<std::vector<std::uint8_t>>>();

TEST_F(ChessSweepKernel, EqualsTheGenericKernelOnEveryEntry) {
  for (const char* name : kNames) {
    const int s = game().find(name);
    ASSERT_GE(s, 0) << name;
    std::vector<std::uint8_t> mine(game().segment_size(s));
    std::vector<std::uint64_t> holes((mine.size() + 63) / 64, 0);
    kernels::KernelOptions o = two_threads();
    o.holes = holes.data();
    auto run = game().own_kernel(s, mine, lower(), o, {kPlenty});
    ASSERT_TRUE(run.has_value()) << name << ": declined";
    ASSERT_TRUE(*run) << run->error().message();
    EXPECT_EQ((*run)->kernel, "sweep");
    EXPECT_TRUE((*run)->far.empty());
    // The holes it marked are exactly the entries the game calls invalid.
    EXPECT_TRUE((*run)->holes_marked);
    std::uint64_t wrong_holes = 0, marked = 0;
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      const bool hole = (holes[i / 64] >> (i % 64)) & 1;
      marked += hole;
      if (hole == game().unrank(s, i).valid && ++wrong_holes <= 5)
        ADD_FAILURE() << name << " entry " << i << ": marked " << (hole ? "" : "not ") << "a hole";
    }
    EXPECT_EQ(wrong_holes, 0u) << name;
    EXPECT_GT(marked, 0u) << name;
    const auto& theirs = values(name);
    ASSERT_EQ(mine.size(), theirs.size());
    std::uint64_t differ = 0;
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (mine[i] != theirs[i] && ++differ <= 5)
        ADD_FAILURE() << name << " entry " << i << ": sweep " << int(mine[i]) << ", generic "
                      << int(theirs[i]);
    EXPECT_EQ(differ, 0u) << name;
  }
}

// How solve() is asked to code distances: rebased each time they pass rebase_at plies beyond the
// base, refused beyond max_plies.
struct Coding {
  int rebase_at = sweep::kMaxWin;
  int max_plies = sweep::kMaxPlies;
};

// KQvKR solved by the sweep from its sub-tables kvkr and kqvk (DTZ, or DTM with dtm), coded as
// `coding` says, into retra's order in out: false where the solve refuses (a distance beyond
// max_plies), after checking the longest distance otherwise.
bool solve_kqvkr(sweep::Table& kvkr, sweep::Table& kqvk, bool dtm, Coding coding, int longest,
                 const Game& game, std::vector<std::uint8_t>* out) {
  using P = std::pair<PieceType, Color>;
  sweep::Table top = sweep::make_table({P{queen, white}, P{rook, black}}, 2);
  top.dtm = dtm;
  top.sub = {&kvkr, &kqvk, nullptr};  // without the queen, without the rook
  sweep::SolveOptions o;
  o.rebase_at = coding.rebase_at;
  o.max_plies = coding.max_plies;
  auto r = sweep::solve(top, o);
  EXPECT_TRUE(r) << r.error().message();
  if (!r || !*r) return false;
  EXPECT_EQ(top.longest, longest);
  const int s = game.find(dtm ? "KQvKR.dtm" : "KQvKR");
  out->assign(game.segment_size(s), 0);
  EXPECT_TRUE(sweep::to_segment(top, *game.table(s).indexer, *out).empty());
  return true;
}

// solved_with(coding, out), for a table whose longest distance is `longest` plies (between 41 and
// 79), gives the generic kernel's values unrebased, with codes rebased once (rebase_at 40) and
// three times (rebase_at 20: after plies 19, 38 and 57), and allowed just the longest; allowed a
// ply less, an honest refusal.
void expect_rebased_values_or_refusal(
    const std::function<bool(Coding, std::vector<std::uint8_t>*)>& solved_with, int longest,
    const std::vector<std::uint8_t>& generic) {
  std::vector<std::uint8_t> plain, once, thrice, exact, unused;
  ASSERT_TRUE(solved_with({}, &plain));
  EXPECT_TRUE(plain == generic);
  ASSERT_TRUE(solved_with({40, sweep::kMaxPlies}, &once));
  EXPECT_TRUE(once == plain);
  ASSERT_TRUE(solved_with({20, sweep::kMaxPlies}, &thrice));
  EXPECT_TRUE(thrice == plain);
  ASSERT_TRUE(solved_with({20, longest}, &exact));
  EXPECT_TRUE(exact == plain);
  EXPECT_FALSE(solved_with({20, longest - 1}, &unused));
}

// KQvKR's longest loss is 62 plies: the codes rebased once or three times give the same values;
// allowed 61 plies, the solve says so instead of giving wrong values.
TEST_F(ChessSweepKernel, RebasedCodesGiveTheSameValuesOrAnHonestRefusal) {
  expect_rebased_values_or_refusal(
      [](Coding coding, std::vector<std::uint8_t>* out) {
        using P = std::pair<PieceType, Color>;
        sweep::Table kvk = sweep::make_table({}, 2);
        sweep::Table kqvk = sweep::make_table({P{queen, white}}, 2);
        sweep::Table kvkr = sweep::make_table({P{rook, black}}, 2);
        for (sweep::Table* t : {&kvk, &kqvk, &kvkr}) {
          t->sub = {&kvk, &kvk, &kvk};
          auto r = sweep::solve(*t, {});
          EXPECT_TRUE(r && *r);
        }
        return solve_kqvkr(kvkr, kqvk, false, coding, 62, game(), out);
      },
      62, values("KQvKR"));
}

// DTM, its sub-tables loaded from the generic kernel's DTM segments (KvKR from KRvK with the
// colours exchanged), as Game::own_kernel loads them: KQvKR's longest DTM is 70 plies, so codes
// rebased once or three times give the same values, and allowed 69 plies, an honest refusal.
TEST_F(ChessSweepKernel, DistanceToMateRebasedGivesTheSameValuesOrAnHonestRefusal) {
  expect_rebased_values_or_refusal(
      [](Coding coding, std::vector<std::uint8_t>* out) {
        using P = std::pair<PieceType, Color>;
        sweep::Table kvk = sweep::make_table({}, 2);
        auto kings = sweep::solve(kvk, {});
        EXPECT_TRUE(kings && *kings);
        sweep::draws_as_dtm(kvk);
        sweep::Table kqvk = sweep::make_table({P{queen, white}}, 2);
        sweep::Table kvkr = sweep::make_table({P{rook, black}}, 2);
        // Not a structured binding: clang 14 (the TSan build's) cannot capture one in a lambda.
        for (const auto& sub : {std::pair{&kqvk, "KQvK.dtm"}, std::pair{&kvkr, "KRvK.dtm"}}) {
          sweep::Table* t = sub.first;
          const std::string name = sub.second;
          const int id = game().find(name);
          const std::uint64_t size = game().table(id).indexer->size();
          t->dtm = true;
          const Status loaded = sweep::load(
              *t, *game().table(id).indexer, t == &kvkr,
              [&](Color side, std::uint64_t r) { return int{values(name).at(side * size + r)}; });
          EXPECT_TRUE(loaded) << loaded.error().message();
        }
        return solve_kqvkr(kvkr, kqvk, true, coding, 70, game(), out);
      },
      70, values("KQvKR.dtm"));
}

TEST_F(ChessSweepKernel, DeclinesWhatItCannotBuildAndLeavesTheValues) {
  const int s = game().find("KQvKR");
  std::vector<std::uint8_t> v(game().segment_size(s), 0);
  auto untouched = [&] { return std::all_of(v.begin(), v.end(), [](auto b) { return b == 0; }); };
  // More memory than the plan leaves.
  EXPECT_FALSE(game().own_kernel(s, v, lower(), two_threads(), {std::uint64_t{1} << 20}));
  EXPECT_TRUE(untouched());
  // Six pieces: the generic kernel's (their values not looked at).
  auto material = parse_material("KQRvKQR");
  ASSERT_TRUE(material);
  auto six = Game::closure({*material}, false);
  ASSERT_TRUE(six) << six.error().message();
  const int big = (*six)->find("KQRvKQR");
  ASSERT_GE(big, 0);
  EXPECT_FALSE((*six)->own_kernel(big, {}, lower(), two_threads(), {kPlenty}));
}

// The driver takes the own kernel for DTZ and DTM segments, with pawns too (the manifest names
// it), and writes the generic kernel's bytes.
TEST_F(ChessSweepKernel, TheBuildTakesItAndWritesTheSameFiles) {
  test::TempDir own;
  BuildRequest r = test::build_request(
      "chess", {"KQvK", "KRvK", "KQvK.dtm", "KRvK.dtm", "KPvK_w5", "KPvK_w5.dtm"}, own.path());
  r.class_half = format::ClassHalfChoice::none;
  auto built = build(r);
  ASSERT_TRUE(built) << built.error().message();
  auto db = Database::open(own.path());
  ASSERT_TRUE(db) << db.error().message();
  int dtm_sweeps = 0, pawn_dtm_sweeps = 0;
  for (const auto& rec : (*db)->manifest().segments) {
    EXPECT_EQ(rec.build.value("kernel", ""), "sweep") << rec.name;
    dtm_sweeps += rec.name.ends_with(".dtm");
    pawn_dtm_sweeps += rec.name.ends_with(".dtm") && rec.name.find('P') != std::string::npos;
  }
  EXPECT_GE(dtm_sweeps, 4);
  EXPECT_GE(pawn_dtm_sweeps, 2);  // KPvK_w5.dtm and the w6, w7 its pushes lead into
  for (const char* name : {"KQvK", "KRvK", "KQvK.dtm", "KRvK.dtm"}) {
    const auto v = test::read_segment(**db, name);
    const auto& theirs = values(name);
    EXPECT_TRUE(
        std::equal(v.begin(), v.end(), theirs.begin(), theirs.end(),
                   [](std::int8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; }))
        << name;
  }
}

// Pawnless DTM where a conversion loses later than every quiet move (the bare king takes a rook
// in KQRvK and KRRvK: the position cannot lose before that capture's ply), identical pieces
// (KRRvK) and a long mate (KBNvK, 66 plies): the build with the own kernel writes every DTM
// segment, the sub-tables' included, with the generic kernel's values.
TEST(ChessSweepDistanceToMate, PawnlessSegmentsEqualTheGenericKernels) {
  const std::vector<std::string> targets{"KQRvK.dtm", "KRRvK.dtm", "KBNvK.dtm"};
  test::TempDir generic_db, own_db;
  BuildRequest r = test::build_request("chess", targets, generic_db.path());
  r.tuning.own_kernel = false;
  auto generic = build(r);
  ASSERT_TRUE(generic) << generic.error().message();
  r.db = own_db.path();
  r.tuning.own_kernel = true;
  auto own = build(r);
  ASSERT_TRUE(own) << own.error().message();
  auto theirs = Database::open(generic_db.path());
  auto mine = Database::open(own_db.path());
  ASSERT_TRUE(theirs && mine);
  int compared = 0;
  for (const auto& rec : (*mine)->manifest().segments) {
    if (!rec.name.ends_with(".dtm")) continue;
    // KvK's has no own kernel's (nothing to sweep below three pieces).
    if (rec.name != "KvK.dtm") {
      EXPECT_EQ(rec.build.value("kernel", ""), "sweep") << rec.name;
    }
    EXPECT_TRUE(test::read_segment(**mine, rec.name) == test::read_segment(**theirs, rec.name))
        << rec.name;
    ++compared;
  }
  EXPECT_GE(compared, 7);  // the three, KQvK, KRvK, KBvK, KNvK
}

// Tables with one pawn: KRPvK (a white pawn) and KRvKP (a black one, whose sub-tables KvKP and
// KRvK.. are read with the colours exchanged), built by the generic kernel, every entry exact.
class ChessSweepPawnKernel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    std::vector<std::string> segments;  // every rank of each table's pawn
    for (int rank = 2; rank <= 7; ++rank)
      for (const char* table : {"KRPvK_w", "KRvKP_b"})
        segments.push_back(table + std::to_string(rank));
    BuildRequest r = test::build_request("chess", segments, dir_->path());
    r.tuning.own_kernel = false;
    r.class_half = format::ClassHalfChoice::none;
    auto built = build(r);
    ASSERT_TRUE(built) << built.error().message();
    auto db = Database::open(dir_->path());
    ASSERT_TRUE(db) << db.error().message();
    std::vector<Material> targets;
    for (const char* name : {"KRPvK", "KRvKP"}) targets.push_back(*parse_material(name));
    auto g = Game::closure(targets, false);
    ASSERT_TRUE(g) << g.error().message();
    game_ = new std::shared_ptr<const Game>(*g);
    for (int s = 0; s < game().segments(); ++s) {
      const auto v = test::read_segment(**db, game().segment_name(s));
      (*values_)[s].assign(reinterpret_cast<const std::uint8_t*>(v.data()),
                           reinterpret_cast<const std::uint8_t*>(v.data()) + v.size());
    }
  }
  static void TearDownTestSuite() {
    delete game_;
    delete dir_;
    values_->clear();
  }
  static const Game& game() { return **game_; }
  static kernels::Lower<int> lower() {
    return [](const int& s, std::uint64_t i) -> int { return values_->at(s).at(i); };
  }

  static test::TempDir* dir_;
  static std::shared_ptr<const Game>* game_;
  static std::unique_ptr<std::map<int, std::vector<std::uint8_t>>> values_;
};
test::TempDir* ChessSweepPawnKernel::dir_ = nullptr;
std::shared_ptr<const Game>* ChessSweepPawnKernel::game_ = nullptr;
std::unique_ptr<std::map<int, std::vector<std::uint8_t>>> ChessSweepPawnKernel::values_ =
    std::make_unique<std::map<int, std::vector<std::uint8_t>>>();

// Every child's distance of 4 plies or more moved 97 plies further (at most 126): conversions
// into values beyond the 50-move horizon, the child's win or loss, from both sides, and into
// values just within it (100 plies), which both kernels must count as values.hpp's Best does.
kernels::Lower<int> beyond_the_horizon(const kernels::Lower<int>& lower) {
  return [lower](const int& t, std::uint64_t i) -> int {
    const int b = lower(t, i);
    if (b == 0) return 0;
    const int d = (b & 1) ? (b - 1) / 2 : (b - 2) / 2;
    const int far = d >= 4 ? std::min(d + 97, 126) : d;
    return (b & 1) ? 2 * far + 1 : 2 * far + 2;
  };
}

// Segments whose pawn pushes, double pushes, promotions and captures reach such values, and a
// pawnless table captured into them, against the generic kernel given the same children: every
// entry, and the distances beyond a byte. (Called from the fixture's one test: ctest runs each
// test in its own process, which would build the fixture's tables again, a minute under the
// sanitizers.)
void equals_the_generic_kernel_beyond_the_horizon(const Game& game,
                                                  const kernels::Lower<int>& lower) {
  const kernels::Lower<int> far = beyond_the_horizon(lower);
  kernels::KernelOptions o;
  o.threads = 2;
  // KRPvK_w3 built with the true values first: what the sweep keeps of it for KRPvK_w2's pushes
  // disagrees with `far`, and must be dropped, not read. (KRPvK_w6 and KRvKP_b5 read what it
  // kept of KRPvK_w7 and KRvKP_b4, built just before them with `far`.)
  const int w3 = game.find("KRPvK_w3");
  ASSERT_GE(w3, 0);
  std::vector<std::uint8_t> values(game.segment_size(w3));
  ASSERT_TRUE(game.own_kernel(w3, values, lower, o, {std::uint64_t{1} << 30}));
  for (const char* name :
       {"KRPvK_w2", "KRPvK_w7", "KRPvK_w6", "KRvKP_b7", "KRvKP_b4", "KRvKP_b5", "KRvKR"}) {
    const int s = game.find(name);
    ASSERT_GE(s, 0) << name;
    std::vector<std::uint8_t> mine(game.segment_size(s)), theirs(mine.size());
    auto built = game.own_kernel(s, mine, far, o, {std::uint64_t{1} << 30});
    ASSERT_TRUE(built.has_value()) << name << ": declined";
    ASSERT_TRUE(*built) << built->error().message();
    auto generic = kernels::backward_as<ValueKind::dtz>(game, s, std::span(theirs), far, o);
    ASSERT_TRUE(generic) << generic.error().message();
    std::uint64_t differ = 0, cursed = 0, blessed = 0;
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      const Dtz d = decode_dtz(theirs[i]);
      cursed += d.wdl == cursed_win;
      blessed += d.wdl == blessed_loss;
      if (mine[i] != theirs[i] && ++differ <= 5)
        ADD_FAILURE() << name << " entry " << i << ": sweep " << int(mine[i]) << ", generic "
                      << int(theirs[i]) << " " << to_fen(game.board(s, game.unrank(s, i)));
    }
    EXPECT_EQ(differ, 0u) << name;
    EXPECT_TRUE((*built)->far == generic->far) << name;
    // The test reaches what it is for: positions won and lost beyond the horizon.
    EXPECT_GT(cursed, 0u) << name;
    EXPECT_GT(blessed, 0u) << name;
  }
}

// Every pawn segment of both tables (each rank of the pawn: promotions, double pushes, the pawn
// taken and taking), entry by entry, with the holes, on 2 and 3 threads, then the values beyond
// the horizon above:
// these small tables switch between pulled and pushed wins often, where three races of the sweeps
// once gave a win or a loss a ply late on two threads (sweep.cpp: mark_wins, mark_candidates, the
// pulled scan).
TEST_F(ChessSweepPawnKernel, EqualsTheGenericKernelOnEveryEntryAndBeyondTheHorizon) {
  int segments = 0;
  for (int run = 0; run < 2 * game().segments(); ++run) {
    const int s = run / 2, threads = 2 + run % 2;
    const std::string name = game().segment_name(s) + " on " + std::to_string(threads);
    if (!name.starts_with("KRPvK_") && !name.starts_with("KRvKP_")) continue;
    ++segments;
    std::vector<std::uint8_t> mine(game().segment_size(s));
    std::vector<std::uint64_t> holes((mine.size() + 63) / 64, 0);
    kernels::KernelOptions o;
    o.threads = threads;
    o.holes = holes.data();
    auto built = game().own_kernel(s, mine, lower(), o, {std::uint64_t{1} << 30});
    ASSERT_TRUE(built.has_value()) << name << ": declined";
    ASSERT_TRUE(*built) << built->error().message();
    EXPECT_EQ((*built)->kernel, "sweep");
    std::uint64_t wrong_holes = 0, differ = 0;
    const auto& theirs = values_->at(s);
    ASSERT_EQ(mine.size(), theirs.size());
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      const bool hole = (holes[i / 64] >> (i % 64)) & 1;
      if (hole == game().unrank(s, i).valid && ++wrong_holes <= 5)
        ADD_FAILURE() << name << " entry " << i << ": marked " << (hole ? "" : "not ") << "a hole";
      if (mine[i] != theirs[i] && ++differ <= 5)
        ADD_FAILURE() << name << " entry " << i << ": sweep " << int(mine[i]) << ", generic "
                      << int(theirs[i]) << " " << to_fen(game().board(s, game().unrank(s, i)));
    }
    EXPECT_EQ(wrong_holes, 0u) << name;
    EXPECT_EQ(differ, 0u) << name;
  }
  EXPECT_EQ(segments, 24);
  equals_the_generic_kernel_beyond_the_horizon(game(), lower());
}

// What the sweep keeps of a pawn segment for the segment a rank behind (Game::pushes_) stays
// within the memory the plan leaves (the whole set with all three metrics in one process was
// killed for memory at 24.4 GB while kept pushes waited for their readers outside the plan): a
// segment given just its own arrays' bytes drops the oldest entry, whose reader then reads its
// pushes through lower, the same values. Each case on a fresh closure, whose map is empty.
TEST_F(ChessSweepPawnKernel, KeptPushesStayWithinThePlan) {
  std::vector<Material> targets;
  for (const char* name : {"KRPvK", "KRvKP"}) targets.push_back(*parse_material(name));
  kernels::KernelOptions o;
  o.threads = 2;
  constexpr std::uint64_t kRoom = std::uint64_t{1} << 30;
  // Builds segment `name` of g given `spare` bytes; its statistics, empty where it declined.
  auto run = [&](const Game& g, const char* name, std::uint64_t spare) {
    std::map<std::string, double> stats;
    const int s = g.find(name);
    EXPECT_GE(s, 0) << name;
    if (s < 0) return stats;
    std::vector<std::uint8_t> mine(g.segment_size(s));
    auto built = g.own_kernel(s, mine, lower(), o, {spare});
    if (!built) return stats;
    EXPECT_TRUE(*built) << (*built).error().message();
    if (!*built) return stats;
    EXPECT_EQ(mine, values_->at(s)) << name;
    stats.insert((*built)->stats.begin(), (*built)->stats.end());
    return stats;
  };
  auto closure = [&] {
    auto g = Game::closure(targets, false);
    EXPECT_TRUE(g) << g.error().message();
    return *g;
  };
  {
    // With room: KRvKP_b3 reads what KRvKP_b2 kept (a black pawn pushes down the board), in
    // spite of KRPvK_w7 between them.
    auto g = closure();
    const auto b2 = run(*g, "KRvKP_b2", kRoom);
    ASSERT_FALSE(b2.empty());
    EXPECT_GT(b2.at("kept_bytes_held"), 0);
    const auto w7 = run(*g, "KRPvK_w7", kRoom);
    ASSERT_FALSE(w7.empty());
    EXPECT_EQ(w7.at("kept_dropped"), 0);
    EXPECT_GT(w7.at("kept_bytes_held"), b2.at("kept_bytes_held"));  // both entries
    const auto b3 = run(*g, "KRvKP_b3", kRoom);
    ASSERT_FALSE(b3.empty());
    EXPECT_EQ(b3.at("kept_pushes"), 1);
  }
  {
    // KRPvK_w7 given its own arrays' bytes alone: KRvKP_b2's entry is dropped to make room, and
    // w7 keeps nothing itself; KRvKP_b3 then reads its pushes through lower.
    auto g = closure();
    const auto b2 = run(*g, "KRvKP_b2", kRoom);
    ASSERT_FALSE(b2.empty());
    const auto planned = run(*closure(), "KRPvK_w7", kRoom);
    ASSERT_FALSE(planned.empty());
    const auto w7 = run(*g, "KRPvK_w7", static_cast<std::uint64_t>(planned.at("planned_bytes")));
    ASSERT_FALSE(w7.empty()) << "declined";
    EXPECT_EQ(w7.at("kept_dropped"), 1);
    EXPECT_EQ(w7.at("kept_bytes_held"), 0);
    const auto b3 = run(*g, "KRvKP_b3", kRoom);
    ASSERT_FALSE(b3.empty());
    EXPECT_EQ(b3.at("kept_pushes"), 0);
  }
}

// The closure of some tables, whose segments the own kernel and the generic kernel build from the
// same children: made up (a hash of the entry: draws, and wins and losses of 0..126 plies, beyond
// the 50-move horizon too), or, once read_built is set, those the sweep built here (each
// segment's once compared), so that a segment reads what the sweep kept of the segment a rank
// ahead of each pawn. (A double push that their pawn may take en passant leads to a virtual
// child, whose value the game weighs from its children's, as the build's lookups do; a capture
// that leaves only the kings, to another, a draw.)
class SameChildren {
 public:
  // Whether to build every segment a test names: under AddressSanitizer (6-7 times slower
  // here), a test builds fewer, which take every path of the code the others take.
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kAll = false;
#else
  static constexpr bool kAll = true;
#endif

  // With dtm, the tables' DTM segments (made-up children: DTM bytes, distance + 1, of 0..126
  // plies, so that a segment's distances pass 124 plies and its codes are rebased).
  explicit SameChildren(std::vector<const char*> tables, bool dtm = false) : dtm_(dtm) {
    std::vector<Material> targets;
    for (const char* name : tables) targets.push_back(*parse_material(name));
    auto g = Game::closure(targets, dtm);
    EXPECT_TRUE(g) << g.error().message();
    if (g) game_ = *g;
    lower_ = [this](const int& s, std::uint64_t i) -> int {
      if (Game::virtual_segment(s)) return game_->virtual_value(s, i, lower_);
      if (auto it = built_.find(s); read_built && it != built_.end()) return it->second[i];
      std::uint64_t h = ((static_cast<std::uint64_t>(s) << 40) ^ i) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 32;
      const int kind = static_cast<int>(h % 10), d = static_cast<int>((h >> 8) % 127);
      if (game_->is_dtm(s)) return kind < 3 ? 0 : d + 1;
      return kind < 3 ? 0 : kind < 6 ? 2 * std::max(d, 1) + 1 : 2 * d + 2;
    };
  }
  bool read_built = false;

  // Builds segment `name` with both kernels, on two threads, and compares every entry and the
  // holes the sweep marks; `kept`: the pushes it must read from what the sweep kept of the
  // segments ahead (-1: any).
  void compare(const char* name, int kept) {
    ASSERT_TRUE(game_);
    const Game& game = *game_;
    const int s = game.find(dtm_ ? std::string(name) + ".dtm" : std::string(name));
    ASSERT_GE(s, 0) << name;
    kernels::KernelOptions o;
    o.threads = 2;
    std::vector<std::uint8_t> mine(game.segment_size(s)), theirs(mine.size());
    std::vector<std::uint64_t> holes((mine.size() + 63) / 64, 0);
    o.holes = holes.data();
    auto own = game.own_kernel(s, mine, lower_, o, {std::uint64_t{1} << 30});
    ASSERT_TRUE(own.has_value()) << name << ": declined";
    ASSERT_TRUE(*own) << own->error().message();
    EXPECT_EQ((*own)->kernel, "sweep");
    for (const auto& stat : (*own)->stats)
      if (stat.first == "kept_pushes" && kept >= 0) {
        EXPECT_EQ(stat.second, kept) << name;
      }
    o.holes = nullptr;
    const std::span out(theirs);
    auto generic = dtm_ ? kernels::backward_as<ValueKind::dtm>(game, s, out, lower_, o)
                        : kernels::backward_as<ValueKind::dtz>(game, s, out, lower_, o);
    ASSERT_TRUE(generic) << generic.error().message();
    std::uint64_t differ = 0, wrong_holes = 0, won = 0, lost = 0;
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      const bool hole = (holes[i / 64] >> (i % 64)) & 1;
      if (hole == game.unrank(s, i).valid && ++wrong_holes <= 5)
        ADD_FAILURE() << name << " entry " << i << ": marked " << (hole ? "" : "not ") << "a hole";
      won += theirs[i] != 0 && (theirs[i] & 1);
      lost += theirs[i] != 0 && !(theirs[i] & 1);
      if (mine[i] != theirs[i] && ++differ <= 5)
        ADD_FAILURE() << name << " entry " << i << ": sweep " << int(mine[i]) << ", generic "
                      << int(theirs[i]) << " " << to_fen(game.board(s, game.unrank(s, i)));
    }
    EXPECT_EQ(wrong_holes, 0u) << name;
    EXPECT_EQ(differ, 0u) << name;
    EXPECT_TRUE((*own)->far == generic->far) << name;
    // The children leave both wins and losses to find (in DTM, an odd byte is a loss).
    EXPECT_GT(won, 0u) << name;
    EXPECT_GT(lost, 0u) << name;
    built_[s] = std::move(mine);
  }

 private:
  bool dtm_;
  std::shared_ptr<const Game> game_;
  kernels::Lower<int> lower_;
  std::map<int, std::vector<std::uint8_t>> built_;
};

// Tables with two pawns: KRPvKP (one of each colour) and KPPvKR (two white ones, on two ranks
// and on one), segment by segment against the generic kernel given the same children, every
// entry and the holes it marks. The children's values are made up, a hash of the entry (draws,
// and wins and losses of 0..126 plies, beyond the 50-move horizon too): their true values would
// take the whole closure, which promotions make every 5-piece table with a pawn. Both kernels
// must read them alike. The segments: two pawns of one colour, whose representatives in retra's
// index may have the first pawn on the e-h files (KPPvKR_w23); two on one rank, one position
// under two of the sweep's heads and, on mirror files (c and f), a position and its mirror image
// under one, both able to push twice (w22) and both promoting (w77); a black double push beside
// the white pawn, which may take it en passant (w5_b7); promotions of both, by push and by
// capture (w7_b2); then segments whose pushes read what the sweep kept of the segment ahead,
// their children's values those built before them: each pawn able to take the other (w3_b4), a
// white double push that the black pawn may take en passant (w2_b4); and KPPvKR's white pawns,
// each reading its push where it keeps its place among them (Table::keeps_place): the upper one
// from w45 as w44 reads it (the lower one's push passes it, read through lower), the lower one
// from w45 as w35 reads it, both as w34 reads them (from w44, a tie, and w35). Under
// AddressSanitizer (6-7 times slower here) it builds six of them, which take every path of the
// code the others take.
TEST(ChessSweepTwoPawns, EqualsTheGenericKernelGivenTheSameChildren) {
  SameChildren same({"KRPvKP", "KPPvKR"});
  auto compare = [&](const char* name, int kept) { same.compare(name, kept); };
  constexpr bool kAll = SameChildren::kAll;
  // Made-up children everywhere: what the sweep keeps of a segment disagrees with them, and is
  // dropped, not read.
  compare("KPPvKR_w23", 0);
  // Two pawns of one colour on one rank: one position under two heads, and with files mirror
  // to each other (c and f) a position and its mirror image under one.
  compare("KPPvKR_w22", 0);
  if (kAll) {
    compare("KRPvKP_w5_b7", 0);
    compare("KRPvKP_w7_b2", 0);
    compare("KPPvKR_w77", 0);
  }
  // The segments built from here on read as built: a segment reads what the sweep kept of the
  // segment a rank ahead of each pawn. w3_b4 has none built ahead; w2_b4 reads White's push
  // from w3_b4, w3_b5 Black's.
  same.read_built = true;
  compare("KRPvKP_w3_b4", 0);
  compare("KRPvKP_w2_b4", 1);
  if (kAll) compare("KRPvKP_w3_b5", 1);
  compare("KPPvKR_w45", 0);
  compare("KPPvKR_w44", 1);
  if (kAll) {
    compare("KPPvKR_w35", 1);
    compare("KPPvKR_w34", 2);
  }
}

// Tables of the kings and pawns only, which the sweep builds position by position (no other
// piece, so no runs; sweep.cpp, kings_and_pawns_captures): every segment of KPvK, rank by rank
// from the seventh, each reading what
// the sweep kept of the one ahead (w2 also that of w4, for its double push); then KPvKP and
// KPPvK from made-up children: a black double push beside the white pawn, which may take it en
// passant (KPvKP_w5_b7), promotions of both (w7_b2), two white pawns on two ranks (KPPvK_w23)
// and on one, pushing twice (w22) and promoting (w77); and KPvKP read as built again, each pawn
// able to take the other (w3_b4), and the pushes kept of it (w2_b4: White's, w3_b5: Black's);
// then KPPvK read as built, each white pawn reading its pushes where it keeps its place among
// them (Table::keeps_place): w35 the lower one's from w45, w44 the upper one's, w34 both (from
// w44, a tie, and w35), w24 the lower one's single push from w34 and its double push from w44.
TEST(ChessSweepKingsAndPawns, EqualsTheGenericKernelGivenTheSameChildren) {
  SameChildren same({"KPvKP", "KPPvK"});
  same.read_built = true;
  same.compare("KPvK_w7", 0);
  for (const char* name : {"KPvK_w6", "KPvK_w5", "KPvK_w4", "KPvK_w3"}) same.compare(name, 1);
  same.compare("KPvK_w2", 2);
  same.read_built = false;
  for (const char* name : {"KPvKP_w5_b7", "KPvKP_w7_b2", "KPPvK_w23", "KPPvK_w22", "KPPvK_w77"})
    same.compare(name, 0);
  same.read_built = true;
  same.compare("KPvKP_w3_b4", 0);
  same.compare("KPvKP_w2_b4", 1);
  same.compare("KPvKP_w3_b5", 1);
  same.compare("KPPvK_w45", 0);
  same.compare("KPPvK_w35", 1);
  same.compare("KPPvK_w44", 1);
  same.compare("KPPvK_w34", 2);
  same.compare("KPPvK_w24", 2);
}

// The three-pawn tables, whose third pawn's file is one more digit of the sweep's head, from
// made-up children: a white double push beside the black pawn, which may take it en passant
// (KPPvKP_w23_b4), a black one beside a white pawn (w25_b7), promotions by push and capture
// (w77_b2), three white pawns on three ranks (KPPPvK_w234), on one (w222: a position under
// several heads) and two promoting (w677); then KPPvKP read as built: w23_b5 reads the black
// pawn's push from what the sweep kept of w23_b4, and the lower white pawn's, which keeps its
// place among the white ones (a tie), from w33_b5.
TEST(ChessSweepThreePawns, EqualsTheGenericKernelGivenTheSameChildren) {
  SameChildren same({"KPPvKP", "KPPPvK"});
  same.compare("KPPvKP_w23_b4", 0);
  same.compare("KPPPvK_w222", 0);
  if (SameChildren::kAll)
    for (const char* name : {"KPPvKP_w25_b7", "KPPvKP_w77_b2", "KPPPvK_w234", "KPPPvK_w677"})
      same.compare(name, 0);
  same.read_built = true;
  same.compare("KPPvKP_w23_b4", 0);
  same.compare("KPPvKP_w33_b5", 0);
  same.compare("KPPvKP_w23_b5", 2);
}

// DTM segments with pawns, from made-up children (DTM bytes of 0..126 plies: each position's
// conversions act at their own plies, past the codes' rebase at 124), against the generic kernel
// given the same children. The kings and pawns alone, position by position: KPvK from the seventh
// rank back, each segment reading what the sweep kept of the one ahead as DTM bytes (w2 also the
// double push's from w4).
TEST(ChessSweepDistanceToMateWithPawns, KingsAndPawnsEqualTheGenericKernel) {
  SameChildren same({"KPvK"}, true);
  same.read_built = true;
  same.compare("KPvK_w7", 0);
  for (const char* name : {"KPvK_w6", "KPvK_w5", "KPvK_w4", "KPvK_w3"}) same.compare(name, 1);
  same.compare("KPvK_w2", 2);
}

// Runs, with a pawn of each colour (KRPvKP): promotions by push and capture, the push's read a run
// at a time (w7_b2); a black double push beside the white pawn, which may take it en passant (its
// virtual child weighs DTM bytes, w5_b7); the pushes kept as built (w3_b4, then w2_b4 reading
// White's). Under the sanitizers (5-15 times slower here) w7_b2 alone: the kings-and-pawns test
// above reads kept pushes through the same code (add_kept_pushes).
TEST(ChessSweepDistanceToMateWithPawns, RunsEqualTheGenericKernel) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr bool kSanitized = true;
#elif defined(__has_feature)
  constexpr bool kSanitized = __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
  constexpr bool kSanitized = false;
#endif
  SameChildren same({"KRPvKP"}, true);
  same.compare("KRPvKP_w7_b2", 0);
  if (kSanitized) return;
  same.compare("KRPvKP_w5_b7", 0);
  same.read_built = true;
  same.compare("KRPvKP_w3_b4", 0);
  same.compare("KRPvKP_w2_b4", 1);
}

// Three pawns, the third's file one more digit of the head (KPPvKP_w23_b4).
TEST(ChessSweepDistanceToMateWithPawns, ThreePawnsEqualTheGenericKernel) {
  SameChildren same({"KPPvKP"}, true);
  same.compare("KPPvKP_w23_b4", 0);
}

// The conversion into retra's order (to_segment) where the index's last group holds two or three
// identical pieces, which it converts in runs of the group's lowest piece: a round trip. load()
// fills the sweep's table from a made-up DTZ segment (a hash of retra's index: identical pieces
// in either order read one value, as the sweep computes them), and to_segment gives back exactly
// that segment, 0 with a hole on exactly the entries the game calls invalid. KNNvK: the pair is
// every piece but the kings, both kings on the a1-h8 diagonal taking the path entry by entry;
// KNNvKP: a pawn among the squares the run leaves out; KRNNvK: another piece before the pair;
// KQQQvK: three.
TEST(ChessSweepConversion, IdenticalPiecesComeBackThroughRetrasIndex) {
  auto round_trip = [](const char* material, const char* segment) {
    auto g = Game::closure({*parse_material(material)}, false);
    ASSERT_TRUE(g) << g.error().message();
    const Game& game = **g;
    const int s = game.find(segment);
    ASSERT_GE(s, 0) << segment;
    const Indexer& ix = *game.table(s).indexer;
    sweep::Table t = sweep::table_for(ix.slots(), 2);
    ASSERT_EQ(sweep::name_of(t), std::string(segment));
    // Draws, wins in 1..100 plies and losses in 0..100: within the horizon, so load keeps each.
    auto value = [](Color side, std::uint64_t i) {
      std::uint64_t h = (i * 2 + static_cast<std::uint64_t>(side)) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
      const int kind = static_cast<int>(h % 3), d = static_cast<int>((h >> 8) % 100);
      return kind == 0 ? 0 : kind == 1 ? 2 * (d + 1) + 1 : 2 * d + 2;
    };
    ASSERT_TRUE(sweep::load(t, ix, false, value)) << segment;
    const std::uint64_t size = ix.size();
    std::vector<std::uint8_t> out(2 * size, 0xff);
    std::vector<std::uint64_t> holes((out.size() + 63) / 64, 0);
    EXPECT_TRUE(sweep::to_segment(t, ix, out, holes.data()).empty()) << segment;
    std::uint64_t wrong = 0, wrong_holes = 0, checked = 0;
    Position p = game.unrank(s, 0);
    for (std::uint64_t i = 0; i < out.size(); ++i) {
      if (i > 0) game.next(s, p);
      const bool valid = p.valid;
      const bool hole = (holes[i / 64] >> (i % 64)) & 1;
      if (hole == valid && ++wrong_holes <= 5)
        ADD_FAILURE() << segment << " entry " << i << ": marked " << (hole ? "" : "not ")
                      << "a hole";
      const int want = valid ? value(i < size ? white : black, i % size) : 0;
      checked += valid;
      if (out[i] != want && ++wrong <= 5)
        ADD_FAILURE() << segment << " entry " << i << ": " << int(out[i]) << ", want " << want;
    }
    EXPECT_EQ(wrong_holes, 0u) << segment;
    EXPECT_EQ(wrong, 0u) << segment;
    EXPECT_GT(checked, size / 2) << segment;
  };
  round_trip("KNNvK", "KNNvK");
  if (SameChildren::kAll) {
    round_trip("KNNvKP", "KNNvKP_b6");
    round_trip("KRNNvK", "KRNNvK");
    round_trip("KQQQvK", "KQQQvK");
  }
}

}  // namespace
}  // namespace retra::chess
