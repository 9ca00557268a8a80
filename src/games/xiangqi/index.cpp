// The xiangqi indexer (see include/retra/games/xiangqi/index.hpp). Thread safety: an Indexer is
// immutable after construction; rank/unrank are reentrant.
#include "src/games/xiangqi/index.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "src/util/binomial.hpp"

namespace retra::xiangqi {

namespace {

// C(n, k) for n <= 90, k <= 5: every group has at most 5 pieces.
struct Binom {
  std::uint64_t c[kSquares + 1][6];
  constexpr Binom() : c{} {
    for (unsigned n = 0; n <= kSquares; ++n)
      for (unsigned k = 0; k <= 5; ++k) c[n][k] = binomial(n, k);
  }
};
constexpr Binom kBinom;

// Colex rank of the sorted set x[0] < ... < x[k-1]: sum C(x[i], i + 1).
std::uint64_t colex_rank(const int* x, int k) {
  std::uint64_t r = 0;
  for (int i = 0; i < k; ++i) r += kBinom.c[x[i]][i + 1];
  return r;
}

// Inverse of colex_rank over [0, n): fills x ascending. The last element of a pair comes from
// the inverse of C(v, 2) <= r (the stepping cursor unranks one group per position).
void colex_unrank(std::uint64_t r, int k, int n, int* x) {
  if (k == 1) {
    x[0] = static_cast<int>(r);
    return;
  }
  if (k == 2) {
    int v = static_cast<int>((1.0 + std::sqrt(1.0 + 8.0 * static_cast<double>(r))) / 2.0);
    while (kBinom.c[v][2] > r) --v;  // guard against rounding either way
    while (kBinom.c[v + 1][2] <= r) ++v;
    x[1] = v;
    x[0] = static_cast<int>(r - kBinom.c[v][2]);
    return;
  }
  int hi = n - 1;
  for (int i = k - 1; i >= 0; --i) {
    int v = hi;
    while (kBinom.c[v][i + 1] > r) --v;
    x[i] = v;
    r -= kBinom.c[v][i + 1];
    hi = v - 1;
  }
}

void sort_small(int* x, int k) {
  for (int i = 1; i < k; ++i)
    for (int j = i; j > 0 && x[j - 1] > x[j]; --j) std::swap(x[j - 1], x[j]);
}

// Colex rank of an unsorted set; the common one- and two-piece groups without a sort.
[[gnu::always_inline]] inline std::uint64_t set_rank(int* x, int k) {
  if (k == 1) return static_cast<std::uint64_t>(x[0]);
  if (k == 2) {
    const int lo = std::min(x[0], x[1]), hi = std::max(x[0], x[1]);
    return static_cast<std::uint64_t>(hi * (hi - 1) / 2 + lo);
  }
  sort_small(x, k);
  return colex_rank(x, k);
}

// mirror() as a table: the ranking loops mirror every piece of half the positions they see.
struct MirrorTable {
  std::uint8_t m[kSquares];
  constexpr MirrorTable() : m{} {
    for (int s = 0; s < kSquares; ++s) m[s] = static_cast<std::uint8_t>(mirror(s));
  }
};
constexpr MirrorTable kMirror;

inline bool occupied(const std::uint64_t occ[2], int sq) { return (occ[sq >> 6] >> (sq & 63)) & 1; }
inline void occupy(std::uint64_t occ[2], int sq) { occ[sq >> 6] |= 1ull << (sq & 63); }
inline int occupied_below(const std::uint64_t occ[2], int sq) {
  if (sq < 64) return __builtin_popcountll(occ[0] & ((1ull << sq) - 1));
  return __builtin_popcountll(occ[0]) + __builtin_popcountll(occ[1] & ((1ull << (sq - 64)) - 1));
}

std::vector<std::uint8_t> squares_where(PieceType t, Color c, std::int8_t level) {
  std::vector<std::uint8_t> v;
  for (int s = 0; s < kSquares; ++s)
    if (allowed(t, c, s) && (level < 0 || rank_of(s) == level))
      v.push_back(static_cast<std::uint8_t>(s));
  return v;
}

// Number of k-subsets of `squares` that are their own mirror image.
std::uint64_t symmetric_subsets(const std::vector<std::uint8_t>& squares, int k) {
  int centre = 0, pairs = 0;
  for (auto s : squares) {
    if (mirror(s) == s)
      ++centre;
    else if (mirror(s) > s)
      ++pairs;
  }
  std::uint64_t n = 0;
  for (int p = 0; 2 * p <= k; ++p) n += kBinom.c[pairs][p] * kBinom.c[centre][k - 2 * p];
  return n;
}

}  // namespace

Indexer::Indexer(const Material& m) : material_(m), slots_(layout(m)) {
  n_ = static_cast<int>(slots_.size());
  assert(n_ <= kMaxPieces);

  // Royal tables: every placement of a king with its guards and ministers, keyed by (king point,
  // guard subset, minister subset) over the 9 / 5 / 7 points where they may stand.
  for (int c = 0; c < 2; ++c) {
    Royal& R = royal_[c];
    R.g = m.count[c][guard];
    R.m = m.count[c][minister];
    const auto kp = squares_where(king, Color(c), -1), gp = squares_where(guard, Color(c), -1),
               mp = squares_where(minister, Color(c), -1);
    const std::uint64_t gn = kBinom.c[gp.size()][R.g], mn = kBinom.c[mp.size()][R.m];
    R.gn = gn;
    R.mn = mn;
    R.kpt.fill(-1);
    R.gpt.fill(-1);
    R.mpt.fill(-1);
    for (std::size_t i = 0; i < kp.size(); ++i) R.kpt[kp[i]] = static_cast<std::int8_t>(i);
    for (std::size_t i = 0; i < gp.size(); ++i) R.gpt[gp[i]] = static_cast<std::int8_t>(i);
    for (std::size_t i = 0; i < mp.size(); ++i) R.mpt[mp[i]] = static_cast<std::int8_t>(i);
    // Key weights: kw includes the multiplier of the king point, gw that of the guard rank.
    auto pair_rank = [](int a, int b) { return a < b ? b * (b - 1) / 2 + a : a * (a - 1) / 2 + b; };
    for (int s = 0; s < kSquares; ++s)
      R.kw[s] = R.kpt[s] < 0 ? 0 : static_cast<std::uint32_t>(R.kpt[s] * gn * mn);
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b) {
        const int pr = a == b ? 0 : pair_rank(a, b);
        const int single = b == 0 ? a : 0;
        R.gw[a * 8 + b] = static_cast<std::uint32_t>((R.g == 2 ? pr : single) * mn);
        R.mw[a * 8 + b] = static_cast<std::uint32_t>(R.m == 2 ? pr : single);
      }
    R.key_to_id.assign(kp.size() * gn * mn, -1);
    std::vector<std::uint64_t> keys;
    for (std::size_t ki = 0; ki < kp.size(); ++ki)
      for (std::uint64_t gr = 0; gr < gn; ++gr)
        for (std::uint64_t mr = 0; mr < mn; ++mr) {
          int gx[2], mx[2];
          colex_unrank(gr, R.g, static_cast<int>(gp.size()), gx);
          colex_unrank(mr, R.m, static_cast<int>(mp.size()), mx);
          std::array<std::uint8_t, 5> sq{};
          sq[0] = kp[ki];
          bool clash = false;
          for (int i = 0; i < R.g; ++i) sq[1 + i] = gp[gx[i]];
          for (int i = 0; i < R.m; ++i) {
            sq[1 + R.g + i] = mp[mx[i]];
            clash |= mp[mx[i]] == kp[ki];
          }
          for (int i = 0; i < R.g; ++i) clash |= gp[gx[i]] == kp[ki];
          if (clash) continue;
          R.key_to_id[(ki * gn + gr) * mn + mr] = static_cast<std::int32_t>(R.squares.size());
          R.squares.push_back(sq);
        }
    R.mirror_id.resize(R.squares.size());
    for (std::size_t id = 0; id < R.squares.size(); ++id) {
      std::uint8_t ms[5];
      for (int i = 0; i < 1 + R.g + R.m; ++i)
        ms[i] = static_cast<std::uint8_t>(mirror(R.squares[id][i]));
      R.mirror_id[id] = royal_id(c, ms);
    }
  }

  // Attacking groups: identical pieces of one colour (pinned pawns: of one level).
  struct Att {
    std::vector<int> slots;
    PieceType t;
    std::vector<std::uint8_t> allowed;
  };
  std::vector<Att> atts;
  std::vector<int> royal_slots;
  for (int s = 0; s < n_; ++s) {
    const Slot& sl = slots_[s];
    if (!attacking(sl.type)) {
      royal_slots.push_back(s);
      continue;
    }
    if (!atts.empty() && atts.back().t == sl.type &&
        slots_[atts.back().slots[0]].color == sl.color &&
        slots_[atts.back().slots[0]].level == sl.level) {
      atts.back().slots.push_back(s);
      continue;
    }
    atts.push_back({{s}, sl.type, squares_where(sl.type, sl.color, sl.level)});
  }
  const std::uint64_t royal_full = royal_[0].squares.size() * royal_[1].squares.size();
  auto set_slots = [](Group& g, const std::vector<int>& slots) {
    g.k = static_cast<int>(slots.size());
    for (int i = 0; i < g.k; ++i) g.slots[i] = static_cast<std::uint8_t>(slots[i]);
  };

  auto make_absolute = [&](const Att& a) {
    Group g;
    g.kind = Kind::absolute;
    set_slots(g, a.slots);
    g.allowed = a.allowed;
    g.where.fill(-1);
    for (std::size_t i = 0; i < g.allowed.size(); ++i)
      g.where[g.allowed[i]] = static_cast<std::int16_t>(i);
    for (int sq = 0; sq < kSquares; ++sq) g.where_m[sq] = g.where[kMirror.m[sq]];
    g.full = g.count = kBinom.c[g.allowed.size()][g.k];
    return g;
  };
  auto build_order = [&](int first_att) {
    // first_att < 0: royal pair first (reduced), pawn groups absolute, R/N/C relative.
    // else: that attacking group first (reduced, absolute), royal pair, then the same.
    std::vector<Group> gs;
    Group royal;
    royal.kind = Kind::royal_pair;
    set_slots(royal, royal_slots);
    royal.full = royal.count = royal_full;
    int placed = 0;
    auto push = [&](Group g) {
      g.before = placed;
      placed += g.k;
      gs.push_back(std::move(g));
    };
    if (first_att >= 0) push(make_absolute(atts[first_att]));
    push(royal);
    for (int i = 0; i < static_cast<int>(atts.size()); ++i)
      if (i != first_att && atts[i].t == pawn) push(make_absolute(atts[i]));
    for (int i = 0; i < static_cast<int>(atts.size()); ++i)
      if (i != first_att && atts[i].t != pawn) {
        Group g;
        g.kind = Kind::relative;
        set_slots(g, atts[i].slots);
        g.full = g.count = kBinom.c[kSquares - placed][g.k];
        push(std::move(g));
      }
    // The first group keeps one representative per mirror pair.
    Group& f = gs[0];
    if (f.kind == Kind::royal_pair) {
      std::uint64_t reduced = 0;
      const std::uint64_t nb = royal_[1].squares.size();
      for (std::uint64_t r = 0; r < royal_[0].squares.size(); ++r)
        for (std::uint64_t b = 0; b < nb; ++b)
          if (royal_[0].mirror_id[r] * nb + royal_[1].mirror_id[b] >= r * nb + b) ++reduced;
      f.count = reduced;
    } else {
      f.count = (f.full + symmetric_subsets(f.allowed, f.k)) / 2;
    }
    return gs;
  };
  auto size_of = [](const std::vector<Group>& gs) {
    std::uint64_t s = 1;
    for (const auto& g : gs) s *= g.count;
    return s;
  };
  groups_ = build_order(-1);
  for (int i = 0; i < static_cast<int>(atts.size()); ++i) {
    auto gs = build_order(i);
    if (size_of(gs) < size_of(groups_)) groups_ = std::move(gs);
  }
  // Tables of the first group's representatives.
  Group& f = groups_[0];
  f.full_to_reduced.assign(f.full, -1);
  std::uint8_t sq[kMaxPieces];
  if (f.kind == Kind::absolute) {
    f.mirror_full.resize(f.full);
    for (std::uint64_t r = 0; r < f.full; ++r) {
      std::uint64_t occ[2] = {0, 0};
      group_place(f, r, sq, occ);
      f.mirror_full[r] = static_cast<std::uint32_t>(group_rank<true>(f, sq, occ));
    }
  }
  for (std::uint64_t r = 0; r < f.full; ++r) {
    if (mirror_full(r) >= r) {
      f.full_to_reduced[r] = static_cast<std::int32_t>(f.reduced_to_full.size());
      f.reduced_to_full.push_back(static_cast<std::uint32_t>(r));
    }
  }
  assert(f.reduced_to_full.size() == f.count);
  for (std::size_t gi = 0; gi < groups_.size(); ++gi)
    for (int k = 0; k < groups_[gi].k; ++k)
      group_of_[groups_[gi].slots[k]] = static_cast<std::uint8_t>(gi);
  rest_size_ = 1;
  for (std::size_t i = 1; i < groups_.size(); ++i) rest_size_ *= groups_[i].count;
  size_ = f.count * rest_size_;

  // The paper's scheme: royal groups and attacking groups over all their squares, overlaps
  // included, with the one attacking group whose mirror reduction helps most reduced.
  std::uint64_t full = royal_full, best = std::numeric_limits<std::uint64_t>::max();
  for (const auto& a : atts) full *= kBinom.c[a.allowed.size()][a.slots.size()];
  for (const auto& a : atts) {
    const int k = static_cast<int>(a.slots.size());
    const std::uint64_t n = kBinom.c[a.allowed.size()][k];
    best = std::min(best, full / n * ((n + symmetric_subsets(a.allowed, k)) / 2));
  }
  paper_size_ = atts.empty() ? full : best;
}

[[gnu::always_inline]] inline std::uint32_t Indexer::royal_id(int c, const std::uint8_t* sq) const {
  const Royal& R = royal_[c];
  // At most two guards and two ministers: [a * 8 + b] tables hold their colex ranks.
  const std::uint8_t* ms = sq + 1 + R.g;
  std::uint32_t key = R.kw[sq[0]];
  if (R.g == 1) key += R.gw[static_cast<unsigned>(R.gpt[sq[1]]) * 8];
  if (R.g == 2) key += R.gw[static_cast<unsigned>(R.gpt[sq[1]]) * 8 + R.gpt[sq[2]]];
  if (R.m == 1) key += R.mw[static_cast<unsigned>(R.mpt[ms[0]]) * 8];
  if (R.m == 2) key += R.mw[static_cast<unsigned>(R.mpt[ms[0]]) * 8 + R.mpt[ms[1]]];
  const std::int32_t id = R.key_to_id[key];
  assert(id >= 0);
  return static_cast<std::uint32_t>(id);
}

template <bool M>
[[gnu::always_inline]] inline std::uint64_t Indexer::group_rank(const Group& g,
                                                                const std::uint8_t* sq,
                                                                const std::uint64_t occ[2]) const {
  int x[5];
  switch (g.kind) {
    case Kind::royal_pair: {
      // Royal slots: red K, red G.., red M.., black K, black G.., black M.. (layout order).
      const int nr = 1 + royal_[0].g + royal_[0].m;
      std::uint8_t rs[kMaxPieces], bs[kMaxPieces];  // 5 each at most
      for (int i = 0; i < nr; ++i) rs[i] = sq[g.slots[i]];
      for (int i = nr; i < g.k; ++i) bs[i - nr] = sq[g.slots[i]];
      std::uint32_t ir = royal_id(red, rs), ib = royal_id(black, bs);
      if constexpr (M) {
        ir = royal_[0].mirror_id[ir];
        ib = royal_[1].mirror_id[ib];
      }
      return ir * royal_[1].squares.size() + ib;
    }
    case Kind::absolute: {
      const auto& where = M ? g.where_m : g.where;
      for (int i = 0; i < g.k; ++i) x[i] = where[sq[g.slots[i]]];
      return set_rank(x, g.k);
    }
    case Kind::relative:
      for (int i = 0; i < g.k; ++i) {
        const int s = M ? kMirror.m[sq[g.slots[i]]] : sq[g.slots[i]];
        x[i] = s - occupied_below(occ, s);  // occupancy below keeps the order of the pieces
      }
      return set_rank(x, g.k);
  }
  return 0;
}

// Places group g's pieces for full rank r; false if they land on occupied squares.
bool Indexer::group_place(const Group& g, std::uint64_t r, std::uint8_t* sq,
                          std::uint64_t occ[2]) const {
  int x[5];
  bool ok = true;
  switch (g.kind) {
    case Kind::royal_pair: {
      const std::uint64_t nb = royal_[1].squares.size();
      const auto& rs = royal_[0].squares[r / nb];
      const auto& bs = royal_[1].squares[r % nb];
      const int nr = 1 + royal_[0].g + royal_[0].m;
      for (int i = 0; i < nr; ++i) sq[g.slots[i]] = rs[i];
      for (int i = nr; i < g.k; ++i) sq[g.slots[i]] = bs[i - nr];
      for (int i = 0; i < g.k; ++i) {
        ok &= !occupied(occ, sq[g.slots[i]]);
        occupy(occ, sq[g.slots[i]]);
      }
      return ok;
    }
    case Kind::absolute:
      colex_unrank(r, g.k, static_cast<int>(g.allowed.size()), x);
      for (int i = 0; i < g.k; ++i) {
        const int s = g.allowed[x[i]];
        sq[g.slots[i]] = static_cast<std::uint8_t>(s);
        ok &= !occupied(occ, s);
      }
      for (int i = 0; i < g.k; ++i) occupy(occ, sq[g.slots[i]]);
      return ok;
    case Kind::relative: {
      colex_unrank(r, g.k, kSquares - g.before, x);
      // The x[i]-th free square: select a set bit of the free mask.
      const std::uint64_t free_lo = ~occ[0], free_hi = ~occ[1] & ((1ull << (kSquares - 64)) - 1);
      const int lo_count = __builtin_popcountll(free_lo);
      for (int i = 0; i < g.k; ++i) {
        const bool high = x[i] >= lo_count;
        const std::uint64_t word = high ? free_hi : free_lo;
        const int nth = high ? x[i] - lo_count : x[i];
#ifdef __BMI2__
        const int bit = __builtin_ctzll(__builtin_ia32_pdep_di(1ull << nth, word));
#else
        std::uint64_t w = word;
        for (int k = 0; k < nth; ++k) w &= w - 1;
        const int bit = __builtin_ctzll(w);
#endif
        sq[g.slots[i]] = static_cast<std::uint8_t>(bit + (high ? 64 : 0));
      }
      for (int i = 0; i < g.k; ++i) occupy(occ, sq[g.slots[i]]);
      return true;
    }
  }
  return false;
}

std::uint64_t Indexer::first_full(const std::uint8_t* sq) const {
  const std::uint64_t none[2] = {0, 0};
  return group_rank<false>(groups_[0], sq, none);
}

inline std::uint64_t Indexer::mirror_full(std::uint64_t f) const {
  const Group& g = groups_[0];
  if (g.kind == Kind::royal_pair) {
    const std::uint64_t nb = royal_[1].squares.size();
    return royal_[0].mirror_id[f / nb] * nb + royal_[1].mirror_id[f % nb];
  }
  return g.mirror_full[f];
}

// The rank of groups 1.. of the placement (M: of its mirror image), each relative group over the
// squares the groups before it leave free.
template <bool M>
std::uint64_t Indexer::rest_rank(const std::uint8_t* sq) const {
  auto orient = [](int s) { return M ? kMirror.m[s] : static_cast<std::uint8_t>(s); };
  std::uint64_t occ[2] = {0, 0};
  const Group& f = groups_[0];
  for (int i = 0; i < f.k; ++i) occupy(occ, orient(sq[f.slots[i]]));
  std::uint64_t r = 0;
  const std::size_t ng = groups_.size();
  for (std::size_t gi = 1; gi < ng; ++gi) {
    const Group& g = groups_[gi];
    r = r * g.count + group_rank<M>(g, sq, occ);
    if (gi + 1 < ng)
      for (int i = 0; i < g.k; ++i) occupy(occ, orient(sq[g.slots[i]]));
  }
  return r;
}

std::uint64_t Indexer::rank(const std::uint8_t* sq, bool* mirrored, bool* symmetric) const {
  const Group& first = groups_[0];
  std::uint64_t f, fm;
  if (first.kind == Kind::royal_pair) {
    // Mirror image by table: no mirrored squares needed.
    const int nr = 1 + royal_[0].g + royal_[0].m;
    std::uint8_t rs[kMaxPieces], bs[kMaxPieces];  // 5 each at most
    for (int i = 0; i < nr; ++i) rs[i] = sq[first.slots[i]];
    for (int i = nr; i < first.k; ++i) bs[i - nr] = sq[first.slots[i]];
    const std::uint32_t ir = royal_id(red, rs), ib = royal_id(black, bs);
    const std::uint64_t nb = royal_[1].squares.size();
    f = ir * nb + ib;
    fm = royal_[0].mirror_id[ir] * nb + royal_[1].mirror_id[ib];
  } else {
    f = first_full(sq);
    fm = first.mirror_full[f];
  }
  return finish_rank(f, fm, sq, mirrored, symmetric);
}

// The index from the first group's rank f and its mirror image's fm: the orientation with the
// smaller first rank (the smaller rest when they tie) is the class representative.
std::uint64_t Indexer::finish_rank(std::uint64_t f, std::uint64_t fm, const std::uint8_t* sq,
                                   bool* mirrored, bool* symmetric) const {
  const Group& first = groups_[0];
  bool mir = false, sym = false;
  std::uint64_t rest;
  if (fm == f) {
    // The first group is its own mirror image: the rest decides the orientation.
    rest = rest_rank<false>(sq);
    const std::uint64_t rest_m = rest_rank<true>(sq);
    sym = rest_m == rest;
    if (rest_m < rest) {
      rest = rest_m;
      mir = true;
    }
  } else if (fm < f) {
    rest = rest_rank<true>(sq);
    mir = true;
  } else {
    rest = rest_rank<false>(sq);
  }
  if (mirrored) *mirrored = mir;
  if (symmetric) *symmetric = sym;
  return static_cast<std::uint64_t>(first.full_to_reduced[std::min(f, fm)]) * rest_size_ + rest;
}

// The mixed-radix rank of groups from.. given the oriented squares of the groups before them.
template <bool M>
std::uint64_t Indexer::tail_rank(std::size_t from, const std::uint8_t* sq, std::uint64_t occ0,
                                 std::uint64_t occ1) const {
  std::uint64_t occ[2] = {occ0, occ1};
  std::uint64_t r = 0;
  const std::size_t ng = groups_.size();
  for (std::size_t gi = from; gi < ng; ++gi) {
    const Group& g = groups_[gi];
    r = r * g.count + group_rank<M>(g, sq, occ);
    if (gi + 1 < ng)
      for (int i = 0; i < g.k; ++i) occupy(occ, M ? kMirror.m[sq[g.slots[i]]] : sq[g.slots[i]]);
  }
  return r;
}

Indexer::Partial Indexer::begin(const std::uint8_t* sq, int slot) const {
  Partial pt;
  pt.group = group_of_[slot];
  if (pt.group == 0) {
    // The orientation itself may change: rank in full, but keep what the other colour's royal
    // group contributes when the first group is the royal pair.
    if (groups_[0].kind == Kind::royal_pair) {
      const Group& first = groups_[0];
      const int nr = 1 + royal_[0].g + royal_[0].m;
      int pos = 0;
      while (first.slots[pos] != slot) ++pos;
      pt.royal = true;
      pt.full = false;
      pt.colour = pos < nr ? 0 : 1;
      std::uint8_t os[kMaxPieces];
      const int off = pt.colour == 0 ? nr : 0, cnt = pt.colour == 0 ? first.k - nr : nr;
      for (int i = 0; i < cnt; ++i) os[i] = sq[first.slots[off + i]];
      pt.other_id = royal_id(1 - pt.colour, os);
      pt.other_mid = royal_[1 - pt.colour].mirror_id[pt.other_id];
    }
    return pt;
  }
  const std::uint64_t f = first_full(sq), fm = mirror_full(f);
  if (f == fm) return pt;  // the rest decides the orientation: rank in full
  pt.full = false;
  pt.mirror = fm < f;
  auto orient = [&](int s) { return pt.mirror ? kMirror.m[s] : static_cast<std::uint8_t>(s); };
  std::uint64_t prefix = 0, scale = 1;
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    const Group& g = groups_[gi];
    if (static_cast<int>(gi) >= pt.group) {
      scale *= g.count;
      continue;
    }
    if (gi > 0)
      prefix = prefix * g.count +
               (pt.mirror ? group_rank<true>(g, sq, pt.occ) : group_rank<false>(g, sq, pt.occ));
    for (int i = 0; i < g.k; ++i) occupy(pt.occ, orient(sq[g.slots[i]]));
  }
  pt.head = static_cast<std::uint64_t>(groups_[0].full_to_reduced[std::min(f, fm)]) * rest_size_ +
            prefix * scale;
  return pt;
}

std::uint64_t Indexer::rank_moved(const Partial& pt, const std::uint8_t* sq, bool* mirrored,
                                  bool* symmetric) const {
  if (pt.full) return rank(sq, mirrored, symmetric);
  if (pt.royal) {
    const Group& first = groups_[0];
    const int nr = 1 + royal_[0].g + royal_[0].m;
    std::uint8_t cs[kMaxPieces];
    const int off = pt.colour == 0 ? 0 : nr, cnt = pt.colour == 0 ? nr : first.k - nr;
    for (int i = 0; i < cnt; ++i) cs[i] = sq[first.slots[off + i]];
    const std::uint64_t id = royal_id(pt.colour, cs);
    const std::uint64_t mid = royal_[pt.colour].mirror_id[id];
    const std::uint64_t nb = royal_[1].squares.size();
    const std::uint64_t f = pt.colour == 0 ? id * nb + pt.other_id : pt.other_id * nb + id;
    const std::uint64_t fm = pt.colour == 0 ? mid * nb + pt.other_mid : pt.other_mid * nb + mid;
    return finish_rank(f, fm, sq, mirrored, symmetric);
  }
  // The first group is not its own mirror image, so neither is the placement.
  if (mirrored) *mirrored = pt.mirror;
  if (symmetric) *symmetric = false;
  const auto g = static_cast<std::size_t>(pt.group);
  return pt.head + (pt.mirror ? tail_rank<true>(g, sq, pt.occ[0], pt.occ[1])
                              : tail_rank<false>(g, sq, pt.occ[0], pt.occ[1]));
}

// A placed valid position with first-group rank `full` and rest `rest` is canonical unless its
// first group is its own mirror image and the mirrored rest is smaller.
bool Indexer::canonical(std::uint64_t full, std::uint64_t rest, const std::uint8_t* sq) const {
  return mirror_full(full) != full || rest_rank<true>(sq) >= rest;
}

bool Indexer::unrank(std::uint64_t i, std::uint8_t* sq) const {
  const Group& f = groups_[0];
  const std::uint64_t full = f.reduced_to_full[i / rest_size_];
  const std::uint64_t rest0 = i % rest_size_;
  std::uint64_t rest = rest0;
  std::uint64_t digits[kMaxPieces];
  for (std::size_t g = groups_.size() - 1; g >= 1; --g) {
    digits[g] = rest % groups_[g].count;
    rest /= groups_[g].count;
  }
  std::uint64_t occ[2] = {0, 0};
  bool ok = group_place(f, full, sq, occ);
  for (std::size_t g = 1; g < groups_.size(); ++g)
    ok &= group_place(groups_[g], digits[g], sq, occ);
  return ok && canonical(full, rest0, sq);
}

bool Indexer::step(std::uint64_t i, std::uint8_t* sq) const {
  const std::uint64_t j = i + 1;
  const Group& last = groups_.back();
  const std::uint64_t d = j % last.count;
  if (groups_.size() < 2 || d == 0) return unrank(j, sq);  // a carry into earlier groups
  // Only the last group moves: place it over what the other pieces leave free.
  std::uint64_t occ[2] = {0, 0};
  std::uint8_t in_last[kMaxPieces] = {};
  for (int k = 0; k < last.k; ++k) in_last[last.slots[k]] = 1;
  for (int s = 0; s < n_; ++s)
    if (!in_last[s]) occupy(occ, sq[s]);
  // The other groups may overlap each other (an invalid neighbour): then so does this one.
  if (__builtin_popcountll(occ[0]) + __builtin_popcountll(occ[1]) != n_ - last.k) return false;
  if (!group_place(last, d, sq, occ)) return false;
  const Group& f = groups_[0];
  const std::uint64_t full = f.reduced_to_full[j / rest_size_];
  return canonical(full, j % rest_size_, sq);
}

bool Indexer::symmetric(const std::uint8_t* sq) const {
  // Piece by piece kind (a royal group mixes kings and defenders, so comparing a group's squares
  // as one set would call K f7 + G d7 symmetric).
  Board b{};
  for (int i = 0; i < n_; ++i) b[sq[i]] = code(slots_[i].type, slots_[i].color);
  for (int i = 0; i < n_; ++i)
    if (b[mirror(sq[i])] != b[sq[i]]) return false;
  return true;
}

std::string Indexer::scheme() const {
  std::string s;
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    const Group& g = groups_[i];
    if (i) s += " x ";
    if (g.kind == Kind::royal_pair) {
      s += "kings";
    } else {
      const Slot& sl = slots_[g.slots[0]];
      for (int k = 0; k < g.k; ++k) s += piece_letter(sl.type, sl.color);
      s += g.kind == Kind::relative ? fmt::format("/free{}", kSquares - g.before)
                                    : fmt::format("/{}", g.allowed.size());
    }
    s += fmt::format("({}{})", g.count, i == 0 ? ", mirror-reduced" : "");
  }
  return s;
}

}  // namespace retra::xiangqi
