// The verifier against planted errors, for every game and value kind: wrong values written back
// behind valid checksums and manifest records (one value, then a whole block) must be found, and
// the failure must name the segment, the block and the position that was changed. Also: a
// wrong-but-consistent Awari segment (another solution of the equations on cycles) passes the
// one-pass check, as docs/VERIFY.md says, and is caught by the full mode.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "awari_util.hpp"
#include "src/games/awari/module.hpp"
#include "src/module/module.hpp"
#include "src/verify/verify.hpp"

namespace retra {
namespace {

struct Case {
  const char* game;
  const char* kind;                  // the value kind, as the matrix in the closing note names it
  std::vector<std::string> targets;  // segment names, or an option and its values
  Metric metric;
  const char* segment;  // the segment the errors are planted in
};

// Small databases of every game and value kind: Awari scores, xiangqi distance to mate and to
// conversion, chess WDL+DTZ (one byte, the 50-move classes) and DTM.
const Case kCases[] = {
    {"awari", "score", awari::stone_range(0, 8), Metric::automatic, "8"},
    {"xiangqi", "dtm", {"KRKG"}, Metric::automatic, "KRKG"},
    {"xiangqi", "dtc", {"KRKG"}, Metric::dtc, "KRKG"},
    {"chess", "wdl+dtz", {"--endgame", "KPvK"}, Metric::automatic, "KPvK_w6"},
    {"chess", "dtm", {"--endgame", "KPvK"}, Metric::automatic, "KPvK_w6.dtm"},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.game << " " << c.kind; }

class PlantedErrors : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { dir_ = new test::TempDir; }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The case's database, built once per case and copied for each damage.
  std::filesystem::path built(const Case& c) {
    const auto db = *dir_ / (std::string(c.game) + "-" + c.kind);
    if (!std::filesystem::exists(db)) {
      BuildRequest req = test::build_request(c.game, c.targets, db);
      if (c.targets.front().starts_with("--")) {
        OptionValues ov;
        ov[c.targets.front()] = {c.targets.begin() + 1, c.targets.end()};
        auto targets = find_module(c.game)->targets(ov);
        EXPECT_TRUE(targets) << targets.error().message();
        req.targets = *targets;
      }
      req.metric = c.metric;
      req.block_entries = 4096;  // several blocks even in small segments
      auto r = build(req);
      EXPECT_TRUE(r) << r.error().message();
      auto d = Database::open(db);
      auto rep = verify(**d, {2, nullptr});
      EXPECT_TRUE(rep && rep->ok) << (rep && rep->failure ? rep->failure->message : "");
    }
    return db;
  }
  std::filesystem::path copy_of(const std::filesystem::path& db, const test::TempDir& tmp) {
    const auto to = tmp / "db";
    std::filesystem::copy(db, to, std::filesystem::copy_options::recursive);
    return to;
  }
  static test::TempDir* dir_;
};
test::TempDir* PlantedErrors::dir_ = nullptr;

// Verifies `db` and expects the failure in `segment`; returns it.
VerifyFailure expect_caught(const std::filesystem::path& db, const std::string& segment) {
  auto d = Database::open(db);
  EXPECT_TRUE(d) << d.error().message();
  auto rep = verify(**d, {2, nullptr});
  EXPECT_TRUE(rep) << rep.error().message();
  if (!rep) return {};
  EXPECT_FALSE(rep->ok);
  EXPECT_TRUE(rep->failure.has_value());
  if (!rep->failure) return {};
  EXPECT_EQ(rep->failure->segment, segment) << rep->failure->message;
  EXPECT_TRUE(rep->failure->index.has_value())
      << "a value failure, not the statistics: " << rep->failure->message;
  return *rep->failure;
}

// One value at a time, at random positions: each replaced by another value the segment holds
// (a valid encoding, so only the rules can tell it is wrong). The failure names exactly that
// position, its block and its index.
TEST_P(PlantedErrors, OneWrongValueIsNamed) {
  const Case& c = GetParam();
  const auto db = built(c);
  std::mt19937_64 rng(20261126);
  SCOPED_TRACE(::testing::Message() << "seed 20261126, " << c.game << " " << c.kind);
  constexpr int kPlants = 6;
  int caught = 0;
  for (int k = 0; k < kPlants; ++k) {
    test::TempDir tmp;
    const auto copy = copy_of(db, tmp);
    std::uint64_t at = 0;
    std::uint64_t block = 0;
    {
      auto d = Database::open(copy);
      ASSERT_TRUE(d);
      auto values = test::read_segment(**d, c.segment);
      ASSERT_GT(values.size(), 0u);
      block = (*(*d)->segment(c.segment))->info().block_entries;
      at = rng() % values.size();
      std::uint64_t from = rng() % values.size();
      while (values[from] == values[at]) from = (from + 1) % values.size();
      values[at] = values[from];
      test::rewrite_segment(**d, c.segment, values);
    }
    const VerifyFailure f = expect_caught(copy, c.segment);
    ASSERT_TRUE(f.index && f.block) << f.message;
    EXPECT_EQ(*f.index, at) << f.message;
    EXPECT_EQ(*f.block, at / block) << f.message;
    EXPECT_FALSE(f.position.empty());
    EXPECT_NE(f.message.find("index " + std::to_string(at) + " position " + f.position),
              std::string::npos)
        << f.message;
    caught += f.index && *f.index == at;
  }
  EXPECT_EQ(caught, kPlants);
  std::printf("planted-error matrix: %-7s %-7s one value  x%d: caught %d\n", c.game, c.kind,
              kPlants, caught);
}

// A whole block rewritten (its values rotated by one entry: every byte a valid value, most of
// them in the wrong place): the failure lies in that block.
TEST_P(PlantedErrors, AWrongBlockIsNamed) {
  const Case& c = GetParam();
  const auto db = built(c);
  std::mt19937_64 rng(7);
  SCOPED_TRACE(::testing::Message() << "seed 7, " << c.game << " " << c.kind);
  constexpr int kPlants = 3;
  int caught = 0;
  for (int k = 0; k < kPlants; ++k) {
    test::TempDir tmp;
    const auto copy = copy_of(db, tmp);
    std::uint64_t b = 0, block = 0;
    {
      auto d = Database::open(copy);
      ASSERT_TRUE(d);
      auto values = test::read_segment(**d, c.segment);
      block = (*(*d)->segment(c.segment))->info().block_entries;
      const std::uint64_t blocks = (values.size() + block - 1) / block;
      ASSERT_GE(blocks, 2u) << "the case should span several blocks";
      // A block whose rotation changes something (not all one value).
      for (int tries = 0;; ++tries) {
        ASSERT_LT(tries, 1000);
        b = rng() % blocks;
        const auto first = values.begin() + static_cast<std::ptrdiff_t>(b * block);
        const auto last =
            values.begin() + static_cast<std::ptrdiff_t>(std::min(values.size(), (b + 1) * block));
        if (std::adjacent_find(first, last, std::not_equal_to<>()) == last) continue;
        std::rotate(first, first + 1, last);
        break;
      }
      test::rewrite_segment(**d, c.segment, values);
    }
    const VerifyFailure f = expect_caught(copy, c.segment);
    ASSERT_TRUE(f.block) << f.message;
    EXPECT_EQ(*f.block, b) << f.message;
    EXPECT_GT(f.wrong_positions, 0u);
    caught += f.block && *f.block == b;
  }
  EXPECT_EQ(caught, kPlants);
  std::printf("planted-error matrix: %-7s %-7s one block  x%d: caught %d\n", c.game, c.kind,
              kPlants, caught);
}

INSTANTIATE_TEST_SUITE_P(EveryGameAndValueKind, PlantedErrors, ::testing::ValuesIn(kCases),
                         [](const auto& p) {
                           std::string n = std::string(p.param.game) + "_" + p.param.kind;
                           std::replace(n.begin(), n.end(), '+', '_');
                           return n;
                         });

// Awari's values are one solution of v(p) = max over moves (captured - v(child)); on cycles the
// equations have others. Gauss-Seidel sweeps started from the true values with every draw set
// to -1 settle on such a solution for the 6-stone segment (found by experiment; asserted below).
TEST(FullVerify, AWrongButConsistentAwariSegmentIsCaughtOnlyByTheFullMode) {
  test::TempDir dir;
  const auto db = dir / "db";
  ASSERT_TRUE(build(test::awari_request(6, db)));
  constexpr int n = 6;
  const awari::Game g;
  std::vector<std::vector<std::int8_t>> v;
  {
    auto d = Database::open(db);
    ASSERT_TRUE(d);
    for (int s = 0; s <= n; ++s) v.push_back(test::read_segment(**d, std::to_string(s)));
  }
  auto w = v[n];
  for (auto& x : w)
    if (x == 0) x = -1;
  bool changed = true;
  int sweeps = 0;
  for (; changed && sweeps < 1000; ++sweeps) {
    changed = false;
    for (std::uint64_t i = 0; i < w.size(); ++i) {
      const auto b = g.unrank(n, i);
      int best = -1000, legal = 0;
      g.for_each_move(n, b, [&](const Child<int>& c) {
        ++legal;
        const auto& seg = c.segment == n ? w : v[static_cast<std::size_t>(c.segment)];
        best = std::max(best, c.gain - seg[c.index]);
      });
      if (legal == 0) best = g.no_move_value(n, b);
      if (best != w[i]) {
        w[i] = static_cast<std::int8_t>(best);
        changed = true;
      }
    }
  }
  ASSERT_FALSE(changed) << "the sweeps settle: every equation holds";
  std::uint64_t differ = 0;
  for (std::size_t i = 0; i < w.size(); ++i) differ += w[i] != v[n][i];
  ASSERT_GT(differ, 0u) << "a different solution";
  std::printf("wrong-but-consistent 6-stone segment: %llu of %zu values differ (%d sweeps)\n",
              static_cast<unsigned long long>(differ), w.size(), sweeps);
  {
    auto d = Database::open(db);
    ASSERT_TRUE(d);
    test::rewrite_segment(**d, std::to_string(n), w);
    // Statistics that describe the new values, so nothing but the values can give it away.
    format::SegmentRecord rec = *(*d)->manifest().find(std::to_string(n));
    rec.stats = awari::Module::stats_json(awari::Module::statistics(
        g, n, {reinterpret_cast<const std::uint8_t*>(w.data()), w.size()}, {}, 1));
    ASSERT_TRUE((*d)->commit_segment(rec));
  }
  auto d = Database::open(db);
  ASSERT_TRUE(d);
  auto one_pass = verify(**d, {2, nullptr});
  ASSERT_TRUE(one_pass) << one_pass.error().message();
  EXPECT_TRUE(one_pass->ok) << "the one-pass check cannot tell: "
                            << (one_pass->failure ? one_pass->failure->message : "");
  auto full = verify(**d, {2, nullptr, true});
  ASSERT_TRUE(full) << full.error().message();
  ASSERT_FALSE(full->ok);
  ASSERT_TRUE(full->failure);
  EXPECT_EQ(full->failure->segment, std::to_string(n));
  EXPECT_EQ(full->failure->wrong_positions, differ);
  ASSERT_TRUE(full->failure->index);
  EXPECT_NE(w[*full->failure->index], v[n][*full->failure->index]);
  EXPECT_NE(full->failure->message.find("another solution"), std::string::npos)
      << full->failure->message;
  // The true database passes the full mode, built by either kernel.
  for (Kernel k : {Kernel::backward, Kernel::forward}) {
    test::TempDir other;
    BuildRequest req = test::awari_request(6, other / "db");
    req.kernel = k;
    ASSERT_TRUE(build(req));
    auto od = Database::open(other / "db");
    auto rep = verify(**od, {2, nullptr, true});
    ASSERT_TRUE(rep) << rep.error().message();
    EXPECT_TRUE(rep->ok) << (rep->failure ? rep->failure->message : "");
    for (const auto& s : rep->segments)
      EXPECT_EQ(s.check, k == Kernel::backward ? "one-pass+forward" : "one-pass+backward");
  }
}

// A value beyond a byte is read from the segment's far section: one planted there (its byte
// left as it was, so only a verifier that reads the section can see it) is named.
TEST(FarValues, AWrongFarValueIsNamed) {
  test::TempDir dir;
  BuildRequest req = test::build_request("chess", {}, dir.path());
  req.targets = {"KRvK"};
  ASSERT_TRUE(build(req));
  auto d = Database::open(dir.path());
  ASSERT_TRUE(d);
  const auto values = test::read_segment(**d, "KRvK");
  std::uint64_t at = 0;
  while (at < values.size() && static_cast<std::uint8_t>(values[at]) < 3) ++at;  // a decided one
  ASSERT_LT(at, values.size());
  const format::FarValue far[] = {{at, 2 * 150 + 1}};  // a win 150 plies from zeroing
  test::rewrite_segment(**d, "KRvK", values, far);
  d = Database::open(dir.path());
  ASSERT_TRUE(d);
  auto rep = verify(**d, {2, nullptr});
  ASSERT_TRUE(rep);
  ASSERT_FALSE(rep->ok);
  ASSERT_TRUE(rep->failure && rep->failure->index) << (rep->failure ? rep->failure->message : "");
  EXPECT_EQ(*rep->failure->index, at) << rep->failure->message;
  EXPECT_EQ(rep->failure->stored, 301) << rep->failure->message;
}

// Distance values need no second algorithm (docs/VERIFY.md): the full mode checks them once.
TEST(FullVerify, DistanceSegmentsAreCheckedOnce) {
  test::TempDir dir;
  ASSERT_TRUE(build(test::build_request("xiangqi", {"KRK"}, dir.path())));
  auto d = Database::open(dir.path());
  auto rep = verify(**d, {2, nullptr, true});
  ASSERT_TRUE(rep && rep->ok);
  ASSERT_FALSE(rep->segments.empty());
  for (const auto& s : rep->segments) EXPECT_EQ(s.check, "one-pass") << s.name;
}

}  // namespace
}  // namespace retra
