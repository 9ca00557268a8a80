// Chess tables against the independent solver of chess_reference.hpp (boards, explicit graphs,
// no index, no kernel): WDL50, DTZ and DTM of every legal position of every 3-piece table, in
// both colourings and with both sides to move, and of the 4-piece pawn tables (en passant
// included) that fit a unit test; plus the public facts of the spec: the longest mates of KQvK,
// KRvK, KQvKR and KRvKN. Labelled slow (release builds only).
#include <gtest/gtest.h>

#include <bit>

#include "chess_reference.hpp"
#include "retra/probe.hpp"
#include "src/build/build.hpp"
#include "src/games/chess/module.hpp"
#include "src/games/chess/values.hpp"
#include "test_util.hpp"

namespace retra::chess {
namespace {

class ChessReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    BuildRequest r = test::build_request("chess", {}, dir_->path());
    OptionValues ov;
    ov["--endgame"] = {"KQvK", "KRvK", "KBvK", "KNvK", "KPvK", "KPvKP", "KQvKR", "KRvKN"};
    auto targets = find_module("chess")->targets(ov);
    ASSERT_TRUE(targets) << targets.error().message();
    r.targets = *targets;
    auto built = build(r);
    ASSERT_TRUE(built) << built.error().message();
    probe::Value err;
    db_ = probe::Prober::open(dir_->path().string(), {}, &err).release();
    ASSERT_NE(db_, nullptr) << err.message;
  }
  static void TearDownTestSuite() {
    delete db_;
    delete dir_;
  }
  static test::TempDir* dir_;
  static probe::Prober* db_;
};
test::TempDir* ChessReference::dir_ = nullptr;
probe::Prober* ChessReference::db_ = nullptr;

// Every legal board with the pieces of `m` (pawns on ranks 2..7), with both sides to move.
template <class F>
void for_each_board(const Material& m, F&& f) {
  std::vector<std::uint8_t> codes;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t)
      for (int k = 0; k < m.count[c][t]; ++k) codes.push_back(code(PieceType(t), Color(c)));
  Board b;
  std::function<void(std::size_t, int)> place = [&](std::size_t i, int min_sq) {
    if (i == codes.size()) {
      for (Color side : {white, black}) {
        b.side = side;
        if (!board_error(b)) f(b);
      }
      return;
    }
    // Identical pieces in ascending squares, so that each placement comes once.
    const int from = i > 0 && codes[i] == codes[i - 1] ? min_sq + 1 : 0;
    for (int s = from; s < 64; ++s) {
      if (b.piece[s]) continue;
      if (type_of(codes[i]) == pawn && (rank_of(s) == 0 || rank_of(s) == 7)) continue;
      b.piece[s] = codes[i];
      place(i + 1, s);
      b.piece[s] = 0;
    }
  };
  place(0, 0);
}

// The tables' values of a board in byte codes (for the conversions of the reference).
reference::Solver::Values tables(const probe::Prober& db, const Board& b) {
  const probe::ChessValue v = db.chess(bitboards_of(b));
  EXPECT_TRUE(v) << to_fen(b) << ": " << v.message;
  reference::Solver::Values out;
  out.dtz = v.wdl == draw ? 0 : v.wdl > 0 ? 2 * v.dtz + 1 : 2 * -v.dtz + 2;
  out.dtm = !v.has_dtm ? 0 : v.dtm > 0 ? v.dtm + 2 : -v.dtm + 2;
  return out;
}

// The reference's DTM bytes (Fang's encoding, plies + 2) as signed plies.
std::optional<int> reference_dtm(int b) {
  if (b == 0) return std::nullopt;
  return (b & 1) ? b - 2 : -(b - 2);
}

void expect_equal_to_reference(const probe::Prober& db, const std::string& name) {
  const Material m = *parse_material(name);
  reference::Solver ref(m, [&](const Board& b) { return tables(db, b); });
  std::uint64_t checked = 0, wrong = 0;
  for (const Material& coloured : {m, m.flipped()}) {
    for_each_board(coloured, [&](const Board& b) {
      const auto want = ref.value(b);
      const Dtz z = decode_dtz(want.dtz);
      const auto dtm = reference_dtm(want.dtm);
      const probe::ChessValue got = db.chess(bitboards_of(b));
      ++checked;
      if (!got || got.wdl != z.wdl || got.dtz != z.dtz || got.has_dtm != dtm.has_value() ||
          (dtm && got.dtm != *dtm)) {
        if (++wrong <= 5)
          ADD_FAILURE() << name << " " << to_fen(b) << ": tables " << wdl_name(got.wdl) << " dtz "
                        << got.dtz << " dtm " << (got.has_dtm ? std::to_string(got.dtm) : "-")
                        << " " << got.message << "; reference " << wdl_name(z.wdl) << " dtz "
                        << z.dtz << " dtm " << (dtm ? std::to_string(*dtm) : "-");
      }
    });
    if (m.symmetric()) break;
  }
  EXPECT_EQ(wrong, 0u) << checked << " positions of " << name << " checked";
  EXPECT_GT(checked, 10000u);
}

TEST_F(ChessReference, EveryThreePieceTable) {
  for (const char* name : {"KQvK", "KRvK", "KBvK", "KNvK", "KPvK"})
    expect_equal_to_reference(*db_, name);
}

TEST_F(ChessReference, KingAndPawnAgainstKingAndPawn) { expect_equal_to_reference(*db_, "KPvKP"); }

// The spec's longest mates, winner to move.
TEST_F(ChessReference, PublicLongestMates) {
  auto db = Database::open(dir_->path());
  ASSERT_TRUE(db);
  auto stats = find_module("chess")->stats_report(**db, std::nullopt);
  ASSERT_TRUE(stats) << stats.error().message();
  const auto& e = stats->json["endgames"];
  const std::pair<const char*, int> facts[] = {
      {"KQvK", 19}, {"KRvK", 31}, {"KQvKR", 69}, {"KRvKN", 79}};
  for (const auto& [name, plies] : facts) {
    ASSERT_TRUE(e.contains(name)) << name;
    EXPECT_EQ(e[name]["white"]["longest_dtm"]["plies"], plies) << name;
    // The example position really is that far from mate.
    const std::string fen = e[name]["white"]["longest_dtm"]["fen"];
    auto b = parse_fen(fen);
    ASSERT_TRUE(b) << fen;
    const auto v = db_->chess(bitboards_of(*b));
    EXPECT_EQ(v.dtm, plies) << fen;
  }
}

}  // namespace
}  // namespace retra::chess
