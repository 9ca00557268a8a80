// An independent xiangqi solver, written differently from the kernel and the Game adapter: it
// enumerates every placement of an endgame and of its supporting endgames by brute force,
// numbers them with a hash map (not the Indexer), builds the explicit move graph with the board
// move generator, and computes Table 1 values by plain passes ("in pass t, a position whose
// children decide it at t gets value t") until nothing changes. Every position (both sides to
// move, every orientation) of the endgames below must have the database's value.
#include <gtest/gtest.h>

#include <functional>
#include <unordered_map>

#include "src/games/xiangqi/module.hpp"
#include "test_util.hpp"

namespace retra::xiangqi {
namespace {

struct Node {
  Board board;
  Color side;
};

std::string key(const Board& b, Color side) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size()) + char('0' + side);
}

class Reference {
 public:
  // Solves every position with the pieces of `m` and of every sub-material reachable by captures.
  explicit Reference(const Material& m) {
    std::vector<std::pair<PieceType, Color>> pieces;
    for (int c = 0; c < 2; ++c)
      for (int t = 0; t < kTypes; ++t)
        for (int i = 0; i < m.count[c][t]; ++i) pieces.emplace_back(PieceType(t), Color(c));
    enumerate(pieces);
    solve();
  }
  // The value of a board with side to move; draws and the flying general for armless material.
  int value(const Board& b, Color side) const {
    auto it = id_.find(key(b, side));
    if (it != id_.end()) return value_[it->second];
    return can_capture_king(b, side) ? 1 : 0;  // no attacking piece left: only KFK decides
  }
  std::size_t positions() const { return nodes_.size(); }

 private:
  // Every placement of every subset of `pieces` that keeps both kings and an attacking piece.
  void enumerate(const std::vector<std::pair<PieceType, Color>>& pieces) {
    const int n = static_cast<int>(pieces.size());
    for (int mask = 0; mask < (1 << n); ++mask) {
      std::vector<std::pair<PieceType, Color>> sub;
      bool kings = true, armed = false;
      for (int i = 0; i < n; ++i) {
        if (mask >> i & 1) {
          sub.push_back(pieces[i]);
          armed |= attacking(pieces[i].first);
        } else if (pieces[i].first == king) {
          kings = false;
        }
      }
      if (!kings || !armed) continue;
      Board b{};
      std::function<void(std::size_t)> place = [&](std::size_t i) {
        if (i == sub.size()) {
          for (int side = 0; side < 2; ++side) {
            const std::string k = key(b, Color(side));
            if (id_.emplace(k, static_cast<int>(nodes_.size())).second)
              nodes_.push_back({b, Color(side)});
          }
          return;
        }
        for (int sq = 0; sq < kSquares; ++sq) {
          if (b[sq] || !allowed(sub[i].first, sub[i].second, sq)) continue;
          b[sq] = code(sub[i].first, sub[i].second);
          place(i + 1);
          b[sq] = 0;
        }
      };
      place(0);
    }
  }

  void solve() {
    const std::size_t n = nodes_.size();
    value_.assign(n, -1);  // -1: not decided yet
    // Children: node ids, or fixed values for armless children.
    std::vector<std::vector<int>> kids(n), fixed(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Node& nd = nodes_[i];
      if (can_capture_king(nd.board, nd.side)) {
        value_[i] = 1;
        continue;
      }
      for_each_move(nd.board, nd.side, [&](const Move& m) {
        Board c = nd.board;
        c[m.to] = c[m.from];
        c[m.from] = 0;
        auto it = id_.find(key(c, opposite(nd.side)));
        if (it != id_.end())
          kids[i].push_back(it->second);
        else
          fixed[i].push_back(can_capture_king(c, opposite(nd.side)) ? 1 : 0);
      });
    }
    // Pass t decides the positions whose value is t: a win when some child is a loss decided at
    // t - 1, a loss when every child is a win decided before t (a position with no move at all
    // loses at t = 2, like a stalemate).
    for (int t = 2; t < 256; ++t) {
      std::vector<std::size_t> decided;
      for (std::size_t i = 0; i < n; ++i) {
        if (value_[i] >= 0) continue;
        bool win = false, all_win = true;
        for (int k : kids[i]) {
          const int v = value_[k];
          if (v >= 0 && v % 2 == 0 && v + 1 == t) win = true;
          if (!(v >= 1 && v % 2 == 1 && v < t)) all_win = false;
        }
        for (int v : fixed[i]) {
          if (v != 1) all_win = false;  // an armless draw child: never lost
        }
        if (t % 2 == 1 && win) decided.push_back(i);
        if (t % 2 == 0 && all_win) decided.push_back(i);
      }
      for (std::size_t i : decided) value_[i] = t;
    }
    for (auto& v : value_)
      if (v < 0) v = 0;
  }

  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> id_;
  std::vector<int> value_;
};

// Builds `name` with retra and compares every position of it with the reference.
void expect_equal(const std::string& name) {
  auto m = parse_material(name);
  ASSERT_TRUE(m);
  const Reference ref(*m);
  test::TempDir dir;
  auto built = build(test::build_request("xiangqi", {name}, dir.path()));
  ASSERT_TRUE(built) << built.error().message();
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  auto gr = Game::closure({*m});
  ASSERT_TRUE(gr);
  const Game& g = **gr;
  std::size_t checked = 0, wrong = 0;
  for (int s = 0; s < g.segments(); ++s) {
    const auto values = test::read_segment(**db, g.endgame(s).name);
    for (std::uint64_t i = 0; i < g.segment_size(s); ++i) {
      const Position p = g.unrank(s, i);
      if (!p.valid) continue;
      // The class representative and its mirror image must both have the reference's value.
      Board b = g.board(s, p), mb{};
      for (int sq = 0; sq < kSquares; ++sq) mb[mirror(sq)] = b[sq];
      for (const Board& x : {b, mb}) {
        ++checked;
        const int want = ref.value(x, p.side);
        const int got = static_cast<std::uint8_t>(values[i]);
        if (got != want && ++wrong <= 5)
          ADD_FAILURE() << g.endgame(s).name << " " << to_fen(x, p.side) << ": database " << got
                        << ", reference " << want;
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << checked << " positions checked";
  EXPECT_GT(checked, 1000u);
}

TEST(XiangqiReference, KRK) { expect_equal("KRK"); }
TEST(XiangqiReference, KCK) { expect_equal("KCK"); }
TEST(XiangqiReference, KPK) { expect_equal("KPK"); }
TEST(XiangqiReference, KRKGWithADefender) { expect_equal("KRKG"); }

}  // namespace
}  // namespace retra::xiangqi
