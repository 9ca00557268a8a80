// Xiangqi movement rules and their blockers, king capture (OKIC, flying general), FEN in both
// alphabets with clear errors, and perft-style move counts on hand-checked positions.
#include <gtest/gtest.h>

#include <set>

#include "src/games/xiangqi/board.hpp"

namespace retra::xiangqi {
namespace {

Board fen(const char* f) {
  auto p = parse_fen(f);
  EXPECT_TRUE(p) << f << ": " << (p ? "" : p.error().message());
  return p ? p->board : Board{};
}

int sq(const char* name) { return square(name[0] - 'a', name[1] - '0'); }

// Destinations of the piece on `from`.
std::set<std::string> moves_of(const Board& b, const char* from) {
  std::set<std::string> out;
  for_each_move(b, color_of(b[sq(from)]), [&](const Move& m) {
    if (m.from == sq(from)) out.insert(square_name(m.to));
  });
  return out;
}

using S = std::set<std::string>;

TEST(XiangqiRules, KingStaysInThePalace) {
  EXPECT_EQ(moves_of(fen("3k5/9/9/9/9/9/9/9/9/3K5 w"), "d0"), (S{"e0", "d1"}));
  EXPECT_EQ(moves_of(fen("3k5/9/9/9/9/9/9/9/4K4/9 w"), "e1"), (S{"e0", "e2", "d1", "f1"}));
}

TEST(XiangqiRules, GuardsMoveDiagonallyOnFivePoints) {
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/9/9/9/4A4/3K5 w"), "e1"), (S{"f0", "d2", "f2"}));
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/9/9/9/9/3K1A3 w"), "f0"), (S{"e1"}));
  EXPECT_FALSE(parse_fen("4k4/9/9/9/9/9/9/9/9/2AK5 w"));  // c0 is no guard point
}

TEST(XiangqiRules, MinisterTwoDiagonalStepsBlockedByTheEyeNotCrossingTheRiver) {
  // c4 is on Red's bank: it may go back to a2/e2, never forward over the river to a6/e6.
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/2B6/9/9/9/4K4 w"), "c4"), (S{"a2", "e2"}));
  // A piece on d3 blocks the eye c4 -> e2.
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/2B6/3N5/9/9/4K4 w"), "c4"), (S{"a2"}));
}

TEST(XiangqiRules, KnightIsBlockedByItsLeg) {
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/4N4/9/9/9/3K5 w"), "e4").size(), 8u);
  // A piece on e5 blocks both moves towards rank 6; one on d4 both towards file c.
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/4p4/3pN4/9/9/9/3K5 w"), "e4"), (S{"g5", "g3", "d2", "f2"}));
}

TEST(XiangqiRules, RookSlidesAndCapturesTheFirstEnemy) {
  const Board b = fen("4k4/9/9/9/4p4/9/9/9/4R4/3K5 w");
  const S m = moves_of(b, "e1");
  EXPECT_TRUE(m.count("e5"));   // captures the pawn
  EXPECT_FALSE(m.count("e6"));  // but does not pass it
  EXPECT_TRUE(m.count("a1") && m.count("i1") && m.count("e0"));
  EXPECT_EQ(m.size(), 4u + 8u + 1u);
}

TEST(XiangqiRules, CannonNeedsExactlyOneScreenToCapture) {
  // Cannon e1, screen e4 (own pawn... a red pawn cannot be on e4? it can: e3/e4 are pawn points),
  // black pawn e6: capture over the screen; no capture of e4 itself, no move beyond e6.
  const Board b = fen("4k4/9/9/4p4/9/4P4/9/9/4C4/3K5 w");
  const S m = moves_of(b, "e1");
  EXPECT_TRUE(m.count("e6"));
  EXPECT_FALSE(m.count("e4"));
  EXPECT_FALSE(m.count("e5"));
  EXPECT_TRUE(m.count("e2") && m.count("e3") && m.count("e0"));
  // Two screens: no capture.
  const Board two = fen("4k4/9/9/4p4/4p4/4P4/9/9/4C4/3K5 w");
  EXPECT_FALSE(moves_of(two, "e1").count("e6"));
}

TEST(XiangqiRules, PawnsGoSidewaysOnlyAfterTheRiverAndNeverBack) {
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/9/4P4/9/9/3K5 w"), "e3"), (S{"e4"}));
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/4P4/9/9/9/9/3K5 w"), "e5"), (S{"e6", "d5", "f5"}));
  EXPECT_EQ(moves_of(fen("P3k4/9/9/9/9/9/9/9/9/3K5 w"), "a9"), (S{"b9"}));
  // Black pawns go down the board.
  EXPECT_EQ(moves_of(fen("4k4/9/9/9/9/4p4/9/9/9/3K5 b"), "e4"), (S{"e3", "d4", "f4"}));
}

TEST(XiangqiRules, FlyingGeneralAndChecks) {
  EXPECT_TRUE(kings_facing(fen("4k4/9/9/9/9/9/9/9/9/4K4 w")));
  EXPECT_FALSE(kings_facing(fen("4k4/9/9/9/4P4/9/9/9/9/4K4 w")));
  EXPECT_TRUE(can_capture_king(fen("4k4/9/9/9/9/9/9/9/9/4K4 b"), black));
  EXPECT_TRUE(in_check(fen("4k4/9/9/9/9/9/9/9/4R4/3K5 b"), black));     // rook on the file
  EXPECT_FALSE(in_check(fen("4k4/9/9/9/9/9/9/9/4C4/3K5 b"), black));    // cannon without screen
  EXPECT_TRUE(in_check(fen("4k4/9/9/9/4p4/9/9/9/4C4/3K5 b"), black));   // with a screen
  EXPECT_TRUE(in_check(fen("4k4/9/3N5/9/9/9/9/9/9/3K5 b"), black));     // knight d7 -> e9
  EXPECT_FALSE(in_check(fen("4k4/3R5/3N5/9/9/9/9/9/9/3K5 b"), black));  // leg d8 blocked
  EXPECT_TRUE(in_check(fen("3Pk4/9/9/9/9/9/9/9/9/3K5 b"), black));      // pawn beside the king
}

TEST(XiangqiRules, PerftFromHandCheckedPositions) {
  auto count = [](const char* f) {
    auto p = parse_fen(f);
    int n = 0;
    for_each_move(p->board, p->side, [&](const Move&) { ++n; });
    return n;
  };
  // K d0 (2: e0, d1) + R a0 (a1..a9 = 9, b0, c0 = 2): 13.
  EXPECT_EQ(count("4k4/9/9/9/9/9/9/9/9/R2K5 w"), 13);
  // Black K e9 alone: e8, d9, f9.
  EXPECT_EQ(count("4k4/9/9/9/9/9/9/9/9/R2K5 b"), 3);
  // K e1 (4) + N e4 (8) + guard d0 (-> e1 occupied, so 0): 12.
  EXPECT_EQ(count("4k4/9/9/9/9/4N4/9/9/4K4/3A5 w"), 12);
}

TEST(XiangqiFen, BothAlphabetsAndRoundTrip) {
  auto a = parse_fen("3akab2/9/9/9/9/9/9/9/4H4/3K5 b");
  auto b = parse_fen("3gkgm2/9/9/9/9/9/9/9/4N4/3K5 b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->board, b->board);
  EXPECT_EQ(a->side, black);
  EXPECT_EQ(to_fen(a->board, a->side), "3gkgm2/9/9/9/9/9/9/9/4N4/3K5 b");
  EXPECT_EQ(parse_fen("3k5/9/9/9/9/9/9/9/9/3K5 r")->side, red);
}

TEST(XiangqiFen, ClearErrors) {
  auto err = [](const char* f, const char* fragment) {
    auto p = parse_fen(f);
    ASSERT_FALSE(p) << f;
    EXPECT_EQ(p.error().code(), Errc::invalid_argument);
    EXPECT_NE(p.error().message().find(fragment), std::string::npos) << p.error().message();
  };
  err("4k4/9/9/9/9/9/9/9/9/3K5", "side to move is missing");
  err("4k4/9/9/9/9/9/9/9/9/3K5 x", "not w, r or b");
  err("4k4/9/9/9/9/9/9/9/3K5 w", "fewer than 10");
  err("4k4/9/9/9/9/9/9/9/9/3K6 w", "more than 9 files");
  err("4k4/9/9/9/9/9/9/9/9/3K4 w", "rank 0 has 8 files");
  err("4k4/9/9/9/9/9/9/9/9/3Q5 w", "unknown piece letter 'Q'");
  err("9/9/9/9/9/9/9/9/9/3K5 w", "black has 0 kings");
  err("4k4/9/9/9/9/9/9/9/9/K8 w", "cannot stand on a0");     // king outside the palace
  err("4k4/9/9/9/9/9/9/1P7/9/3K5 w", "cannot stand on b2");  // no red pawn there
  err("4k4/9/9/9/4B4/9/9/9/9/3K5 w", "cannot stand on e5");  // minister over the river
}

}  // namespace
}  // namespace retra::xiangqi
