// The xiangqi index of one endgame: positions of one side to move up to mirror symmetry (the
// e-file), as a mixed-radix number over piece groups. Identical pieces form one group ranked as a
// combination; each king forms one group with its guards and ministers; both kings' groups are
// ranked together as one "royal pair". The first group is mirror-reduced (one representative per
// pair of mirror images); board-wide groups (rooks, knights, cannons) placed after it are ranked
// over the squares still free, so they never overlap earlier pieces. Of the group orders tried,
// the smallest index is used (docs/XIANGQI.md compares it with the paper's for all 151 endgames).
//
// Indices that are not a canonical placement (pieces overlapping, or the mirror duplicate of a
// symmetric first group) are invalid: unrank reports them, the kernels skip them.
// Thread safety: an Indexer is immutable after construction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/games/xiangqi/material.hpp"

namespace retra::xiangqi {

class Indexer {
 public:
  explicit Indexer(const Material& m);

  const Material& material() const { return material_; }
  const std::vector<Slot>& slots() const { return slots_; }
  std::uint64_t size() const { return size_; }  // per side to move
  // The index size of the paper's scheme (Fang et al. 2.5) for the same endgame.
  std::uint64_t paper_size() const { return paper_size_; }
  std::string scheme() const;  // e.g. "royal pair/2 x P55 x R|88"
  // The index as a mixed-radix number: one digit per group, most significant first.
  std::vector<std::uint64_t> radices() const {
    std::vector<std::uint64_t> r;
    for (const auto& g : groups_) r.push_back(g.count);
    return r;
  }

  // The index of the mirror class of a valid placement (squares by slot). *mirrored tells whether
  // the class representative is the mirror image of the given placement, *symmetric whether the
  // placement is its own mirror image (both come free with the ranking).
  std::uint64_t rank(const std::uint8_t* sq, bool* mirrored = nullptr,
                     bool* symmetric = nullptr) const;
  // Ranking many placements that differ from one base placement only in one slot (the parents
  // of one position by one piece's unmoves): begin() ranks everything the slot cannot change
  // once, rank_moved() then ranks only the slot's group and the groups placed after it. Same
  // results as rank(). A Partial is a small value owned by the caller.
  struct Partial {
    std::uint64_t head = 0;     // index of the groups before the slot's, scaled
    std::uint64_t occ[2] = {};  // squares of those groups, oriented
    int group = 0;              // the slot's group
    bool mirror = false;        // orientation of every placement ranked through this Partial
    bool full = true;           // the slot moves the first group, or it is its own mirror image
    // A royal piece of a royal-pair first group: the other colour's royal id (and mirror id)
    // stays, only the moved colour's is recomputed.
    bool royal = false;
    int colour = 0;
    std::uint32_t other_id = 0, other_mid = 0;
  };
  Partial begin(const std::uint8_t* sq, int slot) const;
  std::uint64_t rank_moved(const Partial& pt, const std::uint8_t* sq, bool* mirrored,
                           bool* symmetric) const;
  // Writes the placement of index i; false when i is not a canonical valid placement.
  bool unrank(std::uint64_t i, std::uint8_t* sq) const;
  // The placement of index i + 1 from sq, which holds what unrank (or step) wrote for i: only
  // the last group moves, except on a carry. Same result as unrank(i + 1, sq).
  bool step(std::uint64_t i, std::uint8_t* sq) const;
  // The placement equals its mirror image (every group maps onto itself).
  bool symmetric(const std::uint8_t* sq) const;

 private:
  enum class Kind { royal_pair, absolute, relative };
  struct Royal {  // one king with its guards and ministers
    int g = 0, m = 0;
    std::array<std::int8_t, kSquares> kpt{}, gpt{}, mpt{};  // square -> point number, or -1
    std::uint64_t gn = 1, mn = 1;                           // C(5, g), C(7, m)
    // The key (king point, guard subset rank, minister subset rank) as a sum of table entries:
    // kw[king square] + gw[guard points] + mw[minister points], no sort and no multiply.
    std::array<std::uint32_t, kSquares> kw{};
    std::array<std::uint32_t, 64> gw{}, mw{};          // [a * 8 + b] for pairs, [a] for one piece
    std::vector<std::array<std::uint8_t, 5>> squares;  // per placement id: K, G.., M..
    std::vector<std::int32_t> key_to_id;
    std::vector<std::uint32_t> mirror_id;
  };
  // Slots and tables of one group; the ranking loops read only fixed-size members.
  struct Group {
    Kind kind;
    int k = 0;
    int before = 0;  // pieces placed by earlier groups
    std::array<std::uint8_t, kMaxPieces> slots{};
    std::vector<std::uint8_t> allowed;             // absolute: the squares it may use
    std::array<std::int16_t, kSquares> where{};    // square -> position in allowed, or -1
    std::array<std::int16_t, kSquares> where_m{};  // where[mirror(square)]
    std::uint64_t full = 0;                        // ranks before reduction
    std::uint64_t count = 0;                       // ranks in the index
    std::vector<std::uint32_t> reduced_to_full;    // first group only
    std::vector<std::int32_t> full_to_reduced;
    std::vector<std::uint32_t> mirror_full;  // first absolute group: full rank of the mirror
  };

  template <bool M>
  std::uint64_t group_rank(const Group& g, const std::uint8_t* sq,
                           const std::uint64_t occ[2]) const;
  bool group_place(const Group& g, std::uint64_t r, std::uint8_t* sq, std::uint64_t occ[2]) const;
  template <bool M>
  std::uint64_t rest_rank(const std::uint8_t* sq) const;
  template <bool M>
  std::uint64_t tail_rank(std::size_t from, const std::uint8_t* sq, std::uint64_t occ0,
                          std::uint64_t occ1) const;
  std::uint64_t first_full(const std::uint8_t* sq) const;
  std::uint64_t mirror_full(std::uint64_t f) const;
  std::uint32_t royal_id(int c, const std::uint8_t* sq) const;
  bool canonical(std::uint64_t full, std::uint64_t rest, const std::uint8_t* sq) const;
  std::uint64_t finish_rank(std::uint64_t f, std::uint64_t fm, const std::uint8_t* sq,
                            bool* mirrored, bool* symmetric) const;

  Material material_;
  std::vector<Slot> slots_;
  int n_ = 0;
  Royal royal_[2];
  std::vector<Group> groups_;
  std::array<std::uint8_t, kMaxPieces> group_of_{};  // slot -> its group
  std::uint64_t size_ = 0, rest_size_ = 0, paper_size_ = 0;
};

}  // namespace retra::xiangqi
