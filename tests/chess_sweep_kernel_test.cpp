// The chess game's own kernel for pawnless DTZ segments (src/games/chess/sweep.hpp,
// Game::own_kernel) against retra's generic backward kernel: the same values on every entry and
// the holes it marks exactly the game's invalid entries, on two threads (so that ThreadSanitizer
// sees the sweeps' shared bytes); the codes rebased; what it declines; and the build driver taking
// it unless told not to. Thread safety: none.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/build/build.hpp"
#include "src/database.hpp"
#include "src/games/chess/game.hpp"
#include "src/games/chess/sweep.hpp"
#include "test_util.hpp"

namespace retra::chess {
namespace {

// KQvKR and its sub-tables, built by the generic kernel, every entry stored exactly (no class
// half), and the game of that build.
class ChessSweepKernel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    BuildRequest r = test::build_request("chess", {"KQvKR"}, dir_->path());
    r.tuning.own_kernel = false;
    r.class_half = format::ClassHalfChoice::none;
    auto built = build(r);
    ASSERT_TRUE(built) << built.error().message();
    auto db = Database::open(dir_->path());
    ASSERT_TRUE(db) << db.error().message();
    for (const char* name : {"KQvK", "KRvK", "KQvKR"}) {
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
  // lower() over the generic kernel's sub-tables.
  static kernels::Lower<int> lower() {
    return [](const int& s, std::uint64_t i) -> int {
      const std::string name = game().segment_name(s);
      const auto& v = (*values_)[name == "KQvK" ? 0 : name == "KRvK" ? 1 : 2];
      return v.at(i);
    };
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
  for (const char* name : {"KQvK", "KRvK", "KQvKR"}) {
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
    const auto& theirs = (*values_)[name == std::string("KQvK")   ? 0
                                    : name == std::string("KRvK") ? 1
                                                                  : 2];
    ASSERT_EQ(mine.size(), theirs.size());
    std::uint64_t differ = 0;
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (mine[i] != theirs[i] && ++differ <= 5)
        ADD_FAILURE() << name << " entry " << i << ": sweep " << int(mine[i]) << ", generic "
                      << int(theirs[i]);
    EXPECT_EQ(differ, 0u) << name;
  }
}

// Codes rebased once distances pass 40 plies (KQvKR's longest loss is 62 plies; the codes then
// reach 80): the same values; rebased once they pass 30, the distances outgrow the codes (60
// plies) and the solve says so instead of giving wrong values.
TEST_F(ChessSweepKernel, RebasedCodesGiveTheSameValuesOrAnHonestRefusal) {
  auto solved_with = [](int rebase_at, std::vector<std::uint8_t>* out) -> bool {
    using P = std::pair<PieceType, Color>;
    sweep::Table kvk = sweep::make_table({}, 2);
    sweep::Table kqvk = sweep::make_table({P{queen, white}}, 2);
    sweep::Table kvkr = sweep::make_table({P{rook, black}}, 2);
    sweep::Table top = sweep::make_table({P{queen, white}, P{rook, black}}, 2);
    for (sweep::Table* t : {&kvk, &kqvk, &kvkr}) {
      t->sub = {&kvk, &kvk, &kvk};
      auto r = sweep::solve(*t, {});
      EXPECT_TRUE(r && *r);
    }
    top.sub = {&kvkr, &kqvk, nullptr};  // without the queen, without the rook
    sweep::SolveOptions o;
    o.rebase_at = rebase_at;
    auto r = sweep::solve(top, o);
    EXPECT_TRUE(r) << r.error().message();
    if (!r || !*r) return false;
    EXPECT_EQ(top.longest, 62);
    const int s = game().find("KQvKR");
    out->assign(game().segment_size(s), 0);
    EXPECT_TRUE(sweep::to_dtz(top, *game().table(s).indexer, *out).empty());
    return true;
  };
  std::vector<std::uint8_t> plain, rebased, unused;
  ASSERT_TRUE(solved_with(sweep::kMaxWin, &plain));
  ASSERT_TRUE(solved_with(40, &rebased));
  EXPECT_TRUE(plain == rebased);
  EXPECT_TRUE(plain == (*values_)[2]);
  EXPECT_FALSE(solved_with(30, &unused));
}

TEST_F(ChessSweepKernel, DeclinesWhatItCannotBuildAndLeavesTheValues) {
  const int s = game().find("KQvKR");
  std::vector<std::uint8_t> v(game().segment_size(s), 0);
  auto untouched = [&] { return std::all_of(v.begin(), v.end(), [](auto b) { return b == 0; }); };
  // Distance to mate: the generic kernel's.
  EXPECT_FALSE(game().own_kernel(game().find("KQvKR.dtm"), v, lower(), two_threads(), {kPlenty}));
  // More memory than the plan leaves.
  EXPECT_FALSE(game().own_kernel(s, v, lower(), two_threads(), {std::uint64_t{1} << 20}));
  // A sub-table with a value beyond the 50-move horizon (a cursed win in 101 plies), which a
  // capture would have to count from ply 101.
  const kernels::Lower<int> cursed = [](const int&, std::uint64_t) { return 2 * 101 + 1; };
  EXPECT_FALSE(game().own_kernel(s, v, cursed, two_threads(), {kPlenty}));
  EXPECT_TRUE(untouched());
  // Pawns: the generic kernel's (KPvK's closure holds the pawnless tables its promotions reach,
  // which the own kernel builds).
  auto kpk = parse_material("KPvK");
  ASSERT_TRUE(kpk);
  auto pawns = Game::closure({*kpk}, false);
  ASSERT_TRUE(pawns) << pawns.error().message();
  for (int p = 0; p < (*pawns)->segments(); ++p) {
    if ((*pawns)->segment_name(p).find('P') == std::string::npos) continue;
    std::vector<std::uint8_t> w((*pawns)->segment_size(p), 0);
    EXPECT_FALSE((*pawns)->own_kernel(p, w, lower(), two_threads(), {kPlenty}))
        << (*pawns)->segment_name(p);
  }
}

// The driver takes the own kernel for pawnless DTZ segments (the manifest names it) and writes
// the generic kernel's bytes; DTM and pawn segments stay with the generic kernel.
TEST_F(ChessSweepKernel, TheBuildTakesItAndWritesTheSameFiles) {
  test::TempDir own;
  BuildRequest r =
      test::build_request("chess", {"KQvK", "KRvK", "KQvK.dtm", "KPvK_w5"}, own.path());
  r.class_half = format::ClassHalfChoice::none;
  auto built = build(r);
  ASSERT_TRUE(built) << built.error().message();
  auto db = Database::open(own.path());
  ASSERT_TRUE(db) << db.error().message();
  for (const auto& rec : (*db)->manifest().segments) {
    const bool sweep = rec.name.find('P') == std::string::npos && !rec.name.ends_with(".dtm");
    EXPECT_EQ(rec.build.value("kernel", ""), sweep ? "sweep" : "backward") << rec.name;
  }
  for (std::size_t k = 0; k < 2; ++k) {
    const char* name = k == 0 ? "KQvK" : "KRvK";
    const auto v = test::read_segment(**db, name);
    EXPECT_TRUE(
        std::equal(v.begin(), v.end(), (*values_)[k].begin(), (*values_)[k].end(),
                   [](std::int8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; }))
        << name;
  }
}

}  // namespace
}  // namespace retra::chess
