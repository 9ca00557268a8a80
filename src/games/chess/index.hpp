// The chess index of one segment: placements of its pieces up to the board's symmetries, as a
// mixed-radix number over piece groups. Pawnless segments use all 8 symmetries of the square:
// the two kings form one group of 462 classes (the white king in the a1-d1-d4 triangle, the black
// king on or below the a1-h8 diagonal when the white king is on it, never adjacent). Segments with
// pawns use the left-right mirror: the pawns (their ranks fixed by the segment's profile, their
// files free) form the first group, one representative per mirror pair. Then the kings (pawn
// segments), then every group of identical pieces as a combination over the squares still free,
// so pieces never overlap.
//
// Indices that are not a canonical placement (both kings on the a1-h8 diagonal and the first
// group of identical pieces that is not its own mirror image, taken as a set of squares, the
// larger of the two images; a symmetric pawn configuration with the white king on the e-h files;
// adjacent kings in pawn segments) are invalid: unrank reports them, the kernels skip them.
// Legality (the side not to move in check) is the Game's test, not the index's. Thread safety: an
// Indexer is immutable after construction.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "src/games/chess/material.hpp"

namespace retra::chess {

// The 8 symmetries of the board as square maps: 0 identity, then the others; with pawns only 0
// and 1 (the left-right mirror) are used.
int transform(int t, int sq);
inline constexpr int kMirror = 1;  // a <-> h

// C(n, k) for n <= 64, k <= kMaxPieces, from a table.
std::uint64_t binomial_small(int n, int k);

class Indexer {
 public:
  explicit Indexer(const TableKey& key);

  const TableKey& key() const { return key_; }
  const std::vector<Slot>& slots() const { return slots_; }
  std::uint64_t size() const { return size_; }  // placements (per side to move)
  // The index size of Syzygy's scheme for the same table (docs/CHESS.md compares them).
  std::uint64_t syzygy_size() const { return syzygy_size_; }
  std::string scheme() const;
  // The index as a mixed-radix number, most significant digit first: the king pair (pawnless) or
  // the pawn configuration and both kings, then one digit per group of identical pieces.
  std::vector<std::uint64_t> radices() const;

  // The index of the class of a placement (squares by slot, any orientation). *transform_used
  // receives the symmetry that maps the placement to its representative; *symmetric whether the
  // placement is its own image under a non-trivial symmetry.
  std::uint64_t rank(const std::uint8_t* sq, int* transform_used = nullptr,
                     bool* symmetric = nullptr) const;
  // Writes the placement of index i; false when i is not a canonical placement.
  bool unrank(std::uint64_t i, std::uint8_t* sq) const;
  // The placement of index i from sq, which holds the placement of index i - 1: only the last
  // group (in segments of kings and pawns alone, the black king) is placed again, unless its
  // digit wrapped around. Returns what unrank(i) returns.
  bool step(std::uint64_t i, std::uint8_t* sq) const;
  // rank() of a placement known to be its class's representative (no symmetry to find), given
  // its pawn configuration code (pawn_code; ignored without pawns): the unmoves' fast path.
  std::uint64_t rank_canonical(const std::uint8_t* sq, std::uint32_t code) const;
  // The ranks of a representative placement with one piece moved to other squares, for a piece
  // that is alone in its group (not a king, not a pawn) and moves keeping the orientation: the
  // unmoves' hot path. What does not depend on the new square is computed once by relocation();
  // relocated(r, to) is then rank_canonical() of the placement with the piece on `to`.
  struct Relocation {
    std::uint64_t base = 0;  // the terms of the head and of the groups before the piece's
    std::uint64_t mult = 0;  // the piece's group's place value
    Bitboard before = 0;     // squares of the head's pieces and of the groups before
    int later = 0;           // pieces in the groups after
    // The later pieces' terms with the moved piece on a square above all of them (later_sum),
    // and what each term loses when it lands below that piece's square (its coordinate then
    // drops by one: C(c, k) - C(c - 1, k) = C(c - 1, k - 1) times its place value).
    std::uint64_t later_sum = 0;
    std::array<std::uint8_t, kMaxPieces> sq{};
    std::array<std::uint64_t, kMaxPieces> drop{};
    // A king's (king_relocation): the squares it may move to keeping the orientation, whether it
    // is the white one, the other king's square; `before` holds the pawns and `base` the pawn
    // configuration's id.
    Bitboard frame = 0;
    bool white = false;
    int other = 0;
  };
  bool relocatable(int slot) const;
  Relocation relocation(const std::uint8_t* sq, std::uint32_t code, int slot) const;
  std::uint64_t relocated(const Relocation& r, int to) const {
    return r.base +
           static_cast<std::uint64_t>(to - std::popcount(r.before & (bit(to) - 1))) * r.mult +
           later_terms(r, to);
  }

  // The same for a king of a representative placement: relocated ranks come from
  // king_relocated(r, to) for `to` in r.frame, where the placement with the king on `to` is a
  // representative too and not symmetric (the orientation is the pawns', or the white king's
  // off the a1-h8 diagonal). Without pawns the black king may move when the white king is off
  // the diagonal, the white king within the triangle off the diagonal; with pawns either king
  // (the white one to the a-d files when the pawns are their own mirror image).
  Relocation king_relocation(const std::uint8_t* sq, std::uint32_t code, int slot) const;
  std::uint64_t king_relocated(const Relocation& r, int to) const {
    const int wk = r.white ? to : r.other, bk = r.white ? r.other : to;
    std::uint64_t head;
    if (!pawns_) {
      head = king_pair_id(wk, bk);
    } else {
      const auto p = static_cast<std::uint64_t>(pawn_slots_.size());
      const Bitboard o = r.before | bit(wk);
      const auto wc = static_cast<std::uint64_t>(wk - std::popcount(r.before & (bit(wk) - 1)));
      const auto bc = static_cast<std::uint64_t>(bk - std::popcount(o & (bit(bk) - 1)));
      head = (r.base * (64 - p) + wc) * (63 - p) + bc;
    }
    return head * r.mult + later_terms(r, to);
  }

  // Whether rank() would rank the placement as it stands (its orientation is the class's); if so,
  // *code receives its pawn configuration code, for rank_canonical and relocation.
  bool representative(const std::uint8_t* sq, std::uint32_t* code) const {
    bool symmetric;
    return canonical_transform(sq, &symmetric, code) == 0;
  }

 private:
  // The terms of the groups after a relocated piece, with that piece on `to`.
  static std::uint64_t later_terms(const Relocation& r, int to) {
    std::uint64_t x = r.later_sum;
    for (int j = 0; j < r.later; ++j) x -= to < r.sq[j] ? r.drop[j] : 0;
    return x;
  }
  // Fills r's later pieces: those of the groups from `first` on, their coordinates among the
  // squares free of `occ` and of the groups before them.
  void add_later(Relocation& r, const std::uint8_t* sq, Bitboard occ, std::size_t first) const;
  static std::uint64_t king_pair_id(int wk, int bk);
  struct Group {
    int first, count;  // slots [first, first + count): identical pieces
  };
  // The canonical orientation of a placement: the symmetry to apply, and whether it is symmetric.
  // With pawns, *pawn_code receives the representative's pawn configuration code.
  int canonical_transform(const std::uint8_t* sq, bool* symmetric, std::uint32_t* pawn_code) const;
  void pawn_codes(const std::uint8_t* sq, std::uint32_t* code, std::uint32_t* mcode) const;
  // The rank of the first group (king pair, or pawn configuration and kings) of a
  // representative; *occ receives the squares it covers.
  std::uint64_t rank_head(const std::uint8_t* sq, std::uint32_t code, Bitboard* occ) const;
  // Whether a decoded placement is its class's representative; head: the king-pair id or the
  // pawn configuration id.
  bool canonical(const std::uint8_t* sq, std::uint64_t head) const;

  TableKey key_;
  std::vector<Slot> slots_;
  int n_ = 0, bk_slot_ = 0;
  bool pawns_ = false;
  std::vector<Group> groups_;  // the groups after the first (king pair / pawns + kings)
  std::vector<int> group_of_;  // by slot: its group, or -1 (kings, pawns)
  std::vector<std::uint64_t> radix_;
  // place_[g]: the product of the radices of groups g, g + 1, ...: the head's place value is
  // place_[0], group g's is place_[g + 1].
  std::vector<std::uint64_t> place_;
  std::uint64_t size_ = 0, syzygy_size_ = 0;
  std::uint64_t head_divisor_ = 1;  // index / head_divisor_: the king pair or pawn configuration
  // Pawn segments: the pawn slots, their file configurations (one per mirror pair, overlaps
  // excluded) and the canonical id of every configuration code (-1: not canonical).
  std::vector<int> pawn_slots_;
  std::vector<std::uint32_t> config_code_;       // by id: the configuration's code
  std::vector<std::int32_t> config_id_;          // by code: its id, or -1
  std::vector<std::uint32_t> config_symmetric_;  // by id: 1 if its own mirror image
  std::vector<std::uint32_t> code_radix_;        // mixed radix of the code, per pawn class
  struct PawnClass {
    Color color;
    int rank, count, first_slot;
  };
  std::vector<PawnClass> classes_;
};

}  // namespace retra::chess
