// Chess rules: perft of published positions (en passant, promotions, pins and checks), perft of
// hundreds of random endgame positions against Debian's stockfish (`go perft`, a second move
// generator that is never part of the product), FEN errors and UCI names.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "src/games/chess/board.hpp"
#include "src/games/chess/material.hpp"
#include "src/games/chess/tables.hpp"
#include "src/io/file.hpp"
#include "test_util.hpp"

extern char** environ;

namespace retra::chess {
namespace {

Board fen(const char* f) {
  auto b = parse_fen(f);
  EXPECT_TRUE(b) << (b ? "" : b.error().message());
  return b ? *b : Board{};
}

// A slider's attacks walked square by square, the plainest way there is: what the magic tables
// (board.hpp) and the ray walks must both equal.
Bitboard walked_attacks(int sq, Bitboard occ, bool rook) {
  static constexpr int kRook[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  static constexpr int kBishop[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
  Bitboard a = 0;
  for (const auto& d : rook ? kRook : kBishop)
    for (int f = file_of(sq) + d[0], r = rank_of(sq) + d[1]; f >= 0 && f < 8 && r >= 0 && r < 8;
         f += d[0], r += d[1]) {
      a |= bit(square(f, r));
      if (occ & bit(square(f, r))) break;
    }
  return a;
}

// Every square, every occupancy of the squares that can block it (with random pieces elsewhere
// and on the square itself, which the lookups must ignore), both sliders and the queen.
TEST(ChessRules, MagicAttacksEqualWalkedRays) {
  std::mt19937_64 rng(20261128);
  std::uint64_t checked = 0;
  for (int sq = 0; sq < 64; ++sq)
    for (const bool rook : {true, false}) {
      const Bitboard mask = rook ? detail::kMagics.rook[static_cast<std::size_t>(sq)].mask
                                 : detail::kMagics.bishop[static_cast<std::size_t>(sq)].mask;
      ASSERT_EQ(mask & bit(sq), 0u);
      Bitboard sub = 0;
      do {
        const Bitboard occ = sub | (rng() & rng() & ~mask);
        const Bitboard want = walked_attacks(sq, occ, rook);
        ASSERT_EQ(rook ? rook_attacks(sq, occ) : bishop_attacks(sq, occ), want)
            << (rook ? "rook" : "bishop") << " on " << square_name(sq) << ", occupancy " << occ;
        ASSERT_EQ(rook ? detail::rook_rays(sq, occ) : detail::bishop_rays(sq, occ), want);
        ASSERT_EQ(attacks(rook ? chess::rook : chess::bishop, sq, occ), want);
        ++checked;
        sub = (sub - mask) & mask;
      } while (sub);
    }
  EXPECT_EQ(checked, 102400u + 5248u);  // the slots the tables hold
  for (int i = 0; i < 100000; ++i) {
    const int sq = static_cast<int>(rng() % 64);
    const Bitboard occ = rng() & rng();
    ASSERT_EQ(attacks(queen, sq, occ),
              walked_attacks(sq, occ, true) | walked_attacks(sq, occ, false));
  }
}

// Published perft counts (chessprogramming.org "Perft Results", positions without castling).
TEST(ChessRules, PublishedPerftCounts) {
  // Position 3: en passant, discovered checks, a pinned pawn.
  const Board p3 = fen("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1");
  const std::uint64_t p3_counts[] = {14, 191, 2812, 43238, 674624};
  for (int d = 1; d <= 5; ++d) EXPECT_EQ(perft(p3, d), p3_counts[d - 1]) << "depth " << d;
  // Promotions, under-promotions and captures that promote, both sides.
  const Board promo = fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1");
  const std::uint64_t promo_counts[] = {24, 496, 9483, 182838};
  for (int d = 1; d <= 4; ++d) EXPECT_EQ(perft(promo, d), promo_counts[d - 1]) << "depth " << d;
}

TEST(ChessRules, MateStalemateAndEnPassant) {
  EXPECT_EQ(legal_move_count(fen("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")), 0);  // mate
  EXPECT_TRUE(in_check(fen("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), black));
  EXPECT_EQ(legal_move_count(fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")), 0);  // stalemate
  EXPECT_FALSE(in_check(fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), black));
  // A legal en-passant capture is kept; one that would expose the king is not, and then the
  // square is dropped as if there were none.
  const Board ep = fen("8/8/8/3pP3/8/8/8/4K2k w - d6 0 1");
  EXPECT_EQ(ep.ep, square(3, 5));
  bool found = false;
  for_each_legal_move(ep, [&](const Move& m) { found = found || m.en_passant; });
  EXPECT_TRUE(found);
  const Board pinned = fen("8/8/8/k2pP2R/8/8/8/4K3 w - d6 0 1");  // exd6 would expose no king
  EXPECT_EQ(pinned.ep, square(3, 5));
  const Board exposes = fen("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1");  // exd6 uncovers the rook
  EXPECT_EQ(exposes.ep, -1);
  EXPECT_EQ(fen("8/8/8/3p4/8/8/8/4K2k w - d6 0 1").ep, -1) << "no pawn can capture";
  EXPECT_EQ(to_fen(fen("8/8/8/3pP3/8/8/8/4K2k w - d6 3 40")), "8/8/8/3pP3/8/8/8/4K2k w - d6 3 40");
}

TEST(ChessRules, FenErrorsSayWhatIsWrong) {
  auto err = [](const char* f) {
    auto b = parse_fen(f);
    return b ? std::string("(accepted)") : b.error().message();
  };
  EXPECT_NE(err("4k3/8/8/8/8/8/8/4K2R w K - 0 1").find("castling"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/4K3 w - e9 0 1").find("not a square"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/3pP3/8/8/8/4K3 w - d3 0 1").find("wrong rank"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/P3K3 w - - 0 1").find("rank 1 or 8"), std::string::npos);
  EXPECT_NE(err("4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1").find("not to move (black) is in check"),
            std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/8 w - - 0 1").find("white has 0 kings"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/4KK2 w - - 0 1").find("white has 2 kings"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/4K3 x - - 0 1").find("side to move 'x'"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/4K3 w - - 0 1").find("8 complete ranks"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/4K2X w - - 0 1").find("unknown piece letter 'X'"),
            std::string::npos);
  EXPECT_NE(err("QQQQk3/QQQQ4/QQ6/8/8/8/8/4K3 b - - 0 1").find("promotions"), std::string::npos);
  EXPECT_NE(err("4k3/8/8/8/8/8/8/4K3 w - - x 1").find("half-move clock"), std::string::npos);
}

TEST(ChessRules, UciNames) {
  const Board b = fen("8/4P3/8/8/8/8/8/k3K3 w - - 0 1");
  std::vector<std::string> names;
  for_each_legal_move(b, [&](const Move& m) { names.push_back(uci(m)); });
  for (const char* want : {"e7e8q", "e7e8r", "e7e8b", "e7e8n", "e1d1"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

TEST(ChessMaterial, NamesProfilesAndLayouts) {
  auto m = parse_material("KRvKQ");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->canonical());
  EXPECT_EQ(m->canonicalized().name(), "KQvKR");
  EXPECT_EQ(parse_material("kpnbvkr")->name(), "KBNPvKR");
  EXPECT_EQ(parse_material("KRPvKR")->pieces(), 5);
  EXPECT_FALSE(parse_material("KQK"));
  EXPECT_FALSE(parse_material("QKvK"));
  EXPECT_FALSE(parse_material("KQKvK"));
  EXPECT_FALSE(parse_material("KXvK"));
  EXPECT_FALSE(parse_material("KQQQQQQvK"));
  EXPECT_EQ(profiles(*parse_material("KPvK")).size(), 6u);
  EXPECT_EQ(profiles(*parse_material("KPPvK")).size(), 21u);
  EXPECT_EQ(profiles(*parse_material("KPvKP")).size(), 36u);
  EXPECT_EQ(materials_with(3).size(), 5u);   // KQ KR KB KN KP vs K
  EXPECT_EQ(materials_with(4).size(), 30u);  // Syzygy's 4-piece tables, KvK-less
  auto key = parse_table_key("KPPvKP_w24_b7");
  ASSERT_TRUE(key) << key.error().message();
  EXPECT_EQ(key->name(), "KPPvKP_w24_b7");
  EXPECT_FALSE(parse_table_key("KPPvKP_w42_b7"));
  EXPECT_FALSE(parse_table_key("KPvKQ"));
  const auto slots = layout(*key);
  ASSERT_EQ(slots.size(), 5u);
  EXPECT_EQ(slots[1].rank, 1);
  EXPECT_EQ(slots[2].rank, 3);
  EXPECT_EQ(slots[4].color, black);
}

// ---- against stockfish ---------------------------------------------------------------------

// Runs `stockfish`, feeding it `input`, and returns its output.
std::string run_stockfish(const std::string& input) {
  test::TempDir dir;
  const std::string in = (dir / "in").string(), out = (dir / "out").string();
  std::ofstream(in) << input;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  // Debian installs it in /usr/games, which is not always on PATH.
  std::string program =
      std::filesystem::exists("/usr/games/stockfish") ? "/usr/games/stockfish" : "stockfish";
  char* argv[] = {program.data(), nullptr};
  pid_t pid;
  if (posix_spawnp(&pid, program.c_str(), &fa, nullptr, argv, environ) != 0) return {};
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  waitpid(pid, &status, 0);
  auto text = io::read_file(out);
  return text ? *text : std::string();
}

// Random legal endgame positions of 3..7 pieces, pawns included, and positions right after a
// double pawn push (en-passant squares), promotions within reach.
std::vector<Board> random_positions(int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Board> out;
  const PieceType extra[] = {queen, rook, bishop, knight, pawn, pawn};
  while (static_cast<int>(out.size()) < count) {
    Board b;
    b.side = rng() % 2 ? white : black;
    const int pieces = 1 + static_cast<int>(rng() % 5);
    int s;
    // One position in four gets a pawn on its start rank beside which an enemy pawn waits, so
    // that the double push gives an en-passant right.
    if (rng() % 4 == 0) {
      const int f = 1 + static_cast<int>(rng() % 6);
      const Color c = b.side;
      b.piece[square(f, c == white ? 1 : 6)] = code(pawn, c);
      b.piece[square(f + (rng() % 2 ? 1 : -1), c == white ? 3 : 4)] = code(pawn, opposite(c));
    }
    do s = static_cast<int>(rng() % 64);
    while (b.piece[s]);
    b.piece[s] = code(king, white);
    do s = static_cast<int>(rng() % 64);
    while (b.piece[s]);
    b.piece[s] = code(king, black);
    for (int k = 0; k < pieces; ++k) {
      const PieceType t = extra[rng() % 6];
      const Color c = rng() % 2 ? white : black;
      do s = static_cast<int>(rng() % 64);
      while (b.piece[s] || (t == pawn && (rank_of(s) == 0 || rank_of(s) == 7)));
      b.piece[s] = code(t, c);
    }
    if (board_error(b)) continue;
    out.push_back(b);
    // A double push from here, when there is one, gives a position with an en-passant right.
    for_each_legal_move(b, [&](const Move& m) {
      const Board c = play(b, m);
      if (c.ep >= 0 && out.size() < static_cast<std::size_t>(count)) {
        auto reparsed = parse_fen(to_fen(c));
        if (reparsed && reparsed->ep >= 0) out.push_back(*reparsed);
      }
    });
  }
  return out;
}

TEST(ChessRules, PerftEqualsStockfishOnRandomEndgames) {
  const auto positions = random_positions(400, 7);
  std::string input = "uci\n";
  for (const Board& b : positions) input += "position fen " + to_fen(b) + "\ngo perft 3\n";
  input += "quit\n";
  const std::string output = run_stockfish(input);
  ASSERT_FALSE(output.empty())
      << "stockfish (Debian package 'stockfish', installed by scripts/setup.sh) did not run";
  std::vector<std::uint64_t> counts;
  std::istringstream is(output);
  for (std::string line; std::getline(is, line);)
    if (line.rfind("Nodes searched: ", 0) == 0) counts.push_back(std::stoull(line.substr(16)));
  ASSERT_EQ(counts.size(), positions.size());
  int with_ep = 0, with_promotion = 0;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    EXPECT_EQ(perft(positions[i], 3), counts[i]) << to_fen(positions[i]);
    with_ep += positions[i].ep >= 0;
    bool promotes = false;
    for_each_legal_move(positions[i],
                        [&](const Move& m) { promotes = promotes || m.promotion != kNoPromotion; });
    with_promotion += promotes;
  }
  EXPECT_GE(with_ep, 20) << "positions with an en-passant capture";
  EXPECT_GE(with_promotion, 20) << "positions with a promotion";
}

// The probe's generator of zeroing moves on bitboards (tables.hpp, used where don't-care entries
// make a probe search) against the board generator: the same legal captures, pawn moves and
// promotions, the same positions after them, and every en-passant right the child really has
// announced; asked for the captures alone, the board's captures (promotions that capture
// included) and nothing else.
TEST(ChessRules, ZeroingMovesOnBitboardsEqualTheBoardGenerator) {
  int compared = 0, promotions = 0, announced = 0, captures = 0, capture_promotions = 0;
  for (Board b : random_positions(3000, 29)) {
    b = normalized(b);
    if (b.ep >= 0) continue;  // the probe's search never meets a stored position with the right
    b.halfmove = 0;
    Tables::PieceSets sets{};
    for (int s = 0; s < 64; ++s)
      if (b.piece[s]) sets[b.piece[s]] |= bit(s);
    std::vector<std::string> want, got;
    for_each_legal_move(b, [&](const Move& m) {
      if (!m.capture && type_of(b.piece[m.from]) != pawn) return;
      Board c = play(b, m);
      const bool right = normalized(c).ep >= 0;
      c.ep = -1;
      c.fullmove = 1;
      want.push_back(uci(m) + " " + to_fen(c) + (right ? " ep" : ""));
      promotions += m.promotion != kNoPromotion;
    });
    detail::for_each_zeroing_move(
        sets, b.side, false, [&](const detail::ZeroingMove& m, const Tables::PieceSets& child) {
          const Board c = detail::board_of(child, opposite(b.side), -1);
          Move mv{m.from, m.to, m.placed == m.moved ? kNoPromotion : m.placed, false, false};
          // Announced (a pawn beside), then kept only where the capture is legal.
          const bool right = m.ep >= 0 && normalized(detail::board_of(child, c.side, m.ep)).ep >= 0;
          announced += m.ep >= 0;
          got.push_back(uci(mv) + " " + to_fen(c) + (right ? " ep" : ""));
        });
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << to_fen(b);
    compared += !want.empty();

    std::vector<std::string> want_captures, got_captures;
    for_each_legal_move(b, [&](const Move& m) {
      if (!m.capture) return;
      Board c = play(b, m);
      c.fullmove = 1;
      want_captures.push_back(uci(m) + " " + to_fen(c));
      capture_promotions += m.promotion != kNoPromotion;
    });
    detail::for_each_zeroing_move(
        sets, b.side, true, [&](const detail::ZeroingMove& m, const Tables::PieceSets& child) {
          Move mv{m.from, m.to, m.placed == m.moved ? kNoPromotion : m.placed, false, false};
          EXPECT_LT(m.ep, 0) << "a capture gives no en-passant right";
          got_captures.push_back(uci(mv) + " " +
                                 to_fen(detail::board_of(child, opposite(b.side), -1)));
        });
    std::sort(want_captures.begin(), want_captures.end());
    std::sort(got_captures.begin(), got_captures.end());
    EXPECT_EQ(got_captures, want_captures) << to_fen(b);
    captures += static_cast<int>(want_captures.size());
  }
  EXPECT_GE(compared, 1000);
  EXPECT_GE(promotions, 100);
  EXPECT_GE(announced, 50);
  EXPECT_GE(captures, 1000);
  EXPECT_GE(capture_promotions, 20);
}

}  // namespace
}  // namespace retra::chess
