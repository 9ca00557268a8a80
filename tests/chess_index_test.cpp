// The chess index: a bijection between canonical placements and indices (exhaustively on small
// segments, by property on large ones), every symmetric image of a placement ranks alike, sizes
// never above Syzygy's scheme, and the unmove contract of the backward kernel: over all children
// of a segment, every parent is reported exactly as often as it has non-converting legal moves.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <random>

#include "src/games/chess/game.hpp"

namespace retra::chess {
namespace {

std::shared_ptr<const Game> game_of(const std::string& name) {
  auto m = parse_material(name);
  EXPECT_TRUE(m) << name;
  auto g = Game::closure({*m}, false);
  EXPECT_TRUE(g) << (g ? "" : g.error().message());
  return *g;
}

// Every valid index unranks to a placement that ranks back to it; every image of that placement
// under the symmetries the segment uses ranks to it as well.
void expect_bijection(const Game& g, int s, std::uint64_t step) {
  const Indexer& ix = *g.table(s).indexer;
  const bool pawns = g.table(s).key.material.has_pawns();
  const int n = g.table(s).n;
  std::uint64_t valid = 0;
  for (std::uint64_t i = 0; i < ix.size(); i += step) {
    std::array<std::uint8_t, kMaxPieces> sq{};
    if (!ix.unrank(i, sq.data())) continue;
    ++valid;
    ASSERT_EQ(ix.rank(sq.data()), i) << g.table(s).name << " index " << i;
    for (int t = 0; t < (pawns ? 2 : 8); ++t) {
      std::array<std::uint8_t, kMaxPieces> img{};
      for (int k = 0; k < n; ++k) img[k] = static_cast<std::uint8_t>(transform(t, sq[k]));
      ASSERT_EQ(ix.rank(img.data()), i) << g.table(s).name << " index " << i << " transform " << t;
      // Identical pieces in the other order: the same position, the same index.
      const auto& slots = ix.slots();
      for (int a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && slots[b].type == slots[a].type &&
                        slots[b].color == slots[a].color && slots[b].rank == slots[a].rank;
             ++b) {
        }
        for (int x = a, y = b - 1; x < y; ++x, --y) {
          const std::uint8_t tmp = img[static_cast<std::size_t>(x)];
          img[static_cast<std::size_t>(x)] = img[static_cast<std::size_t>(y)];
          img[static_cast<std::size_t>(y)] = tmp;
        }
      }
      ASSERT_EQ(ix.rank(img.data()), i) << g.table(s).name << " index " << i << " transform " << t
                                        << ", identical pieces reversed";
    }
  }
  EXPECT_GT(valid, ix.size() / step / 2) << "most indices are placements";
}

TEST(ChessIndex, BijectionOnSmallSegments) {
  // Every index of the 3-piece tables, about 100 000 of each 4-piece segment.
  for (const char* name : {"KQvK", "KBBvK", "KRvKN", "KQvKQ", "KPvK", "KPPvK", "KPvKP"}) {
    const auto g = game_of(name);
    for (int s = 0; s < g->tables(); ++s)
      expect_bijection(*g, s,
                       std::max<std::uint64_t>(1, g->table(s).indexer->size() / 100'000 | 1));
  }
}

TEST(ChessIndex, BijectionOnLargerSegmentsSampled) {
  for (const char* name : {"KQRvKR", "KRPvKR", "KBNvKN", "KPPvKP"}) {
    const auto g = game_of(name);
    for (int s = 0; s < g->tables(); ++s)
      expect_bijection(*g, s, std::max<std::uint64_t>(1, g->table(s).indexer->size() / 3000));
  }
}

// step(i) after the placement of i - 1 is what unrank(i) gives: the kernels' initialization walks
// every segment so. Pawns-and-kings segments (no group after the kings) move the black king;
// the others re-place their last group. Every index of a window at the start and at a random
// place of each segment, so that kings and groups wrap around.
TEST(ChessIndex, StepEqualsUnrank) {
  std::mt19937_64 rng(7);
  for (const char* name : {"KQvK", "KPvKP", "KPPvK", "KPPvKP", "KPPPvK", "KRPvKR", "KBBvK"}) {
    const auto g = game_of(name);
    for (int s = 0; s < g->tables(); ++s) {
      const Indexer& ix = *g->table(s).indexer;
      const std::uint64_t window = std::min<std::uint64_t>(ix.size(), 20'000);
      for (const std::uint64_t lo : {std::uint64_t{0}, rng() % (ix.size() - window + 1)}) {
        std::array<std::uint8_t, kMaxPieces> walked{}, fresh{};
        ix.unrank(lo, walked.data());
        for (std::uint64_t i = lo + 1; i < lo + window; ++i) {
          const bool ok = ix.step(i, walked.data());
          ASSERT_EQ(ok, ix.unrank(i, fresh.data())) << g->table(s).name << " index " << i;
          ASSERT_EQ(walked, fresh) << g->table(s).name << " index " << i;
        }
      }
    }
  }
}

// Random placements of random tables: rank, unrank the rank, and the result is an image of the
// placement under one of the segment's symmetries.
RC_GTEST_PROP(ChessIndex, RankUnrankGivesAnImage, ()) {
  static const auto g = game_of("KRPvKQ");  // pulls in many tables, pawnless ones too
  const int s = *rc::gen::inRange(0, g->tables());
  const Table& t = g->table(s);
  std::array<std::uint8_t, kMaxPieces> sq{};
  Bitboard occ = 0;
  for (int i = 0; i < t.n; ++i) {
    // Generated once, then moved on to the next free square (a retry would loop while shrinking).
    const bool p = t.slots[i].type == pawn;
    int x = p ? square(*rc::gen::inRange(0, 8), t.slots[i].rank) : *rc::gen::inRange(0, 64);
    while (occ & bit(x)) x = p ? square((file_of(x) + 1) % 8, rank_of(x)) : (x + 1) % 64;
    occ |= bit(x);
    sq[i] = static_cast<std::uint8_t>(x);
  }
  RC_PRE(!(king_attacks(sq[0]) & bit(sq[t.bk_slot])));
  const std::uint64_t r = t.indexer->rank(sq.data());
  RC_ASSERT(r < t.indexer->size());
  std::array<std::uint8_t, kMaxPieces> back{};
  RC_ASSERT(t.indexer->unrank(r, back.data()));
  // The placement's image under some symmetry equals `back` as a set of pieces per slot group.
  bool found = false;
  for (int tr = 0; tr < (t.key.material.has_pawns() ? 2 : 8) && !found; ++tr) {
    std::map<std::pair<int, int>, std::multiset<int>> a, b;
    for (int i = 0; i < t.n; ++i) {
      a[{t.codes[i], t.slots[i].rank}].insert(transform(tr, sq[i]));
      b[{t.codes[i], t.slots[i].rank}].insert(back[i]);
    }
    found = a == b;
  }
  RC_ASSERT(found);
}

TEST(ChessIndex, NeverLargerThanSyzygysScheme) {
  for (int pieces = 3; pieces <= 5; ++pieces)
    for (const Material& m : materials_with(pieces)) {
      std::uint64_t ours = 0, syzygy = 0;
      for (const PawnProfile& p : profiles(m)) {
        const Indexer ix(TableKey{m, p});
        ours += ix.size();
        syzygy = ix.syzygy_size();
      }
      EXPECT_LE(ours, syzygy) << m.name();
    }
}

// Over every child q of a segment, the parents its unmoves report, counted per parent index,
// equal each parent's non-converting legal moves. All segments of the closure, or only the
// named table's.
void expect_unmove_contract(const std::string& name, bool closure = true) {
  const auto g = game_of(name);
  const Material named = parse_material(name)->canonicalized();
  for (int s = 0; s < g->tables(); ++s) {
    if (!closure && !(g->table(s).key.material == named)) continue;
    const std::uint64_t size = g->segment_size(s);
    std::vector<int> reported(size, 0), quiet(size, 0);
    std::uint64_t valid = 0, moves = 0;
    for (std::uint64_t i = 0; i < size; ++i) {
      const Position p = g->unrank(s, i);
      if (!p.valid) continue;
      ++valid;
      quiet[i] = g->for_each_conversion(s, p, [](const Child<int>&) {}).quiet;
      moves += static_cast<std::uint64_t>(quiet[i]);
      g->for_each_unmove(s, p, [&](std::uint64_t parent, const Position&) { ++reported[parent]; });
    }
    for (std::uint64_t i = 0; i < size; ++i)
      ASSERT_EQ(reported[i], quiet[i]) << g->table(s).name << " parent index " << i;
    EXPECT_GT(valid, size / 2) << g->table(s).name << ": positions checked";
    EXPECT_GT(moves, valid) << g->table(s).name << ": quiet moves checked";
  }
}

TEST(ChessUnmoves, EveryParentIsReportedOncePerMove) {
  // Every 3-piece table (pawnless ones have positions on the long diagonals, whose symmetry the
  // unmoves must count right); tests/chess_reference_test.cpp checks every 3- and 4-piece table
  // through the values the kernel computes from these unmoves.
  for (const char* name : {"KQvK", "KRvK", "KBvK", "KNvK", "KPvK"}) expect_unmove_contract(name);
}

TEST(ChessUnmoves, IdenticalPiecesAndFourPieceTables) {
  for (const char* name : {"KBBvK", "KNNvK", "KRvKB"}) expect_unmove_contract(name);
}

TEST(ChessUnmoves, KingsReRankedIncrementally) {
  // King unmoves that keep the orientation re-rank incrementally (Indexer::king_relocation):
  // pawns of one rank that are their own mirror image (a2 h2) leave the orientation to the
  // white king's file; the kings' coordinates skip the pawns' squares.
  expect_unmove_contract("KPPvK", false);
}

// The kernels' move generation (legality from checks and pins found once per position) against
// the board's (every pseudo-legal move played and tested; perft-checked against stockfish), on
// positions with pins, checks, double checks and promotions.
TEST(ChessGame, MoveCountsEqualTheBoardsLegalMoves) {
  std::mt19937_64 rng(11);
  for (const char* name : {"KQvKR", "KRBvKQ", "KBBvKR", "KRPvKR", "KPPvKP", "KQPvKN", "KNNvKB"}) {
    const auto g = game_of(name);
    for (int s = 0; s < g->tables(); ++s) {
      const std::uint64_t size = g->segment_size(s);
      int checked = 0;
      for (int k = 0; k < 2000; ++k) {
        const Position p = g->unrank(s, rng() % size);
        if (!p.valid) continue;
        ++checked;
        int quiet = 0;
        const int legal =
            g->for_each_move(s, p, [&](const Child<int>& c) { quiet += !c.converts; });
        const Board b = g->board(s, p);
        ASSERT_EQ(legal, legal_move_count(b)) << to_fen(b);
        ASSERT_EQ(g->for_each_conversion(s, p, [](const Child<int>&) {}).quiet, quiet) << to_fen(b);
      }
      EXPECT_GT(checked, 500) << g->table(s).name;
    }
  }
}

// Every quiet child of for_each_move (ranked incrementally where the move keeps the
// orientation) against the board's quiet moves played and ranked from scratch, as sorted lists
// of indices: for each position and for each of its symmetric images (which are no
// representatives, so their children take the whole rank). `stride` 1 takes every position.
void expect_quiet_children_ranked(const std::string& name, std::uint64_t stride) {
  const auto g = game_of(name);
  const Material named = parse_material(name)->canonicalized();
  for (int s = 0; s < g->tables(); ++s) {
    if (!(g->table(s).key.material == named)) continue;
    const Table& t = g->table(s);
    const bool pawns = t.key.material.has_pawns();
    std::uint64_t checked = 0, representatives = 0;
    for (std::uint64_t i = 0; i < g->segment_size(s); i += stride) {
      const Position p = g->unrank(s, i);
      if (!p.valid) continue;
      for (int tr = 0; tr < (pawns ? 2 : 8); ++tr) {
        Position q = p;
        for (int k = 0; k < t.n; ++k)
          q.sq[static_cast<std::size_t>(k)] =
              static_cast<std::uint8_t>(transform(tr, p.sq[k]));  // 1: kMirror
        std::vector<std::uint64_t> ours, theirs;
        g->for_each_move(s, q, [&](const Child<int>& c) {
          if (!c.converts) ours.push_back(c.index);
        });
        const Board b = g->board(s, q);
        for_each_legal_move(b, [&](const Move& m) {
          if (m.capture || b.piece[m.from] == code(pawn, b.side)) return;
          auto child = g->from_board(s, play(b, m));
          ASSERT_TRUE(child) << to_fen(b) << " " << uci(m);
          theirs.push_back(g->rank(s, *child));
        });
        std::sort(ours.begin(), ours.end());
        std::sort(theirs.begin(), theirs.end());
        ASSERT_EQ(ours, theirs) << t.name << ": " << to_fen(b);
        ++checked;
        representatives += tr == 0;
      }
    }
    EXPECT_GT(representatives, g->segment_size(s) / stride / 4) << t.name;
    EXPECT_GT(checked, representatives) << t.name;
  }
}

TEST(ChessGame, QuietChildrenRankAsThePlayedMovesDo) {
  // Every position of two 3-piece tables (both kings on the a1-h8 diagonal, where the piece
  // decides the orientation, among them); every 5th of KPPvK, whose pawns of one rank may be
  // their own mirror image (a2 h2: the white king's file decides, and its moves across the
  // middle take the whole rank); identical pieces; pins and checks.
  for (const char* name : {"KQvK", "KRvK"}) expect_quiet_children_ranked(name, 1);
  expect_quiet_children_ranked("KPPvK", 5);
  for (const char* name : {"KNvK", "KBBvK", "KRPvKR", "KQvKR", "KNNvKB"})
    expect_quiet_children_ranked(name, 997);
}

TEST(ChessGame, ClosureHasEveryConversion) {
  const auto g = game_of("KRPvKR");
  std::set<std::string> names;
  for (int s = 0; s < g->tables(); ++s) names.insert(g->table(s).name);
  for (const char* want : {"KRPvKR_w2", "KRPvKR_w7", "KRvKR", "KQRvKR", "KRRvKR", "KRBvKR",
                           "KRNvKR", "KRPvK_w5", "KRvKP_b6", "KRvK", "KQvKR", "KPvK_w7"})
    EXPECT_TRUE(names.count(want)) << want;
  // Dependencies come first.
  for (int s = 0; s < g->tables(); ++s)
    for (int d : g->dependencies(s)) EXPECT_LT(d, s) << g->table(s).name;
}

}  // namespace
}  // namespace retra::chess
