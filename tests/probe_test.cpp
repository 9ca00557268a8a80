// The probing library: the C++ API against values read directly from the segments (every
// position of the small Awari segments), batches, concurrent probes, the LRU cache, xiangqi
// FENs, corrupted blocks, and C ABI misuse (null, closed and wrong-game handles).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "retra/probe.hpp"
#include "retra/retra.h"
#include "src/database.hpp"
#include "src/games/awari/module.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/game.hpp"
#include "src/games/chess/solver.hpp"
#include "src/games/xiangqi/module.hpp"
#include "src/io/file.hpp"
#include "src/probe/prober_impl.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

using probe::Prober;
using probe::Status;

class Probe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    BuildRequest a = test::build_request("awari", awari::stone_range(0, 9), dir_->path() / "awari");
    a.block_entries = 1024;  // many blocks, so that the cache is exercised
    ASSERT_TRUE(build(a));
    ASSERT_TRUE(build(test::build_request("xiangqi", {"KRK", "KRKG"}, dir_->path() / "xiangqi")));
    OptionValues three;
    three["--pieces"] = {"3"};
    auto targets = find_module("chess")->targets(three);  // WDL, DTZ and DTM of each table
    ASSERT_TRUE(targets) << targets.error().message();
    ASSERT_TRUE(build(test::build_request("chess", *targets, dir_->path() / "chess")));
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string awari_db() { return (dir_->path() / "awari").string(); }
  static std::string xiangqi_db() { return (dir_->path() / "xiangqi").string(); }
  static std::string chess_db() { return (dir_->path() / "chess").string(); }
  static std::array<int, 12> pits_of(const awari::Board& b) {
    std::array<int, 12> p;
    for (int i = 0; i < 12; ++i) p[i] = b.pit[i];
    return p;
  }
  static test::TempDir* dir_;
};
test::TempDir* Probe::dir_ = nullptr;

TEST_F(Probe, EveryAwariPositionEqualsTheSegment) {
  probe::Value err;
  auto p = Prober::open(awari_db(), {.cache_bytes = 1 << 16}, &err);  // smaller than the data
  ASSERT_TRUE(p) << err.message;
  EXPECT_EQ(p->game(), "awari");
  auto db = Database::open(awari_db());
  ASSERT_TRUE(db);
  for (int n = 0; n <= 9; ++n) {
    const auto values = test::read_segment(**db, std::to_string(n));
    for (std::uint64_t i = 0; i < values.size(); ++i) {
      const auto v = p->awari(pits_of(awari::unrank(n, i)));
      ASSERT_TRUE(v) << v.message;
      ASSERT_EQ(v.value, values[i]) << n << " stones, index " << i;
    }
  }
  const auto c = p->cache_stats();
  EXPECT_GT(c.hits, 0u);
  EXPECT_GT(c.misses, 0u);
  EXPECT_LE(c.bytes, std::uint64_t{1} << 16);
}

TEST_F(Probe, BatchesAndThreadsAgreeWithSingleProbes) {
  probe::Value err;
  auto p = Prober::open(awari_db(), {.cache_bytes = 1 << 20}, &err);
  ASSERT_TRUE(p) << err.message;
  std::mt19937_64 rng(7);
  std::vector<std::array<int, 12>> pos;
  for (int k = 0; k < 5000; ++k) {
    const int n = static_cast<int>(rng() % 10);
    pos.push_back(pits_of(awari::unrank(n, rng() % awari::positions(n))));
  }
  pos.push_back({-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});  // malformed: reported in its slot
  pos.push_back({5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});   // 10 stones: not built
  std::vector<probe::Value> batch(pos.size());
  p->awari_batch(pos, batch);
  for (std::size_t i = 0; i + 2 < pos.size(); ++i) {
    ASSERT_TRUE(batch[i]) << batch[i].message;
    ASSERT_EQ(batch[i].value, p->awari(pos[i]).value) << i;
  }
  EXPECT_EQ(batch[pos.size() - 2].status, Status::invalid_argument);
  EXPECT_EQ(batch[pos.size() - 1].status, Status::not_found);
  EXPECT_NE(batch[pos.size() - 1].message.find("--stones 10"), std::string::npos);
  // Four threads probing the same handle see the same values.
  std::atomic<int> wrong{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i + 2 < pos.size(); i += 2)
        if (p->awari(pos[i]).value != batch[i].value) ++wrong;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(Probe, XiangqiFensAndWrongGames) {
  probe::Value err;
  auto p = Prober::open(xiangqi_db(), {}, &err);
  ASSERT_TRUE(p) << err.message;
  auto db = Database::open(xiangqi_db());
  ASSERT_TRUE(db);
  for (const char* fen : {"3k5/9/9/9/9/9/9/9/4R4/4K4 w", "3k5/9/9/9/9/9/9/9/4R4/4K4 b",
                          "4k4/4a4/9/9/9/9/9/9/9/R3K4 w", "4k4/4a4/9/9/9/9/9/9/9/R3K4 b"}) {
    const auto v = p->xiangqi(fen);
    ASSERT_TRUE(v) << fen << ": " << v.message;
    auto r = xiangqi::Module::probe_report(**db, fen);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(v.value, r->json["value"]) << fen;
    EXPECT_EQ(p->probe(fen).value, v.value) << "the game-blind entry point: " << fen;
    // The board path gives the same value, through the C++ API and the C ABI.
    const auto fp = xiangqi::parse_fen(fen);
    ASSERT_TRUE(fp);
    EXPECT_EQ(p->xiangqi_board(fp->board, fp->side).value, v.value) << fen;
    retra_db* c = nullptr;
    ASSERT_EQ(retra_open(xiangqi_db().c_str(), 0, &c), RETRA_OK);
    int cv = -1;
    EXPECT_EQ(retra_xiangqi_probe_board(c, fp->board.data(), fp->side, &cv), RETRA_OK);
    EXPECT_EQ(cv, v.value) << fen;
    EXPECT_EQ(retra_close(c), RETRA_OK);
  }
  xiangqi::Board board = xiangqi::parse_fen("3k5/9/9/9/9/9/9/9/4R4/4K4 w")->board;
  EXPECT_EQ(p->xiangqi_board(board, 2).status, Status::invalid_argument);
  board[0] = 8;  // no piece has code 8
  EXPECT_EQ(p->xiangqi_board(board, 0).status, Status::invalid_argument);
  board[0] = xiangqi::code(xiangqi::king, xiangqi::red);  // a second red king, off its palace
  const auto two_kings = p->xiangqi_board(board, 0);
  EXPECT_EQ(two_kings.status, Status::invalid_argument);
  EXPECT_NE(two_kings.message.find("cannot stand on a0"), std::string::npos) << two_kings.message;
  EXPECT_EQ(p->xiangqi("3k5/9/9/9/9/9/9/9/9/4K4 w").value, 0) << "armless: a draw";
  EXPECT_EQ(p->xiangqi("4k4/9/9/9/9/9/9/9/9/4K4 w").value, 1) << "kings facing";
  EXPECT_EQ(p->xiangqi("3k5/9/9/9/9/9/9/9/4N4/4K4 w").status, Status::not_found);
  EXPECT_EQ(p->xiangqi("3k5/9/9 w").status, Status::invalid_argument);
  EXPECT_EQ(p->awari({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}).status, Status::wrong_game);
  auto a = Prober::open(awari_db(), {}, &err);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->xiangqi("3k5/9/9/9/9/9/9/9/4R4/4K4 w").status, Status::wrong_game);
  EXPECT_FALSE(Prober::open((dir_->path() / "none").string(), {}, &err));
  EXPECT_EQ(err.status, Status::not_found);
}

// The game-blind entry points: positions as text, any game, batches and coverage, through the
// C++ API and the C ABI, equal to the typed ones.
TEST_F(Probe, TextPositionsOfEveryGame) {
  probe::Value err;
  auto a = Prober::open(awari_db(), {.cache_bytes = 1 << 20}, &err);
  ASSERT_TRUE(a) << err.message;
  std::mt19937_64 rng(3);
  std::vector<std::string> texts;
  std::vector<int> want;
  for (int k = 0; k < 2000; ++k) {
    const int n = static_cast<int>(rng() % 10);
    const auto b = awari::unrank(n, rng() % awari::positions(n));
    texts.push_back(awari::format_board(b));
    const auto v = a->awari(pits_of(b));
    ASSERT_TRUE(v) << v.message;
    want.push_back(v.value);
    const auto t = a->probe(texts.back());
    ASSERT_TRUE(t) << t.message;
    ASSERT_EQ(t.value, v.value) << texts.back();
  }
  texts.push_back("1,1");                      // malformed
  texts.push_back("5,5,0,0,0,0,0,0,0,0,0,0");  // 10 stones: not built
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<probe::Value> out(views.size());
  a->probe_batch(views, out);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(out[i]) << out[i].message;
    ASSERT_EQ(out[i].value, want[i]) << texts[i];
  }
  EXPECT_EQ(out[want.size()].status, Status::invalid_argument);
  EXPECT_EQ(out[want.size() + 1].status, Status::not_found);
  const auto c = a->coverage();
  EXPECT_EQ(c.units, "stones");
  EXPECT_EQ(c.largest, 9);
  EXPECT_EQ(c.complete, 9);
  EXPECT_EQ(c.segments, 10u);

  auto x = Prober::open(xiangqi_db(), {}, &err);
  ASSERT_TRUE(x) << err.message;
  const auto xc = x->coverage();
  EXPECT_EQ(xc.units, "pieces");
  EXPECT_EQ(xc.largest, 4);
  EXPECT_EQ(xc.complete, 2) << "KNK, KCK, KPK and the black-armed 3-piece endgames are missing";
  EXPECT_EQ(x->probe("3k5/9/9/9/9/9/9/9/4R4/4K4 w").value, 3);
  EXPECT_EQ(x->probe("3k5/9/9/9/9/9/9/9/9/4K4 w").value, 0) << "armless: no table";

  // The same through the C ABI.
  retra_db* db = nullptr;
  ASSERT_EQ(retra_open(awari_db().c_str(), 0, &db), RETRA_OK);
  int value = 0;
  ASSERT_EQ(retra_probe(db, texts[0].c_str(), &value), RETRA_OK);
  EXPECT_EQ(value, want[0]);
  EXPECT_EQ(retra_probe(db, "1,1", &value), RETRA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(retra_last_error()).find("12"), std::string::npos);
  EXPECT_EQ(retra_probe(db, nullptr, &value), RETRA_NULL_HANDLE);
  const char* batch[3] = {texts[1].c_str(), "9,9,9,9,9,9,0,0,0,0,0,0", texts[2].c_str()};
  int values[3], statuses[3];
  EXPECT_EQ(retra_probe_batch(db, batch, 3, values, statuses), RETRA_INVALID_ARGUMENT);
  EXPECT_EQ(statuses[0], RETRA_OK);
  EXPECT_EQ(values[0], want[1]);
  EXPECT_EQ(statuses[1], RETRA_INVALID_ARGUMENT);
  EXPECT_EQ(statuses[2], RETRA_OK);
  EXPECT_EQ(values[2], want[2]);
  int largest = -2, complete = -2;
  EXPECT_EQ(retra_coverage(db, &largest, &complete), RETRA_OK);
  EXPECT_EQ(largest, 9);
  EXPECT_EQ(complete, 9);
  EXPECT_EQ(retra_close(db), RETRA_OK);
  EXPECT_EQ(retra_coverage(db, &largest, nullptr), RETRA_CLOSED_HANDLE);
}

// Random legal chess boards of the 3-piece tables, in both colourings.
std::vector<chess::Board> random_chess_boards(int n, std::uint64_t seed) {
  using namespace chess;
  std::mt19937_64 rng(seed);
  std::vector<Board> out;
  const PieceType extra[] = {queen, rook, bishop, knight, pawn};
  while (static_cast<int>(out.size()) < n) {
    Board b;
    const int wk = static_cast<int>(rng() % 64), bk = static_cast<int>(rng() % 64);
    const int x = static_cast<int>(rng() % 64);
    if (wk == bk || x == wk || x == bk) continue;
    const PieceType t = extra[rng() % 5];
    if (t == pawn && (rank_of(x) == 0 || rank_of(x) == 7)) continue;
    b.piece[wk] = code(king, white);
    b.piece[bk] = code(king, black);
    b.piece[x] = code(t, rng() % 2 ? white : black);
    b.side = rng() % 2 ? white : black;
    if (!board_error(b)) out.push_back(b);
  }
  return out;
}

// Chess through the typed entry points: bitboards equal FEN text, WDL alone equals the full
// values, the root probe's best move keeps the position's value, concurrent probes agree, and the
// C ABI returns the same numbers.
// A distance beyond a byte (the segment's far section) is a cursed win or blessed loss: every
// WDL probe gives that class, which its byte holds (253, 254), not what the far value's low
// byte would decode to (261 & 255 = 5, a win in 2). A far value planted in KQvK: 130 plies.
TEST_F(Probe, AFarValueProbesAsItsClass) {
  test::TempDir tmp;
  const auto copy = tmp / "db";
  std::filesystem::copy(chess_db(), copy, std::filesystem::copy_options::recursive);
  std::string fen;
  chess::Board board;
  bool win = true;
  {
    auto db = Database::open(copy);
    ASSERT_TRUE(db) << db.error().message();
    auto seg = (*db)->segment("KQvK");
    ASSERT_TRUE(seg) << seg.error().message();
    auto values = test::read_segment(**db, "KQvK");
    // A decided position of the half stored in full: a win becomes a win in 130 plies, a loss a
    // loss in 130.
    std::uint64_t at = values.size();
    for (std::uint64_t i = 0; i < values.size() && at == values.size(); ++i)
      if (static_cast<std::uint8_t>(values[i]) > 2 && !(*seg)->class_only(i)) at = i;
    ASSERT_LT(at, values.size());
    win = values[at] & 1;
    values[at] = static_cast<std::int8_t>(win ? 253 : 254);
    const std::vector<format::FarValue> far{{at, win ? 2 * 130 + 1 : 2 * 130 + 2}};
    test::rewrite_segment(**db, "KQvK", values, far);
    auto g = chess::Game::closure({*chess::parse_material("KQvK")}, false);
    ASSERT_TRUE(g) << g.error().message();
    const int s = (*g)->find("KQvK");
    board = (*g)->board(s, (*g)->unrank(s, at));
    fen = chess::to_fen(board);
  }
  probe::Value err;
  auto p = Prober::open(copy.string(), {}, &err);
  ASSERT_NE(p, nullptr) << err.message;
  const int wdl = win ? chess::cursed_win : chess::blessed_loss;
  const probe::Value w = p->probe(fen);
  ASSERT_TRUE(w) << w.message;
  EXPECT_EQ(w.value, wdl) << fen;
  std::vector<probe::Value> batch(1);
  const std::string_view one[] = {fen};
  p->probe_batch(one, batch);
  EXPECT_EQ(batch[0].value, wdl) << fen;
  EXPECT_EQ(p->chess_wdl(chess::bitboards_of(board)).value, wdl) << fen;
  const probe::ChessValue v = p->chess(chess::bitboards_of(board));
  EXPECT_EQ(v.wdl, wdl) << fen;
  EXPECT_EQ(v.dtz, win ? 130 : -130) << fen;
}

TEST_F(Probe, ChessBitboardsFensRootsAndTheCAbi) {
  probe::Value err;
  auto p = Prober::open(chess_db(), {}, &err);
  ASSERT_TRUE(p) << err.message;
  const auto boards = random_chess_boards(3000, 7);
  std::vector<probe::ChessValue> want;
  int wins = 0, draws = 0;
  for (const auto& b : boards) {
    const auto bb = chess::bitboards_of(b);
    const probe::ChessValue v = p->chess(bb);
    ASSERT_TRUE(v) << chess::to_fen(b) << ": " << v.message;
    want.push_back(v);
    wins += v.wdl == 2;
    draws += v.wdl == 0;
    const probe::Value w = p->chess_wdl(bb);
    ASSERT_TRUE(w) << w.message;
    ASSERT_EQ(w.value, v.wdl) << chess::to_fen(b);
    const probe::Value t = p->probe(chess::to_fen(b));
    ASSERT_TRUE(t) << t.message;
    ASSERT_EQ(t.value, v.wdl) << chess::to_fen(b);
    ASSERT_EQ(v.has_dtm, v.wdl != 0);
    if (v.wdl != 0) {
      ASSERT_EQ(v.dtm > 0, v.wdl > 0) << chess::to_fen(b);
    }
    // The root probe: the best move's value from the mover's view is the position's.
    std::array<probe::ChessMove, 256> moves;
    probe::ChessValue pos;
    const int n = p->chess_root(bb, moves, &pos);
    ASSERT_TRUE(pos) << pos.message;
    ASSERT_EQ(pos.wdl, v.wdl);
    ASSERT_EQ(pos.dtz, v.dtz);
    if (n > 0 && v.wdl > 0) {
      EXPECT_EQ(moves[0].value.wdl, v.wdl) << chess::to_fen(b);
      EXPECT_EQ(moves[0].value.dtz, v.dtz) << chess::to_fen(b);
    }
    for (int i = 1; i < n; ++i)
      ASSERT_LE(moves[i].value.outcome, moves[0].value.outcome) << chess::to_fen(b);
  }
  EXPECT_GT(wins, 500);
  EXPECT_GT(draws, 300);

  // Four threads probing the same boards get the same values (one small cache, many evictions).
  auto small = Prober::open(chess_db(), {.cache_bytes = 1 << 16}, &err);
  ASSERT_TRUE(small) << err.message;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < 1000; i += 2) {
        const auto v = small->chess(chess::bitboards_of(boards[i]));
        if (!v || v.wdl != want[i].wdl || v.dtz != want[i].dtz || v.dtm != want[i].dtm) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);

  // Bad bitboards and tables not built are errors, not values.
  probe::ChessBoard bad = chess::bitboards_of(boards[0]);
  bad.black |= bad.white & bad.kings;  // a square in both colours
  EXPECT_EQ(p->chess_wdl(bad).status, Status::invalid_argument);
  // Illegal boards by bitboards: the side not to move in check, adjacent kings, a pawn on rank 8,
  // two white kings (each an invalid_argument that names the problem, as a FEN would).
  probe::ChessBoard check;
  check.kings = 1ull | 1ull << 56;  // Ka1, ka8
  check.rooks = 1ull << 32;         // Ra5 gives check along the a-file
  check.white = 1ull | 1ull << 32;
  check.black = 1ull << 56;
  EXPECT_EQ(p->chess_wdl(check).status, Status::invalid_argument);
  EXPECT_NE(p->chess_wdl(check).message.find("in check"), std::string::npos)
      << p->chess_wdl(check).message;
  check.white_to_move = false;  // black to move: legal, a KRvK position
  EXPECT_TRUE(p->chess_wdl(check)) << p->chess_wdl(check).message;
  probe::ChessBoard adjacent = check;
  adjacent.kings = 1ull | 1ull << 9;  // Ka1, kb2
  adjacent.black = 1ull << 9;
  EXPECT_EQ(p->chess_wdl(adjacent).status, Status::invalid_argument);
  probe::ChessBoard pawn = check;
  pawn.rooks = 0;
  pawn.pawns = 1ull << 63;  // a white pawn on h8
  pawn.white = 1ull | 1ull << 63;
  EXPECT_EQ(p->chess_wdl(pawn).status, Status::invalid_argument);
  probe::ChessBoard kings = check;
  kings.kings |= 1ull << 32;  // a second white king on a5 (and a rook there too: two types)
  kings.rooks = 0;
  EXPECT_EQ(p->chess_wdl(kings).status, Status::invalid_argument);
  probe::ChessBoard two = chess::bitboards_of(*chess::parse_fen("k7/8/8/8/8/8/8/KQ4r1 w - - 0 1"));
  EXPECT_EQ(p->chess_wdl(two).status, Status::not_found);
  EXPECT_NE(p->chess(two).message.find("KQvKR"), std::string::npos) << p->chess(two).message;

  // The C ABI.
  retra_db* db = nullptr;
  ASSERT_EQ(retra_open(chess_db().c_str(), 0, &db), RETRA_OK);
  for (std::size_t i = 0; i < 200; ++i) {
    const auto c = chess::bitboards_of(boards[i]);
    int wdl = 9, dtz = 0, dtm = 0, has_dtm = -1;
    ASSERT_EQ(retra_chess_probe_wdl(db, c.white, c.black, c.kings, c.queens, c.rooks, c.bishops,
                                    c.knights, c.pawns, c.rule50, c.ep, c.white_to_move, &wdl),
              RETRA_OK);
    EXPECT_EQ(wdl, want[i].wdl);
    ASSERT_EQ(
        retra_chess_probe(db, c.white, c.black, c.kings, c.queens, c.rooks, c.bishops, c.knights,
                          c.pawns, c.rule50, c.ep, c.white_to_move, &wdl, &dtz, &dtm, &has_dtm),
        RETRA_OK);
    EXPECT_EQ(dtz, want[i].dtz);
    EXPECT_EQ(has_dtm, want[i].has_dtm ? 1 : 0);
    if (has_dtm) {
      EXPECT_EQ(dtm, want[i].dtm);
    }
    retra_chess_move moves[256];
    std::size_t count = 0;
    ASSERT_EQ(retra_chess_probe_root(db, c.white, c.black, c.kings, c.queens, c.rooks, c.bishops,
                                     c.knights, c.pawns, c.rule50, c.ep, c.white_to_move, moves,
                                     256, &count),
              RETRA_OK);
    std::array<probe::ChessMove, 256> cpp;
    ASSERT_EQ(static_cast<int>(count), p->chess_root(c, cpp, nullptr));
    for (std::size_t k = 0; k < count; ++k) {
      EXPECT_EQ(moves[k].from, cpp[k].from);
      EXPECT_EQ(moves[k].to, cpp[k].to);
      EXPECT_EQ(moves[k].dtz, cpp[k].value.dtz);
    }
  }
  int wdl = 0;
  EXPECT_EQ(retra_chess_probe_wdl(db, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, &wdl),
            RETRA_INVALID_ARGUMENT);
  EXPECT_EQ(retra_chess_probe_wdl(db, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 1, nullptr), RETRA_NULL_HANDLE);
  EXPECT_EQ(retra_close(db), RETRA_OK);
  retra_db* awari = nullptr;
  ASSERT_EQ(retra_open(awari_db().c_str(), 0, &awari), RETRA_OK);
  EXPECT_EQ(
      retra_chess_probe_wdl(awari, 1, 1ull << 63, 1 | 1ull << 63, 0, 0, 0, 0, 0, 0, 0, 1, &wdl),
      RETRA_WRONG_GAME);
  EXPECT_EQ(retra_close(awari), RETRA_OK);
}

// A prefetch is a hint: it neither loads a block nor counts as a lookup, and the next read of
// the byte is the usual hit or miss.
TEST(BlockCache, APrefetchIsOnlyAHint) {
  probe::detail::BlockCache cache(std::size_t{1} << 20);
  int loads = 0;
  auto load = [&](std::vector<std::uint8_t>& out) {
    ++loads;
    out.assign(4096, 0);
    out[17] = 42;
    return Status::ok;
  };
  cache.prefetch(7, 17);  // not cached: nothing happens
  EXPECT_EQ(loads, 0);
  EXPECT_EQ(cache.stats().misses + cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.byte(7, 17, load).value, 42);
  EXPECT_EQ(loads, 1);
  cache.prefetch(7, 17);  // cached: still no lookup counted
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.byte(7, 17, load).value, 42);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

// Eviction is CLOCK (second chance): of the blocks in a full shard, one read again since it was
// loaded outlives the ones that were not, as under LRU.
TEST(BlockCache, ABlockReadAgainOutlivesTheOthers) {
  // Four keys of one shard; the cache holds three 4 KiB blocks per shard.
  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 1; keys.size() < 4; ++k)
    if (probe::detail::BlockCache::shard_of(k) == probe::detail::BlockCache::shard_of(0))
      keys.push_back(k);
  probe::detail::BlockCache cache(probe::detail::BlockCache::kShards * 3 * 4096);
  std::map<std::uint64_t, int> loads;
  auto read = [&](std::uint64_t key) {
    return cache
        .byte(key, 5,
              [&](std::vector<std::uint8_t>& out) {
                ++loads[key];
                out.assign(4096, static_cast<std::uint8_t>(key));
                return Status::ok;
              })
        .value;
  };
  const std::uint64_t a = keys[0], b = keys[1], c = keys[2], d = keys[3];
  for (std::uint64_t k : {a, b, c}) EXPECT_EQ(read(k), static_cast<int>(k & 255));
  EXPECT_EQ(read(a), static_cast<int>(a & 255));  // a hit: a is marked
  EXPECT_EQ(cache.stats().bytes, 3u * 4096);
  read(d);  // evicts b, the first unmarked block after a
  EXPECT_EQ(cache.stats().bytes, 3u * 4096);
  read(a);
  read(c);
  read(d);
  EXPECT_EQ(loads[a], 1);
  EXPECT_EQ(loads[c], 1);
  EXPECT_EQ(loads[d], 1);
  read(b);  // loaded again: all three were marked, so the hand clears them and takes the next
  EXPECT_EQ(loads[b], 2);
  EXPECT_EQ(cache.stats().bytes, 3u * 4096);
  EXPECT_EQ(cache.stats().misses, 5u);
  EXPECT_EQ(cache.stats().hits, 4u);
}

TEST_F(Probe, CorruptedBlockIsAnErrorNotAValue) {
  test::TempDir dir;
  std::filesystem::copy(awari_db(), dir / "db");
  const auto path = dir / "db" / "awari-7.rseg";
  test::damage_block(path, 3);
  probe::Value err;
  auto p = Prober::open((dir / "db").string(), {}, &err);
  ASSERT_TRUE(p) << err.message;
  const auto v = p->awari(pits_of(awari::unrank(7, 3 * 1024 + 5)));  // block 3
  EXPECT_EQ(v.status, Status::corrupt);
  EXPECT_NE(v.message.find("block 3"), std::string::npos) << v.message;
  EXPECT_TRUE(p->awari(pits_of(awari::unrank(7, 5))));  // block 0 is intact
}

TEST_F(Probe, CAbiMisuseReturnsErrors) {
  int value = 0;
  const int pits[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(retra_awari_probe(nullptr, pits, &value), RETRA_NULL_HANDLE);
  EXPECT_NE(std::string(retra_last_error()).find("null"), std::string::npos);
  EXPECT_EQ(retra_open(awari_db().c_str(), 0, nullptr), RETRA_NULL_HANDLE);
  retra_db* db = nullptr;
  EXPECT_EQ(retra_open((dir_->path() / "none").c_str(), 0, &db), RETRA_NOT_FOUND);
  EXPECT_EQ(db, nullptr);
  ASSERT_EQ(retra_open(awari_db().c_str(), 1 << 20, &db), RETRA_OK);
  const char* game = nullptr;
  ASSERT_EQ(retra_game(db, &game), RETRA_OK);
  EXPECT_STREQ(game, "awari");
  ASSERT_EQ(retra_awari_probe(db, pits, &value), RETRA_OK);
  EXPECT_EQ(retra_awari_probe(db, pits, nullptr), RETRA_NULL_HANDLE);
  EXPECT_EQ(retra_xiangqi_probe(db, "3k5/9/9/9/9/9/9/9/4R4/4K4 w", &value), RETRA_WRONG_GAME);
  const unsigned char board[90] = {};
  EXPECT_EQ(retra_xiangqi_probe_board(db, board, 0, &value), RETRA_WRONG_GAME);
  EXPECT_EQ(retra_xiangqi_probe_board(db, nullptr, 0, &value), RETRA_NULL_HANDLE);
  const int bad[12] = {60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(retra_awari_probe(db, bad, &value), RETRA_INVALID_ARGUMENT);
  int batch[24], values[2], statuses[2];
  for (int i = 0; i < 12; ++i) batch[i] = batch[12 + i] = pits[i];
  batch[12] = 60;
  EXPECT_EQ(retra_awari_probe_batch(db, batch, 2, values, statuses), RETRA_INVALID_ARGUMENT);
  EXPECT_EQ(statuses[0], RETRA_OK);
  EXPECT_EQ(values[0], value);
  EXPECT_EQ(statuses[1], RETRA_INVALID_ARGUMENT);
  unsigned long long hits = 0, misses = 0, bytes = 0;
  EXPECT_EQ(retra_cache_stats(db, &hits, &misses, &bytes), RETRA_OK);
  EXPECT_GE(misses, 1u);
  EXPECT_EQ(retra_close(db), RETRA_OK);
  EXPECT_EQ(retra_awari_probe(db, pits, &value), RETRA_CLOSED_HANDLE);
  EXPECT_EQ(retra_close(db), RETRA_CLOSED_HANDLE);
  EXPECT_STREQ(retra_status_name(RETRA_CLOSED_HANDLE), "closed_handle");
  EXPECT_STREQ(retra_status_name(99), "unknown");
  EXPECT_STRNE(retra_version(), "");
}

}  // namespace
}  // namespace retra
