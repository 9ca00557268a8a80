// The chess index (index.hpp). Thread safety: an Indexer is immutable after construction.
#include "src/games/chess/index.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

#include <fmt/format.h>

#include "src/util/binomial.hpp"

namespace retra::chess {

namespace {

// t bit 2: swap file and rank (the a1-h8 diagonal); bit 0: mirror files; bit 1: mirror ranks.
constexpr int apply_slow(int t, int sq) {
  int f = file_of(sq), r = rank_of(sq);
  if (t & 4) std::swap(f, r);
  if (t & 1) f = 7 - f;
  if (t & 2) r = 7 - r;
  return square(f, r);
}

struct TransformTable {
  std::uint8_t sq[8][64];
};
constexpr TransformTable make_transforms() {
  TransformTable t{};
  for (int k = 0; k < 8; ++k)
    for (int s = 0; s < 64; ++s) t.sq[k][s] = static_cast<std::uint8_t>(apply_slow(k, s));
  return t;
}
constexpr TransformTable kTransforms = make_transforms();
inline int apply(int t, int sq) { return kTransforms.sq[t][sq]; }

struct KingPairs {
  std::int16_t id[64][64];
  std::uint8_t white[462], black[462];
  int count = 0;
};

constexpr bool in_triangle(int sq) { return file_of(sq) <= 3 && rank_of(sq) <= file_of(sq); }
constexpr bool on_diagonal(int sq) { return file_of(sq) == rank_of(sq); }
// The squares where the white king alone fixes the orientation: b1 c1 d1 c2 d2 d3.
constexpr Bitboard kTriangleOffDiagonal = [] {
  Bitboard t = 0;
  for (int s = 0; s < 64; ++s)
    if (in_triangle(s) && !on_diagonal(s)) t |= bit(s);
  return t;
}();
constexpr bool above_diagonal(int sq) { return rank_of(sq) > file_of(sq); }
// The mirror image in the a1-h8 diagonal.
constexpr int transposed(int sq) { return file_of(sq) * 8 + rank_of(sq); }
// A set of squares against its mirror image in the a1-h8 diagonal: -1 if the set is smaller as a
// number (for one square: below the diagonal), 1 if larger, 0 if the set is its own image. Sets,
// not squares in slot order: identical pieces come in any order, and a pair of them can be each
// other's images (bishops on a3 and c1) with neither on the diagonal.
constexpr int against_transpose(Bitboard set) {
  Bitboard t = 0;
  for (Bitboard m = set; m; m &= m - 1) t |= bit(transposed(std::countr_zero(m)));
  return set == t ? 0 : set < t ? -1 : 1;
}

constexpr KingPairs make_king_pairs() {
  KingPairs k{};
  for (auto& row : k.id)
    for (auto& x : row) x = -1;
  for (int w = 0; w < 64; ++w) {
    if (!in_triangle(w)) continue;
    for (int b = 0; b < 64; ++b) {
      if (b == w || (king_attacks(w) & bit(b))) continue;
      if (on_diagonal(w) && above_diagonal(b)) continue;
      k.id[w][b] = static_cast<std::int16_t>(k.count);
      k.white[k.count] = static_cast<std::uint8_t>(w);
      k.black[k.count] = static_cast<std::uint8_t>(b);
      ++k.count;
    }
  }
  return k;
}
constexpr KingPairs kKingPairs = make_king_pairs();
static_assert(kKingPairs.count == 462, "the 462 classes of legal king pairs");

// C(n, k) for n <= 64, k <= 7, from a table (the ranking's hot path).
struct BinomialTable {
  std::uint64_t c[65][kMaxPieces + 1];
};
constexpr BinomialTable make_binomials() {
  BinomialTable t{};
  for (unsigned n = 0; n <= 64; ++n)
    for (unsigned k = 0; k <= kMaxPieces; ++k) t.c[n][k] = binomial(n, k);
  return t;
}
constexpr BinomialTable kBinomial = make_binomials();

// Insertion sort of a few values (faster than std::sort for the k <= 7 of a piece group).
void sort_small(std::uint8_t* a, int k) {
  for (int i = 1; i < k; ++i)
    for (int j = i; j > 0 && a[j - 1] > a[j]; --j) std::swap(a[j - 1], a[j]);
}

// Colex rank of k squares among the squares not in `occ` (their positions when the occupied ones
// are left out), and the inverse.
std::uint64_t rank_combination(const std::uint8_t* sq, int k, Bitboard occ) {
  std::uint8_t c[kMaxPieces];
  for (int i = 0; i < k; ++i)
    c[i] = static_cast<std::uint8_t>(sq[i] - std::popcount(occ & (bit(sq[i]) - 1)));
  sort_small(c, k);
  std::uint64_t r = 0;
  for (int i = 0; i < k; ++i) r += kBinomial.c[c[i]][i + 1];
  return r;
}

// The n-th square (from 0) not in occ.
inline int nth_free(int n, Bitboard occ) {
#ifdef __BMI2__
  return std::countr_zero(__builtin_ia32_pdep_di(std::uint64_t{1} << n, ~occ));
#else
  Bitboard free = ~occ;
  for (int i = 0; i < n; ++i) free &= free - 1;
  return std::countr_zero(free);
#endif
}

void unrank_combination(std::uint64_t r, int k, Bitboard occ, std::uint8_t* out) {
  for (int i = k; i >= 1; --i) {
    unsigned c;
    if (i == 1) {
      c = static_cast<unsigned>(r);
    } else {
      // The largest c with C(c, i) <= r, by bisection over [i - 1, 64).
      unsigned lo = static_cast<unsigned>(i - 1), hi = 64;
      while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if (kBinomial.c[mid][i] <= r)
          lo = mid;
        else
          hi = mid;
      }
      c = lo;
    }
    r -= kBinomial.c[c][i];
    out[i - 1] = static_cast<std::uint8_t>(nth_free(static_cast<int>(c), occ));
  }
}

std::uint64_t files_code(const std::vector<int>& files) {
  std::uint64_t r = 0;
  for (std::size_t i = 0; i < files.size(); ++i) r += kBinomial.c[files[i]][i + 1];
  return r;
}

// Per square, the transform(s) that bring it into the a1-d1-d4 triangle: one, or for a square
// that lands on the diagonal two (they differ by the diagonal flip); -1 for none.
struct CanonicalTable {
  std::int8_t t[64][2];
};
constexpr CanonicalTable make_canonical() {
  CanonicalTable c{};
  for (int s = 0; s < 64; ++s) {
    c.t[s][0] = c.t[s][1] = -1;
    for (int t = 0; t < 8; ++t)
      if (in_triangle(apply_slow(t, s)))
        c.t[s][c.t[s][0] < 0 ? 0 : 1] = static_cast<std::int8_t>(t);
  }
  return c;
}
constexpr CanonicalTable kCanonical = make_canonical();

}  // namespace

int transform(int t, int sq) { return apply(t, sq); }
std::uint64_t binomial_small(int n, int k) { return kBinomial.c[n][k]; }

Indexer::Indexer(const TableKey& key)
    : key_(key),
      slots_(layout(key)),
      n_(static_cast<int>(slots_.size())),
      bk_slot_(key.material.pieces(white)) {
  pawns_ = key.material.has_pawns();
  // Groups of identical non-king, non-pawn pieces in slot order.
  for (int i = 0; i < n_;) {
    int j = i + 1;
    while (j < n_ && slots_[j].color == slots_[i].color && slots_[j].type == slots_[i].type &&
           slots_[j].rank == slots_[i].rank)
      ++j;
    if (slots_[i].type != king && slots_[i].type != pawn) groups_.push_back({i, j - i});
    i = j;
  }
  group_of_.assign(static_cast<std::size_t>(n_), -1);
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (int k = groups_[g].first; k < groups_[g].first + groups_[g].count; ++k)
      group_of_[static_cast<std::size_t>(k)] = static_cast<int>(g);
  int placed;
  std::uint64_t size;
  if (!pawns_) {
    size = 462;
    placed = 2;
  } else {
    // Pawn classes: one per (colour, rank), its pawns a combination of files.
    for (int i = 0; i < n_; ++i)
      if (slots_[i].type == pawn) pawn_slots_.push_back(i);
    for (std::size_t i = 0; i < pawn_slots_.size();) {
      std::size_t j = i + 1;
      const Slot& s = slots_[pawn_slots_[i]];
      while (j < pawn_slots_.size() && slots_[pawn_slots_[j]].color == s.color &&
             slots_[pawn_slots_[j]].rank == s.rank)
        ++j;
      classes_.push_back({s.color, s.rank, static_cast<int>(j - i), pawn_slots_[i]});
      i = j;
    }
    std::uint32_t codes = 1;
    for (const auto& c : classes_) {
      code_radix_.push_back(codes);
      codes *= static_cast<std::uint32_t>(binomial(8, static_cast<unsigned>(c.count)));
    }
    config_id_.assign(codes, -1);
    auto files_of = [&](std::uint32_t code, int cls, std::vector<int>& files) {
      const std::uint32_t v =
          code / code_radix_[cls] %
          static_cast<std::uint32_t>(binomial(8, static_cast<unsigned>(classes_[cls].count)));
      std::uint8_t f[8];
      unrank_combination(v, classes_[cls].count, 0, f);
      files.assign(f, f + classes_[cls].count);
    };
    auto mirror_code = [&](std::uint32_t code, bool* overlap) {
      std::uint32_t m = 0;
      Bitboard occ = 0;
      std::vector<int> files;
      for (std::size_t cls = 0; cls < classes_.size(); ++cls) {
        files_of(code, static_cast<int>(cls), files);
        for (int f : files) {
          const Bitboard b = bit(square(f, classes_[cls].rank));
          if (occ & b) *overlap = true;
          occ |= b;
        }
        for (int& f : files) f = 7 - f;
        std::sort(files.begin(), files.end());
        m += static_cast<std::uint32_t>(files_code(files)) * code_radix_[cls];
      }
      return m;
    };
    for (std::uint32_t code = 0; code < codes; ++code) {
      bool overlap = false;
      const std::uint32_t m = mirror_code(code, &overlap);
      if (overlap || m < code) continue;
      config_id_[code] = static_cast<std::int32_t>(config_code_.size());
      config_code_.push_back(code);
      config_symmetric_.push_back(m == code);
    }
    placed = static_cast<int>(pawn_slots_.size());
    size = config_code_.size() * static_cast<std::uint64_t>(64 - placed) *
           static_cast<std::uint64_t>(63 - placed);
    placed += 2;
  }
  for (const Group& g : groups_) {
    const std::uint64_t r =
        binomial(static_cast<unsigned>(64 - placed), static_cast<unsigned>(g.count));
    radix_.push_back(r);
    size *= r;
    placed += g.count;
  }
  size_ = size;
  place_.assign(groups_.size() + 1, 1);
  for (std::size_t g = groups_.size(); g-- > 0;) place_[g] = place_[g + 1] * radix_[g];
  head_divisor_ = size_ / (pawns_ ? config_code_.size() : 462);

  // Syzygy's scheme: pawnless 462 x the other groups over the 62 squares the kings leave; with
  // pawns the leading colour's pawns (the colour with fewer pawns, at least one) with the leading
  // pawn on files a-d, then the other colour's pawns over the remaining pawn squares, then every
  // other group (the kings singly) over the squares left.
  const Material& m = key.material;
  if (!pawns_) {
    std::uint64_t s = 462;
    int left = 62;
    for (const Group& g : groups_) {
      s *= binomial(static_cast<unsigned>(left), static_cast<unsigned>(g.count));
      left -= g.count;
    }
    syzygy_size_ = s;
  } else {
    int lead = m.count[0][pawn], other = m.count[1][pawn];
    if (other && (!lead || other < lead)) std::swap(lead, other);
    std::uint64_t lp = 0;
    for (unsigned t = 1; t < 48; t += 2) lp += binomial(t, static_cast<unsigned>(lead - 1));
    std::uint64_t s = lp * binomial(static_cast<unsigned>(48 - lead), static_cast<unsigned>(other));
    int left = 64 - lead - other;
    s *= static_cast<std::uint64_t>(left) * static_cast<std::uint64_t>(left - 1);
    left -= 2;
    for (const Group& g : groups_) {
      s *= binomial(static_cast<unsigned>(left), static_cast<unsigned>(g.count));
      left -= g.count;
    }
    syzygy_size_ = s;
  }
}

std::string Indexer::scheme() const {
  std::string s = pawns_ ? fmt::format("pawns/mirror {} x K{} x K{}", config_code_.size(),
                                       64 - pawn_slots_.size(), 63 - pawn_slots_.size())
                         : std::string("KK/8 462");
  for (std::size_t g = 0; g < groups_.size(); ++g)
    s += fmt::format(" x {}{}|{}",
                     piece_letter(slots_[groups_[g].first].type, slots_[groups_[g].first].color),
                     groups_[g].count, radix_[g]);
  return s;
}

// The configuration code of the pawns' files (and of their mirror image), per pawn class.
void Indexer::pawn_codes(const std::uint8_t* sq, std::uint32_t* code, std::uint32_t* mcode) const {
  *code = *mcode = 0;
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    const int k = classes_[c].count;
    const std::uint8_t* const s = sq + classes_[c].first_slot;
    // One or two pawns of a class (all but three or more pawns of one colour): the colex ranks
    // in closed form, C(a, 1) = a and C(b, 2) = b (b - 1) / 2, without rank_combination's sort.
    // Every rank in a pawn table comes here, and the general path was most of a rank's time.
    if (k == 1) {
      const auto a = static_cast<std::uint32_t>(file_of(s[0]));
      *code += a * code_radix_[c];
      *mcode += (7 - a) * code_radix_[c];
      continue;
    }
    if (k == 2) {
      const auto pair = [](std::uint32_t lo, std::uint32_t hi) { return lo + hi * (hi - 1) / 2; };
      const auto x = static_cast<std::uint32_t>(file_of(s[0]));
      const auto y = static_cast<std::uint32_t>(file_of(s[1]));
      const std::uint32_t a = std::min(x, y), b = std::max(x, y);
      *code += pair(a, b) * code_radix_[c];
      *mcode += pair(7 - b, 7 - a) * code_radix_[c];  // the mirror image's files, ascending
      continue;
    }
    std::uint8_t f[kMaxPieces], m[kMaxPieces];
    for (int i = 0; i < k; ++i) {
      f[i] = static_cast<std::uint8_t>(file_of(s[i]));
      m[i] = static_cast<std::uint8_t>(7 - f[i]);
    }
    *code += static_cast<std::uint32_t>(rank_combination(f, k, 0)) * code_radix_[c];
    *mcode += static_cast<std::uint32_t>(rank_combination(m, k, 0)) * code_radix_[c];
  }
}

int Indexer::canonical_transform(const std::uint8_t* sq, bool* symmetric,
                                 std::uint32_t* pawn_code) const {
  *symmetric = false;
  if (pawns_) {
    // The pawn configuration decides; a symmetric one is decided by the white king's file.
    std::uint32_t code, mcode;
    pawn_codes(sq, &code, &mcode);
    const int t = code != mcode ? (code < mcode ? 0 : kMirror) : file_of(sq[0]) <= 3 ? 0 : kMirror;
    *pawn_code = t == 0 ? code : mcode;  // the representative's configuration
    return t;
  }
  const int first = kCanonical.t[sq[0]][0], second = kCanonical.t[sq[0]][1];
  if (second < 0) return first;
  // Two transforms put the white king on the same diagonal square; they differ by the diagonal
  // flip. The black king, then every group of identical pieces in slot order (as a set of
  // squares), decides: the first one that is not its own mirror image must be the smaller of the
  // two (for one piece: below the diagonal).
  int d = against_transpose(bit(apply(first, sq[bk_slot_])));
  for (std::size_t g = 0; g < groups_.size() && d == 0; ++g) {
    Bitboard set = 0;
    for (int k = groups_[g].first; k < groups_[g].first + groups_[g].count; ++k)
      set |= bit(apply(first, sq[k]));
    d = against_transpose(set);
  }
  if (d == 0) *symmetric = true;
  return d == 1 ? second : first;
}

std::uint64_t Indexer::rank_head(const std::uint8_t* sq, std::uint32_t code, Bitboard* occ) const {
  if (!pawns_) {
    *occ = bit(sq[0]) | bit(sq[bk_slot_]);
    return static_cast<std::uint64_t>(kKingPairs.id[sq[0]][sq[bk_slot_]]);
  }
  Bitboard o = 0;
  for (int s : pawn_slots_) o |= bit(sq[s]);
  const int p = static_cast<int>(pawn_slots_.size());
  const int wk = sq[0] - std::popcount(o & (bit(sq[0]) - 1));
  o |= bit(sq[0]);
  const int bk = sq[bk_slot_] - std::popcount(o & (bit(sq[bk_slot_]) - 1));
  *occ = o | bit(sq[bk_slot_]);
  return (static_cast<std::uint64_t>(config_id_[code]) * static_cast<std::uint64_t>(64 - p) +
          static_cast<std::uint64_t>(wk)) *
             static_cast<std::uint64_t>(63 - p) +
         static_cast<std::uint64_t>(bk);
}

std::uint64_t Indexer::rank_canonical(const std::uint8_t* sq, std::uint32_t code) const {
  Bitboard occ;
  std::uint64_t r = rank_head(sq, code, &occ);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& gr = groups_[g];
    if (gr.count == 1) {  // a single piece: its square among the free ones
      const int s = sq[gr.first];
      r = r * radix_[g] + static_cast<std::uint64_t>(s - std::popcount(occ & (bit(s) - 1)));
      occ |= bit(s);
      continue;
    }
    r = r * radix_[g] + rank_combination(sq + gr.first, gr.count, occ);
    for (int i = 0; i < gr.count; ++i) occ |= bit(sq[gr.first + i]);
  }
  return r;
}

bool Indexer::relocatable(int slot) const {
  const int g = group_of_[static_cast<std::size_t>(slot)];
  return g >= 0 && groups_[static_cast<std::size_t>(g)].count == 1;
}

Indexer::Relocation Indexer::relocation(const std::uint8_t* sq, std::uint32_t code,
                                        int slot) const {
  assert(relocatable(slot));
  const std::size_t moved = static_cast<std::size_t>(group_of_[static_cast<std::size_t>(slot)]);
  Relocation r;
  Bitboard occ;
  const std::uint64_t head_rank = rank_head(sq, code, &occ);
  const std::uint64_t* mult = place_.data();
  r.base = head_rank * mult[0];
  for (std::size_t g = 0; g < moved; ++g) {
    const Group& gr = groups_[g];
    r.base += rank_combination(sq + gr.first, gr.count, occ) * mult[g + 1];
    for (int i = 0; i < gr.count; ++i) occ |= bit(sq[gr.first + i]);
  }
  r.before = occ;
  r.mult = mult[moved + 1];
  add_later(r, sq, occ, moved + 1);
  return r;
}

// The later groups' pieces: their coordinates among the free squares without the moved piece
// (the piece on a square below lowers one by one), and their place in their group's ascending
// order, which that keeps: the free square it takes lies strictly between two coordinates.
void Indexer::add_later(Relocation& r, const std::uint8_t* sq, Bitboard occ,
                        std::size_t first) const {
  const std::uint64_t* mult = place_.data();
  for (std::size_t g = first; g < groups_.size(); ++g) {
    const Group& gr = groups_[g];
    std::uint8_t c[kMaxPieces];
    for (int i = 0; i < gr.count; ++i) {
      const int s = sq[gr.first + i];
      c[i] = static_cast<std::uint8_t>(s - std::popcount(occ & (bit(s) - 1)));
    }
    for (int i = 0; i < gr.count; ++i) {
      int below = 0;
      for (int j = 0; j < gr.count; ++j) below += c[j] < c[i];
      const std::size_t l = static_cast<std::size_t>(r.later++);
      r.sq[l] = sq[gr.first + i];
      const int k = below + 1;
      r.later_sum += (k == 1 ? c[i] : binomial_small(c[i], k)) * mult[g + 1];
      r.drop[l] = (k == 1 ? 1 : binomial_small(c[i] - 1, k - 1)) * mult[g + 1];
    }
    for (int i = 0; i < gr.count; ++i) occ |= bit(sq[gr.first + i]);
  }
}

std::uint64_t Indexer::king_pair_id(int wk, int bk) {
  return static_cast<std::uint64_t>(kKingPairs.id[wk][bk]);
}

Indexer::Relocation Indexer::king_relocation(const std::uint8_t* sq, std::uint32_t code,
                                             int slot) const {
  assert(slot == 0 || slot == bk_slot_);
  Relocation r;
  r.white = slot == 0;
  r.other = sq[r.white ? bk_slot_ : 0];
  Bitboard pawns = 0;
  for (int s : pawn_slots_) pawns |= bit(sq[s]);
  r.before = pawns;
  r.mult = place_[0];
  if (pawns_) {
    r.base = static_cast<std::uint64_t>(config_id_[code]);
    // A symmetric pawn configuration leaves the orientation to the white king's file.
    r.frame = r.white && config_symmetric_[r.base] ? 0x0f0f0f0f0f0f0f0full : ~Bitboard{0};
  } else {
    r.frame = r.white ? kTriangleOffDiagonal : (on_diagonal(sq[0]) ? 0 : ~Bitboard{0});
  }
  add_later(r, sq, pawns | bit(r.other), 0);
  return r;
}

std::uint64_t Indexer::rank(const std::uint8_t* sq, int* transform_used, bool* symmetric) const {
  bool sym = false;
  std::uint32_t code = 0;  // with pawns: the representative's pawn configuration, computed once
  const int t = canonical_transform(sq, &sym, &code);
  if (transform_used) *transform_used = t;
  if (symmetric) *symmetric = sym;
  if (t == 0) return rank_canonical(sq, code);
  std::uint8_t c[kMaxPieces];
  for (int i = 0; i < n_; ++i) c[i] = static_cast<std::uint8_t>(apply(t, sq[i]));
  return rank_canonical(c, code);
}

// Whether a decoded placement is the canonical one of its class.
bool Indexer::canonical(const std::uint8_t* sq, std::uint64_t head) const {
  if (pawns_) {
    if (king_attacks(sq[0]) & bit(sq[bk_slot_])) return false;
    return !config_symmetric_[head] || file_of(sq[0]) <= 3;
  }
  if (!on_diagonal(sq[0]) || !on_diagonal(sq[bk_slot_])) return true;
  // canonical_transform's rule: the first group that is not its own mirror image is the smaller.
  for (const Group& g : groups_) {
    Bitboard set = 0;
    for (int k = g.first; k < g.first + g.count; ++k) set |= bit(sq[k]);
    if (const int d = against_transpose(set)) return d < 0;
  }
  return true;
}

std::vector<std::uint64_t> Indexer::radices() const {
  std::vector<std::uint64_t> r;
  if (pawns_) {
    const auto p = static_cast<std::uint64_t>(pawn_slots_.size());
    r = {config_code_.size(), 64 - p, 63 - p};
  } else {
    r = {462};
  }
  r.insert(r.end(), radix_.begin(), radix_.end());
  return r;
}

bool Indexer::unrank(std::uint64_t i, std::uint8_t* sq) const {
  assert(i < size_);
  // Peel the groups off from the last one.
  std::uint64_t rem[kMaxPieces];
  for (std::size_t g = groups_.size(); g-- > 0;) {
    rem[g] = i % radix_[g];
    i /= radix_[g];
  }
  Bitboard occ;
  std::uint64_t head = i;
  if (!pawns_) {
    sq[0] = kKingPairs.white[i];
    sq[bk_slot_] = kKingPairs.black[i];
    occ = bit(sq[0]) | bit(sq[bk_slot_]);
  } else {
    const int p = static_cast<int>(pawn_slots_.size());
    const std::uint64_t bk = i % static_cast<std::uint64_t>(63 - p);
    i /= static_cast<std::uint64_t>(63 - p);
    const std::uint64_t wk = i % static_cast<std::uint64_t>(64 - p);
    i /= static_cast<std::uint64_t>(64 - p);
    head = i;
    const std::uint32_t code = config_code_[i];
    occ = 0;
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const std::uint32_t v =
          code / code_radix_[c] % static_cast<std::uint32_t>(kBinomial.c[8][classes_[c].count]);
      std::uint8_t f[kMaxPieces];
      unrank_combination(v, classes_[c].count, 0, f);
      for (int k = 0; k < classes_[c].count; ++k) {
        const int s = square(f[k], classes_[c].rank);
        sq[classes_[c].first_slot + k] = static_cast<std::uint8_t>(s);
        occ |= bit(s);
      }
    }
    sq[0] = static_cast<std::uint8_t>(nth_free(static_cast<int>(wk), occ));
    occ |= bit(sq[0]);
    sq[bk_slot_] = static_cast<std::uint8_t>(nth_free(static_cast<int>(bk), occ));
    occ |= bit(sq[bk_slot_]);
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& gr = groups_[g];
    unrank_combination(rem[g], gr.count, occ, sq + gr.first);
    for (int k = 0; k < gr.count; ++k) occ |= bit(sq[gr.first + k]);
  }
  return canonical(sq, head);
}

bool Indexer::step(std::uint64_t i, std::uint8_t* sq) const {
  // Only the last digit's pieces change unless that digit wrapped around: re-place just them.
  // The last digit is the last group, or in segments of kings and pawns alone (KPvKP, KPPvKP,
  // KPPPvK) the black king; unranking those from scratch was a tenth of KPvKP's build.
  if (groups_.empty() && !pawns_) return unrank(i, sq);
  const int first = groups_.empty() ? bk_slot_ : groups_.back().first;
  const int count = groups_.empty() ? 1 : groups_.back().count;
  Bitboard occ = 0;
  for (int k = 0; k < n_; ++k)
    if (k < first || k >= first + count) occ |= bit(sq[k]);
  if (count == 1) {
    // One piece: the next free square after its current one (its digit went up by one), if any
    // (no division: this runs once per position in every kernel's initialization).
    const Bitboard above = ~((bit(sq[first]) << 1) - 1);
    const Bitboard next = ~occ & above;
    if (!next) return unrank(i, sq);
    sq[first] = static_cast<std::uint8_t>(std::countr_zero(next));
  } else {
    const std::uint64_t last = i % radix_.back();
    if (last == 0) return unrank(i, sq);
    unrank_combination(last, count, occ, sq + first);
  }
  // Only segments with pawns need the head (their configuration id) to decide canonicity.
  return canonical(sq, pawns_ ? i / head_divisor_ : 0);
}

}  // namespace retra::chess
