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

#include "retra/games/xiangqi/material.hpp"

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

  // The index of the mirror class of a valid placement (squares by slot). *mirrored tells whether
  // the class representative is the mirror image of the given placement, *symmetric whether the
  // placement is its own mirror image (both come free with the ranking).
  std::uint64_t rank(const std::uint8_t* sq, bool* mirrored = nullptr,
                     bool* symmetric = nullptr) const;
  // Writes the placement of index i; false when i is not a canonical valid placement.
  bool unrank(std::uint64_t i, std::uint8_t* sq) const;
  // The placement equals its mirror image (every group maps onto itself).
  bool symmetric(const std::uint8_t* sq) const;

 private:
  enum class Kind { royal_pair, absolute, relative };
  struct Royal {  // one king with its guards and ministers
    int g = 0, m = 0;
    std::array<std::int8_t, kSquares> kpt{}, gpt{}, mpt{};  // square -> point number, or -1
    std::uint64_t gn = 1, mn = 1;                           // C(5, g), C(7, m)
    std::vector<std::array<std::uint8_t, 5>> squares;       // per placement id: K, G.., M..
    std::vector<std::int32_t> key_to_id;
    std::vector<std::uint32_t> mirror_id;
  };
  struct Group {
    Kind kind;
    std::vector<int> slots;
    std::vector<std::uint8_t> allowed;           // absolute: the squares it may use
    std::array<std::int16_t, kSquares> where{};  // square -> position in allowed, or -1
    int k = 0;
    int before = 0;                              // pieces placed by earlier groups
    std::uint64_t full = 0;                      // ranks before reduction
    std::uint64_t count = 0;                     // ranks in the index
    std::vector<std::uint32_t> reduced_to_full;  // first group only
    std::vector<std::int32_t> full_to_reduced;
  };

  std::uint64_t group_rank(const Group& g, const std::uint8_t* sq,
                           const std::uint64_t occ[2]) const;
  bool group_place(const Group& g, std::uint64_t r, std::uint8_t* sq, std::uint64_t occ[2]) const;
  std::uint64_t rest_rank(const std::uint8_t* sq) const;
  std::uint64_t first_full(const std::uint8_t* sq) const;
  void mirror_all(const std::uint8_t* in, std::uint8_t* out) const;
  std::uint32_t royal_id(int c, const std::uint8_t* sq) const;

  Material material_;
  std::vector<Slot> slots_;
  int n_ = 0;
  Royal royal_[2];
  std::vector<Group> groups_;
  std::uint64_t size_ = 0, rest_size_ = 0, paper_size_ = 0;
};

}  // namespace retra::xiangqi
