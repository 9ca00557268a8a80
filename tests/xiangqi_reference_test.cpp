// An independent xiangqi solver, written differently from the kernel, the Game adapter and the
// board module: its own rules (moves walked square by square over file/rank coordinates, the
// king capture found by looking at every move's target, the points each piece may stand on
// written out), every placement of an endgame and of its supporting endgames enumerated by brute
// force and numbered with a hash map (not the Indexer), the explicit move graph, and Table 1
// values by plain passes ("in pass t, a position whose children decide it at t gets value t")
// until nothing changes. It shares only the board's byte layout and FEN printing with retra.
// Every position (both sides to move, every orientation) of the endgames below must have the
// database's value, and the statistics the manifest reports (okic, checkmate, stalemate, draws,
// histograms, KFK, valid positions, longest distance) must equal the reference's own counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/games/xiangqi/module.hpp"
#include "test_util.hpp"

namespace retra::xiangqi {
namespace {

// ---- The reference's rules: coordinates and rays, nothing from the build's tables ----
namespace ref {

bool on_board(int f, int r) { return f >= 0 && f < 9 && r >= 0 && r < 10; }
int at(int f, int r) { return r * 9 + f; }
// Ranks counted from the colour's own back rank.
int own_rank(Color c, int r) { return c == red ? r : 9 - r; }
bool in_palace(Color c, int f, int r) { return f >= 3 && f <= 5 && own_rank(c, r) <= 2; }
bool own_half(Color c, int r) { return own_rank(c, r) <= 4; }

// Where a piece can ever stand (spec: K 9 points, G 5, M 7, P 55, the others all 90).
bool may_stand(PieceType t, Color c, int sq) {
  const int f = sq % 9, r = own_rank(c, sq / 9);
  switch (t) {
    case king:
      return in_palace(red, f, r);
    case guard:
      return in_palace(red, f, r) && (f + r) % 2 == 1;  // d0 f0 e1 d2 f2
    case minister:                                      // c0 g0 a2 e2 i2 c4 g4
      return r <= 4 && f % 2 == 0 && r % 2 == 0 && (f / 2 + r / 2) % 2 == 1;
    case pawn:
      return r >= 5 || (r >= 3 && f % 2 == 0);
    default:
      return true;
  }
}

// Calls f(from, to) for every move of `side`, captures of any piece (the king too) included.
template <class F>
void moves(const Board& b, Color side, F&& f) {
  auto mine = [&](int sq) { return b[sq] != 0 && color_of(b[sq]) == side; };
  for (int from = 0; from < 90; ++from) {
    if (!mine(from)) continue;
    const int f0 = from % 9, r0 = from / 9;
    auto go = [&](int f1, int r1) {
      if (on_board(f1, r1) && !mine(at(f1, r1))) f(from, at(f1, r1));
    };
    struct Step {
      int df, dr;
    };
    const Step orth[4] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    const Step diag[4] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    switch (type_of(b[from])) {
      case king:
        for (auto [df, dr] : orth)
          if (in_palace(side, f0 + df, r0 + dr)) go(f0 + df, r0 + dr);
        break;
      case guard:
        for (auto [df, dr] : diag)
          if (in_palace(side, f0 + df, r0 + dr)) go(f0 + df, r0 + dr);
        break;
      case minister:
        for (auto [df, dr] : diag)
          if (on_board(f0 + 2 * df, r0 + 2 * dr) && own_half(side, r0 + 2 * dr) &&
              b[at(f0 + df, r0 + dr)] == 0)  // the minister's eye
            go(f0 + 2 * df, r0 + 2 * dr);
        break;
      case rook:
        for (auto [df, dr] : orth)
          for (int f1 = f0 + df, r1 = r0 + dr; on_board(f1, r1); f1 += df, r1 += dr) {
            go(f1, r1);
            if (b[at(f1, r1)]) break;
          }
        break;
      case cannon:
        for (auto [df, dr] : orth) {
          bool screen = false;
          for (int f1 = f0 + df, r1 = r0 + dr; on_board(f1, r1); f1 += df, r1 += dr) {
            const bool occupied = b[at(f1, r1)] != 0;
            if (!screen) {
              if (!occupied)
                f(from, at(f1, r1));
              else
                screen = true;
            } else if (occupied) {
              go(f1, r1);  // the first piece behind the screen, if it is the opponent's
              break;
            }
          }
        }
        break;
      case knight:
        for (auto [df, dr] : orth) {
          if (!on_board(f0 + df, r0 + dr) || b[at(f0 + df, r0 + dr)]) continue;  // the leg
          // One step straight, then one diagonally outwards: two landing points per leg.
          go(f0 + 2 * df + dr, r0 + 2 * dr + df);
          go(f0 + 2 * df - dr, r0 + 2 * dr - df);
        }
        break;
      case pawn: {
        const int forward = side == red ? 1 : -1;
        go(f0, r0 + forward);
        if (!own_half(side, r0)) {  // across the river: sideways too
          go(f0 + 1, r0);
          go(f0 - 1, r0);
        }
        break;
      }
      default:
        ADD_FAILURE() << "not a piece: " << int{b[from]};
    }
  }
}

int king_square(const Board& b, Color c) {
  for (int sq = 0; sq < 90; ++sq)
    if (b[sq] == code(king, c)) return sq;
  return -1;
}

// The two kings on one file with no piece between them.
bool kings_face(const Board& b) {
  const int r = king_square(b, red), k = king_square(b, black);
  if (r < 0 || k < 0 || r % 9 != k % 9) return false;
  for (int sq = r + 9; sq < k; sq += 9)
    if (b[sq]) return false;
  return true;
}

// `side`'s pieces attack the opponent's king (some move of theirs lands on it).
bool attacks_king(const Board& b, Color side) {
  const int k = king_square(b, opposite(side));
  bool hit = false;
  moves(b, side, [&](int, int to) { hit |= to == k; });
  return hit;
}

bool can_take_king(const Board& b, Color side) { return kings_face(b) || attacks_king(b, side); }

bool armed(const Board& b) {
  for (auto c : b)
    if (c &&
        (type_of(c) == rook || type_of(c) == knight || type_of(c) == cannon || type_of(c) == pawn))
      return true;
  return false;
}

Board mirrored(const Board& b) {
  Board m{};
  for (int sq = 0; sq < 90; ++sq) m[at(8 - sq % 9, sq / 9)] = b[sq];
  return m;
}

// The pieces on a board, as a sorted list of codes: boards of one material have equal lists.
// With pawn_ranks, each pawn counts with its rank (a P(n) endgame is one set of pawn ranks).
std::string material_key(const Board& b, bool pawn_ranks) {
  // One byte per piece (its code, and its rank where pawn_ranks), sorted: a multiset of pieces.
  std::string key;
  for (int sq = 0; sq < 90; ++sq) {
    if (!b[sq]) continue;
    const int rank = pawn_ranks && type_of(b[sq]) == pawn ? 1 + sq / 9 : 0;
    key += static_cast<char>(b[sq] * 16 + rank);
  }
  std::sort(key.begin(), key.end());
  return key;
}

}  // namespace ref

struct Node {
  Board board;
  Color side;
};

// A board and side to move as one number: (square, piece) of each piece in square order, 11 bits
// each (never all zero, so boards with fewer pieces cannot collide), then the side. The tests'
// boards have at most five pieces.
constexpr int kKeyPieces = 5;
std::uint64_t key(const Board& b, Color side) {
  std::uint64_t k = 0;
  int pieces = 0;
  for (int sq = 0; sq < kSquares; ++sq)
    if (b[sq]) {
      k = k << 11 | static_cast<std::uint64_t>(sq) << 4 | b[sq];
      ++pieces;
    }
  if (pieces > kKeyPieces) ADD_FAILURE() << "the reference's keys hold at most five pieces";
  return k << 1 | static_cast<std::uint64_t>(side);
}

class Reference {
 public:
  // Solves every position with the pieces of `m` and of every sub-material reachable by captures.
  // Pinned pawn levels are ignored: the reference solves the pawns on every square, and a P(n)
  // endgame is the part of it with the pawn on rank n.
  explicit Reference(const Material& m) {
    std::vector<std::pair<PieceType, Color>> pieces;
    for (int c = 0; c < 2; ++c)
      for (int t = 0; t < kTypes; ++t)
        for (int i = 0; i < m.count[c][t]; ++i) pieces.emplace_back(PieceType(t), Color(c));
    enumerate(pieces);
    solve();
  }
  // The value of a board with side to move; draws and the flying general for armless material.
  // -1 for an armed board the reference never enumerated (a piece on a point it cannot reach).
  int value(const Board& b, Color side) const {
    auto it = id_.find(key(b, side));
    if (it != id_.end()) return value_[it->second];
    if (ref::armed(b)) return -1;
    return ref::can_take_king(b, side) ? 1 : 0;  // no attacking piece left: only KFK decides
  }
  std::size_t positions() const { return nodes_.size(); }

  // The statistics of ../shared/spec/xiangqi.md for the placements of one material, counted per
  // mirror class (a placement and its mirror image once) from the reference's own values.
  struct Stats {
    std::uint64_t valid = 0, kfk = 0;
    std::uint64_t okic[2] = {}, checkmate[2] = {}, stalemate[2] = {}, draws[2] = {};
    std::map<int, std::uint64_t> histogram[2];
    int max_dtm = -1;
  };
  // A pinned endgame (pawn_ranks) counts the placements with its pawns on the example's ranks.
  Stats stats(const Board& example, bool pawn_ranks) const {
    Stats st;
    const std::string material = ref::material_key(example, pawn_ranks);
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& nd = nodes_[i];
      if (ref::material_key(nd.board, pawn_ranks) != material) continue;
      if (ref::mirrored(nd.board) < nd.board) continue;  // one placement per class
      const int v = value_[i], side = nd.side;
      const bool face = ref::kings_face(nd.board);
      if (side == red) {
        ++st.valid;
        st.kfk += face;
      }
      ++st.histogram[side][v];
      if (!face && ref::attacks_king(nd.board, nd.side)) ++st.okic[side];
      if (v == 2)
        ++(ref::attacks_king(nd.board, opposite(nd.side)) ? st.checkmate : st.stalemate)[side];
      if (v == 0) ++st.draws[side];
      if (v >= 2) st.max_dtm = std::max(st.max_dtm, v - 2);
    }
    return st;
  }

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
            const std::uint64_t k = key(b, Color(side));
            if (id_.emplace(k, static_cast<int>(nodes_.size())).second)
              nodes_.push_back({b, Color(side)});
          }
          return;
        }
        for (int sq = 0; sq < kSquares; ++sq) {
          if (b[sq] || !ref::may_stand(sub[i].first, sub[i].second, sq)) continue;
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
      if (ref::can_take_king(nd.board, nd.side)) {
        value_[i] = 1;
        continue;
      }
      ref::moves(nd.board, nd.side, [&](int from, int to) {
        Board c = nd.board;
        c[to] = c[from];
        c[from] = 0;
        auto it = id_.find(key(c, opposite(nd.side)));
        if (it != id_.end())
          kids[i].push_back(it->second);
        else if (!ref::armed(c))
          fixed[i].push_back(ref::can_take_king(c, opposite(nd.side)) ? 1 : 0);
        else
          ADD_FAILURE() << "a move leaves the enumerated placements: " << to_fen(c, red);
      });
    }
    // Pass t decides the positions whose value is t: a win when some child is a loss decided at
    // t - 1, a loss when every child is a win decided before t (a position with no move at all
    // loses at t = 2, like a stalemate).
    // Two passes in a row that decide nothing end it: a win at t + 1 needs a loss decided at t,
    // and a loss at t + 1 whose children were all decided by t - 1 would have been one at t - 1.
    for (int t = 2, idle = 0; t < 256 && idle < 2; ++t) {
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
      idle = decided.empty() ? idle + 1 : 0;
    }
    for (auto& v : value_)
      if (v < 0) v = 0;
  }

  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, int> id_;
  std::vector<int> value_;
};

// Builds `name` with retra and compares every position of it and of its supporting endgames with
// the reference, and the statistics of every endgame with the reference's.
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
  std::size_t checked = 0, wrong = 0, stats_checked = 0;
  for (int s = 0; s < g.segments(); ++s) {
    const std::string endgame = g.endgame(s).name;
    const auto values = test::read_segment(**db, endgame);
    std::optional<Board> example;
    for (std::uint64_t i = 0; i < g.segment_size(s); ++i) {
      const Position p = g.unrank(s, i);
      if (!p.valid) continue;
      // The class representative and its mirror image must both have the reference's value.
      const Board b = g.board(s, p);
      if (!example) example = b;
      for (const Board& x : {b, ref::mirrored(b)}) {
        ++checked;
        const int want = ref.value(x, p.side);
        const int got = static_cast<std::uint8_t>(values[i]);
        if (got != want && ++wrong <= 5)
          ADD_FAILURE() << endgame << " " << to_fen(x, p.side) << ": database " << got
                        << ", reference " << want;
      }
    }
    if (!example) continue;
    // The manifest's statistics, recounted by the reference.
    const auto st = ref.stats(*example, endgame.find('(') != std::string::npos);
    const nlohmann::json& j = (*db)->manifest().find(endgame)->stats;
    EXPECT_EQ(j["valid_positions"], st.valid) << endgame;
    EXPECT_EQ(j["kfk"], st.kfk) << endgame;
    for (int side = 0; side < 2; ++side) {
      const char* sn = side == red ? "red" : "black";
      EXPECT_EQ(j["okic"][side], st.okic[side]) << endgame << " " << sn;
      EXPECT_EQ(j["checkmate"][side], st.checkmate[side]) << endgame << " " << sn;
      EXPECT_EQ(j["stalemate"][side], st.stalemate[side]) << endgame << " " << sn;
      EXPECT_EQ(j["draws"][side], st.draws[side]) << endgame << " " << sn;
      std::map<int, std::uint64_t> hist;
      for (const auto& [v, n] : j["histogram"][sn].items()) hist[std::stoi(v)] = n;
      EXPECT_EQ(hist, st.histogram[side]) << endgame << " " << sn;
    }
    if (st.max_dtm < 0)
      EXPECT_TRUE(!j.contains("max_dtm_plies") || j["max_dtm_plies"].is_null()) << endgame;
    else
      EXPECT_EQ(j["max_dtm_plies"], st.max_dtm) << endgame;
    ++stats_checked;
  }
  EXPECT_EQ(wrong, 0u) << checked << " positions checked";
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(stats_checked, 0u);
  std::printf("%s: %zu positions of %d endgames equal the reference; statistics of %zu equal\n",
              name.c_str(), checked, g.segments(), stats_checked);
}

TEST(XiangqiReference, KRK) { expect_equal("KRK"); }
TEST(XiangqiReference, KCK) { expect_equal("KCK"); }
TEST(XiangqiReference, KPK) { expect_equal("KPK"); }
TEST(XiangqiReference, KRKGWithADefender) { expect_equal("KRKG"); }
TEST(XiangqiReference, KRKMWithAMinister) { expect_equal("KRKM"); }
TEST(XiangqiReference, KNKGMWithAGuardAndAMinister) { expect_equal("KNKGM"); }
// A pinned pawn: KP(6)KG and the levels it advances into, each the rank-n part of KPKG.
TEST(XiangqiReference, PinnedPawnLevels) { expect_equal("KP(6)KG"); }

}  // namespace
}  // namespace retra::xiangqi
