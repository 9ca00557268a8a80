// The probing library: the C++ API against values read directly from the segments (every
// position of the small Awari segments), batches, concurrent probes, the LRU cache, xiangqi
// FENs, corrupted blocks, and C ABI misuse (null, closed and wrong-game handles).
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <thread>

#include "retra/probe.hpp"
#include "retra/retra.h"
#include "src/games/awari/database.hpp"
#include "src/games/awari/index.hpp"
#include "src/games/xiangqi/database.hpp"
#include "src/io/file.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

using probe::Prober;
using probe::Status;

class Probe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    awari::BuildOptions a;
    a.first = 0;
    a.last = 9;
    a.db = dir_->path() / "awari";
    a.threads = 2;
    a.block_entries = 1024;  // many blocks, so that the cache is exercised
    ASSERT_TRUE(awari::build(a));
    xiangqi::BuildOptions x;
    x.endgames = {"KRK", "KRKG"};
    x.db = dir_->path() / "xiangqi";
    x.threads = 2;
    ASSERT_TRUE(xiangqi::build(x));
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string awari_db() { return (dir_->path() / "awari").string(); }
  static std::string xiangqi_db() { return (dir_->path() / "xiangqi").string(); }
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
    auto r = xiangqi::probe(**db, fen);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(v.value, r->value) << fen;
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
