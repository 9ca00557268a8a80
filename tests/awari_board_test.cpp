// Hand-checked Awari rules (spec: ../shared/spec/awari.md): sowing, captures, must-feed, terminal
// rules, and the position parser's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/games/awari/board.hpp"
#include "src/games/awari/index.hpp"

namespace retra::awari {
namespace {

Board B(std::initializer_list<int> pits) {
  Board b;
  int i = 0;
  for (int p : pits) b.pit[i++] = static_cast<std::uint8_t>(p);
  EXPECT_EQ(i, 12);
  return b;
}

TEST(AwariRules, SowsOneStonePerPitCounterClockwise) {
  const MoveResult m = make_move(B({0, 3, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}), 1);
  ASSERT_EQ(m.kind, MoveKind::quiet);
  // mover after the move: 0,0,1,1,1,0 | 1,0,0,0,0,0; the child is seen from the opponent.
  EXPECT_EQ(m.child, B({1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0}));
}

TEST(AwariRules, TwelveStonesSkipTheOrigin) {
  // 11 stones reach pits 1..11, the 12th skips pit 0 and lands in pit 1.
  const MoveResult m = make_move(B({12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 0);
  ASSERT_EQ(m.kind, MoveKind::quiet);
  EXPECT_EQ(m.child, B({1, 1, 1, 1, 1, 1, 0, 2, 1, 1, 1, 1}));
}

TEST(AwariRules, ElevenStonesEndInThePitBeforeTheOrigin) {
  // From pit 2: pits 3..11 and 0, 1; the last stone lands in pit 1 on the mover's own side, so
  // the opponent pit 6 holding 2 afterwards is not captured.
  const MoveResult m = make_move(B({0, 0, 11, 0, 0, 0, 1, 0, 0, 0, 0, 0}), 2);
  ASSERT_EQ(m.kind, MoveKind::quiet);
  EXPECT_EQ(m.child, B({2, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1}));
}

TEST(AwariRules, TwentyTwoStonesGoTwiceAroundAndEndBeforeTheOrigin) {
  const MoveResult m = make_move(B({0, 22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 1);
  ASSERT_EQ(m.kind, MoveKind::quiet);
  EXPECT_EQ(m.child, B({2, 2, 2, 2, 2, 2, 2, 0, 2, 2, 2, 2}));
}

TEST(AwariRules, CaptureChainWalksBackOverTwosAndThrees) {
  // Pit 5 (3 stones) sows into 6, 7, 8 making 2, 2, 3: all three are captured (7 stones) and the
  // opponent keeps pit 9.
  const MoveResult m = make_move(B({0, 0, 0, 0, 0, 3, 1, 1, 2, 1, 0, 0}), 5);
  ASSERT_EQ(m.kind, MoveKind::capture);
  EXPECT_EQ(m.captured, 7);
  EXPECT_EQ(m.child, B({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(AwariRules, CaptureChainStopsAtAOne) {
  // Sowing makes pits 6, 7, 8 hold 2, 1, 2: pit 8 is captured, pit 7 (one stone) stops the chain,
  // so pit 6 is kept although it holds 2.
  const MoveResult m = make_move(B({0, 0, 0, 0, 0, 3, 1, 0, 1, 1, 1, 0}), 5);
  ASSERT_EQ(m.kind, MoveKind::capture);
  EXPECT_EQ(m.captured, 2);
  EXPECT_EQ(m.child, B({2, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(AwariRules, NoCaptureOnTheMoversOwnSide) {
  // The last stone lands in the mover's pit 4, which then holds 2: nothing is captured.
  const MoveResult m = make_move(B({0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0}), 3);
  ASSERT_EQ(m.kind, MoveKind::quiet);
  EXPECT_EQ(m.captured, 0);
}

TEST(AwariRules, CaptureNeedsTwoOrThreeAfterSowing) {
  // Pit 6 holds 3 before the stone lands: 4 afterwards, no capture.
  EXPECT_EQ(make_move(B({0, 0, 0, 0, 0, 1, 3, 1, 0, 0, 0, 0}), 5).kind, MoveKind::quiet);
  // Pit 6 holds 2 before: 3 afterwards, captured.
  const MoveResult m = make_move(B({0, 0, 0, 0, 0, 1, 2, 1, 0, 0, 0, 0}), 5);
  EXPECT_EQ(m.kind, MoveKind::capture);
  EXPECT_EQ(m.captured, 3);
}

TEST(AwariRules, WouldBeGrandSlamIsIllegal) {
  // Capturing 6, 7, 8 would take every opponent stone: the move starves the opponent (rule 3).
  EXPECT_EQ(make_move(B({0, 0, 0, 0, 0, 3, 1, 1, 2, 0, 0, 0}), 5).kind, MoveKind::starves);
}

TEST(AwariRules, GrandSlamAsOnlyMoveEndsTheGameForTheMover) {
  // The only move would capture everything, so no move is legal and rule 3 gives the mover all.
  const Board b = B({0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0});
  EXPECT_EQ(make_move(b, 5).kind, MoveKind::starves);
  EXPECT_EQ(for_each_legal_move(b, [](int, const MoveResult&) {}), 0);
  EXPECT_EQ(no_move_value(b), 4);
}

TEST(AwariRules, MustFeedAnEmptyOpponent) {
  // Pit 0 stays on the mover's side and would leave the opponent empty; pit 5 feeds.
  const Board b = B({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(make_move(b, 0).kind, MoveKind::starves);
  EXPECT_EQ(make_move(b, 5).kind, MoveKind::quiet);
  std::vector<int> legal;
  EXPECT_EQ(for_each_legal_move(b, [&](int pit, const MoveResult&) { legal.push_back(pit); }), 1);
  EXPECT_EQ(legal, std::vector<int>{5});
}

TEST(AwariRules, ForcedNonFeedingPositionGivesTheMoverEverything) {
  // No move reaches the empty opponent: rule 3, the mover takes all 2 stones.
  const Board b = B({1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(for_each_legal_move(b, [](int, const MoveResult&) {}), 0);
  EXPECT_EQ(no_move_value(b), 2);
}

TEST(AwariRules, EmptySideToMoveGivesTheOpponentEverything) {
  const Board b = B({0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0});
  EXPECT_EQ(for_each_legal_move(b, [](int, const MoveResult&) {}), 0);
  EXPECT_EQ(no_move_value(b), -3);
  EXPECT_EQ(make_move(b, 0).kind, MoveKind::empty_pit);
}

TEST(AwariRules, StonesArePreservedByQuietMoves) {
  const Board b = B({4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4});
  int moves = for_each_legal_move(
      b, [&](int, const MoveResult& m) { EXPECT_EQ(m.child.stones() + m.captured, 48); });
  EXPECT_EQ(moves, 6);
}

// q is a child of p by a quiet move exactly when p is a quiet predecessor of q, counted with
// multiplicity, over every position with at most 10 stones.
TEST(AwariUnmoves, PredecessorsAreExactlyTheQuietParentsUpToTenStones) {
  // The (parent, child) pairs each way, sorted: equal lists are equal multisets.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> forward, backward;
  for (int n = 0; n <= 10; ++n) {
    forward.clear();
    backward.clear();
    Board b = unrank(n, 0);
    do {
      const std::uint64_t p = rank(b);
      for_each_legal_move(b, [&](int, const MoveResult& m) {
        if (m.kind == MoveKind::quiet) forward.emplace_back(p, rank(m.child));
      });
      for_each_quiet_predecessor(b, [&](const Board& parent) {
        ASSERT_EQ(parent.stones(), n);
        backward.emplace_back(rank(parent), p);
      });
    } while (next(b));
    std::sort(forward.begin(), forward.end());
    std::sort(backward.begin(), backward.end());
    const auto [f, g] =
        std::mismatch(forward.begin(), forward.end(), backward.begin(), backward.end());
    ASSERT_TRUE(f == forward.end() && g == backward.end())
        << "n=" << n << ": first difference at "
        << (f == forward.end() ? "the end"
                               : std::to_string(f->first) + "->" + std::to_string(f->second))
        << " of the moves, "
        << (g == backward.end() ? "the end"
                                : std::to_string(g->first) + "->" + std::to_string(g->second))
        << " of the unmoves";
  }
}

TEST(AwariUnmoves, HandCheckedPredecessors) {
  // q = child of 12 stones sown from pit 0 (see TwelveStonesSkipTheOrigin); its predecessors
  // include that parent.
  const Board parent = B({12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Board q = make_move(parent, 0).child;
  std::vector<Board> preds;
  for_each_quiet_predecessor(q, [&](const Board& p) { preds.push_back(p); });
  EXPECT_NE(std::find(preds.begin(), preds.end(), parent), preds.end());
  // A q whose mover has no stones has no predecessor: every move must feed.
  int count = 0;
  for_each_quiet_predecessor(B({0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0}),
                             [&](const Board&) { ++count; });
  EXPECT_EQ(count, 0);
  // A q that can only have arisen by a capture-free sowing of 1 stone from pit 5.
  preds.clear();
  for_each_quiet_predecessor(B({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
                             [&](const Board& p) { preds.push_back(p); });
  ASSERT_EQ(preds.size(), 1u);
  EXPECT_EQ(preds[0], B({0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(AwariParse, AcceptsCommasAndSpaces) {
  auto a = parse_board("1,1,1,1,1,2,4,2,3,0,0,0");
  auto b = parse_board("1 1 1 1 1 2 4 2 3 0 0 0");
  auto c = parse_board(" 1, 1,1 ,1,1,2,4,2,3,0,0,0 ");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, *c);
  EXPECT_EQ(a->stones(), 16);
  EXPECT_EQ(format_board(*a), "1,1,1,1,1,2,4,2,3,0,0,0");
}

void expect_error(std::string_view text, std::string_view fragment) {
  auto r = parse_board(text);
  ASSERT_FALSE(r) << text;
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  EXPECT_NE(r.error().message().find(fragment), std::string::npos)
      << "message: " << r.error().message();
}

TEST(AwariParse, RejectsBadInputWithClearMessages) {
  expect_error("1,1,1,1,1,1,1,1,1,1,1", "11 pits given, 12 needed");
  expect_error("1,1,1,1,1,1,1,1,1,1,1,1,1", "more than 12 pits");
  expect_error("1,1,1,1,1,-1,1,1,1,1,1,1", "pit 5 is negative");
  expect_error("1,1,1,x,1,1,1,1,1,1,1,1", "pit 3 is not a number");
  expect_error("1,1,1,1.5,1,1,1,1,1,1,1,1", "pit 3 is not a number");
  expect_error("10,10,10,10,10,0,0,0,0,0,0,0", "50 stones in total");
  expect_error("49,0,0,0,0,0,0,0,0,0,0,0", "holds 49 stones");
  expect_error("99999999999999999999,0,0,0,0,0,0,0,0,0,0,0", "too many stones");
  expect_error("1,,1,1,1,1,1,1,1,1,1,1", "empty pit field");
  expect_error("1,1,1,1,1,1,1,1,1,1,1,1,", "trailing comma");
  expect_error("", "0 pits given");
}

}  // namespace
}  // namespace retra::awari
