// An independent Awari solver, written differently from every kernel: its own naive rules
// (sowing with a loop), its own position numbering (a hash map filled by brute-force
// enumeration), an explicit move graph, and for each threshold k a fresh attractor computation
// of the positions whose mover can force a difference >= k (W_k) or cannot avoid <= -k (L_k).
// The value is the largest such k (or 0). Built databases must equal it on every position with
// at most 10 stones (13 in the slow build, for the lap rule), and the spec's histograms must hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "awari_util.hpp"
#include "src/games/awari/index.hpp"

namespace retra::awari {
namespace {

using Pits = std::array<int, 12>;

std::uint64_t key(const Pits& p) {
  std::uint64_t k = 0;
  for (int v : p) k = k * 49 + static_cast<std::uint64_t>(v);
  return k;
}

// Naive rules, straight from the spec's text.
struct NaiveMove {
  bool legal = false;
  int captured = 0;
  Pits child{};  // seen from the opponent
};

NaiveMove naive_move(const Pits& p, int origin) {
  NaiveMove m;
  if (p[origin] == 0) return m;
  Pits b = p;
  int stones = b[origin];
  b[origin] = 0;
  int pos = origin;
  while (stones > 0) {
    pos = (pos + 1) % 12;
    if (pos == origin) continue;  // never sow into the origin
    ++b[pos];
    --stones;
  }
  int captured = 0;
  for (int q = pos; q >= 6 && (b[q] == 2 || b[q] == 3); --q) {
    captured += b[q];
    b[q] = 0;
  }
  int opponent = 0;
  for (int q = 6; q < 12; ++q) opponent += b[q];
  if (opponent == 0) return m;  // must leave the opponent a stone
  m.legal = true;
  m.captured = captured;
  for (int q = 0; q < 12; ++q) m.child[q] = b[(q + 6) % 12];
  return m;
}

struct Level {
  std::vector<Pits> pos;
  std::unordered_map<std::uint64_t, std::uint32_t> id;
  std::vector<int> value;
};

void enumerate(int n, Level& lv) {
  // C(n + 11, 11) positions: reserved, so that the map is never rehashed.
  std::uint64_t count = 1;
  for (int k = 1; k <= 11; ++k) count = count * static_cast<std::uint64_t>(n + k) / k;
  lv.pos.reserve(count);
  lv.id.reserve(count);
  Pits p{};
  std::function<void(int, int)> rec = [&](int pit, int left) {
    if (pit == 11) {
      p[11] = left;
      lv.id.emplace(key(p), static_cast<std::uint32_t>(lv.pos.size()));
      lv.pos.push_back(p);
      return;
    }
    for (int s = left; s >= 0; --s) {
      p[pit] = s;
      rec(pit + 1, left - s);
    }
  };
  rec(0, n);
}

// Solves level n given the values of all smaller levels. The graph is kept in flat arrays
// (predecessors and exits grouped by position in one array each): the suite runs this for 2.5
// million positions at 13 stones, where a vector per position cost most of the time.
void solve(int n, std::vector<Level>& levels) {
  Level& lv = levels[n];
  enumerate(n, lv);
  const std::size_t N = lv.pos.size();
  std::vector<int> quiet(N, 0);  // quiet moves of each position
  std::vector<std::uint32_t> exit_at(N + 1, 0);
  std::vector<int> exits;  // values of captures and of the game's end, by position
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (child, parent) of quiet moves
  for (std::size_t i = 0; i < N; ++i) {
    int legal = 0, mover = 0;
    for (int q = 0; q < 6; ++q) mover += lv.pos[i][q];
    for (int o = 0; o < 6; ++o) {
      NaiveMove m = naive_move(lv.pos[i], o);
      if (!m.legal) continue;
      ++legal;
      if (m.captured) {
        const Level& low = levels[n - m.captured];
        exits.push_back(m.captured - low.value[low.id.at(key(m.child))]);
      } else {
        edges.emplace_back(lv.id.at(key(m.child)), static_cast<std::uint32_t>(i));
        ++quiet[i];
      }
    }
    if (legal == 0) exits.push_back(mover == 0 ? -n : n);
    exit_at[i + 1] = static_cast<std::uint32_t>(exits.size());
  }
  const test::Predecessors preds(N, edges);
  edges = {};
  lv.value.assign(N, 0);
  std::vector<char> in(N);
  std::vector<int> open(N);
  std::vector<std::uint32_t> work;  // a FIFO: read from `head`, appended at the end
  work.reserve(N);
  for (int k = 1; k <= n; ++k) {
    // in[i]: 1 = W_k (mover forces >= k), 2 = L_k (mover cannot avoid <= -k).
    // open[i]: moves of i not yet known to lead to >= k for the opponent.
    std::fill(in.begin(), in.end(), 0);
    work.clear();
    for (std::size_t i = 0; i < N; ++i) {
      int good_exit = 0, open_moves = quiet[i];
      for (std::uint32_t x = exit_at[i]; x < exit_at[i + 1]; ++x) {
        if (exits[x] >= k) good_exit = 1;
        if (exits[x] > -k) ++open_moves;
      }
      open[i] = open_moves;
      if (good_exit)
        in[i] = 1;
      else if (open_moves == 0)
        in[i] = 2;
      if (in[i]) work.push_back(static_cast<std::uint32_t>(i));
    }
    for (std::size_t head = 0; head < work.size(); ++head) {
      const std::uint32_t q = work[head];
      for (const std::uint32_t p : preds.of(q)) {
        if (in[p]) continue;
        if (in[q] == 2) {
          in[p] = 1;
          work.push_back(p);
        } else if (--open[p] == 0) {
          in[p] = 2;
          work.push_back(p);
        }
      }
    }
    for (std::size_t i = 0; i < N; ++i) {
      if (in[i] == 1)
        lv.value[i] = k;
      else if (in[i] == 2)
        lv.value[i] = -k;
    }
  }
}

// Every position up to kStones stones. The suite's second build of this file (label "slow", not
// under the sanitizers) goes to 13 stones, where a pit holds 12 or more: the lap rule (a sowing
// that goes all the way round skips its own pit) decides those values.
#ifndef RETRA_AWARI_REFERENCE_STONES
#define RETRA_AWARI_REFERENCE_STONES 10
#endif
constexpr int kStones = RETRA_AWARI_REFERENCE_STONES;

class AwariReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    levels_ = new std::vector<Level>(kStones + 1);
    for (int n = 0; n <= kStones; ++n) solve(n, *levels_);
  }
  static void TearDownTestSuite() { delete levels_; }
  static std::vector<Level>* levels_;
};
std::vector<Level>* AwariReference::levels_ = nullptr;

// Its own levels 0..4: no fixture, so the slow build does not solve 13 stones for it.
TEST(AwariReferenceSpec, MatchesTheSpecHistograms) {
  std::vector<Level> levels(5);
  for (int n = 0; n <= 4; ++n) solve(n, levels);
  const std::vector<std::vector<std::pair<int, int>>> spec = {
      {{-1, 7}, {1, 5}},
      {{-2, 40}, {0, 13}, {2, 25}},
      {{-3, 177}, {-1, 1}, {0, 63}, {1, 7}, {3, 116}},
      {{-4, 532}, {-2, 110}, {0, 143}, {2, 165}, {4, 415}}};
  for (int n = 1; n <= 4; ++n) {
    std::map<int, int> h;
    for (int v : levels[static_cast<std::size_t>(n)].value) ++h[v];
    const std::vector<std::pair<int, int>> got(h.begin(), h.end());
    EXPECT_EQ(got, spec[n - 1]) << "n=" << n;
  }
}

void expect_equal_to_reference(Kernel kernel, const std::vector<Level>& levels) {
  test::TempDir dir;
  BuildRequest opt = test::awari_request(kStones, dir.path());
  opt.kernel = kernel;
  opt.block_entries = 4096;  // many blocks, so chunk boundaries are exercised
  auto built = build(opt);
  ASSERT_TRUE(built) << built.error().message();
  auto db = Database::open(dir.path());
  ASSERT_TRUE(db);
  std::uint64_t lap_positions = 0;  // a pit holds 12 or more stones
  for (int n = 0; n <= kStones; ++n) {
    const auto values = test::read_segment(**db, std::to_string(n));
    const Level& lv = levels[n];
    ASSERT_EQ(values.size(), lv.pos.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < lv.pos.size(); ++i) {
      Board b;
      for (int q = 0; q < 12; ++q) b.pit[q] = static_cast<std::uint8_t>(lv.pos[i][q]);
      lap_positions += *std::max_element(lv.pos[i].begin(), lv.pos[i].end()) >= 12;
      if (values[rank(b)] != lv.value[i] && ++wrong <= 5)
        ADD_FAILURE() << "n=" << n << " " << format_board(b) << ": database "
                      << int{values[rank(b)]} << ", reference " << lv.value[i];
    }
    EXPECT_EQ(wrong, 0u) << "n=" << n;
  }
  // Positions with a pit of 12 or more: 12 of the 12-stone ones, 12 + 12 * 11 of the 13-stone ones.
  EXPECT_EQ(lap_positions, kStones < 12 ? 0u : kStones == 12 ? 12u : 12u + 12u * 12u);
}

TEST_F(AwariReference, ForwardKernelEqualsReferenceOnEveryPosition) {
  expect_equal_to_reference(Kernel::forward, *levels_);
}

TEST_F(AwariReference, BackwardKernelEqualsReferenceOnEveryPosition) {
  expect_equal_to_reference(Kernel::backward, *levels_);
}

}  // namespace
}  // namespace retra::awari
