// The order in which a segment stores its entries: the game's index read as a mixed-radix number
// (one digit per piece group, side to move, ...) whose digits the file may store in another order
// of significance, so that the digit that varies fastest on disk is the one that compresses best.
// Thread safety: immutable after construction; every member is reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "retra/error.hpp"

namespace retra::format {

inline constexpr std::size_t kMaxOrderDigits = 16;

// radices[j]: digit j of the index (j = 0 most significant); the index is
// sum_j digit_j * prod_{l > j} radices[l]. stored: the digits from the most to the least
// significant on disk, a permutation of 0..k-1. The identity permutation (or no digits at all)
// stores entries in index order.
//
// Example, 2 x 55 x 83 (side, pawn, cannon), stored {1, 0, 2}: the pawn digit is the most
// significant on disk, so each run of 2 x 83 stored entries holds one pawn square's positions.
class EntryOrder {
 public:
  EntryOrder() = default;
  // Checks: at most kMaxOrderDigits digits, each radix >= 1, their product == entries (no
  // overflow), stored a permutation of the digits.
  static Result<EntryOrder> make(std::vector<std::uint64_t> radices,
                                 std::vector<std::uint8_t> stored, std::uint64_t entries);

  const std::vector<std::uint64_t>& radices() const noexcept { return radices_; }
  const std::vector<std::uint8_t>& stored() const noexcept { return stored_; }
  bool identity() const noexcept { return identity_; }
  std::size_t digits() const noexcept { return radices_.size(); }

  // Where index i lies on disk (k divisions; 32-bit ones when the segment has fewer than 2^32
  // entries, which probes of most segments meet and which cost a fraction of 64-bit ones).
  std::uint64_t position(std::uint64_t index) const noexcept {
    if (identity_) return index;
    if (narrow_) {
      auto i = static_cast<std::uint32_t>(index);
      std::uint64_t p = 0;
      for (std::size_t j = radices32_.size(); j-- > 0;) {
        p += (i % radices32_[j]) * stored_place_[j];
        i /= radices32_[j];
      }
      return p;
    }
    std::uint64_t p = 0;
    for (std::size_t j = radices_.size(); j-- > 0;) {
      p += index % radices_[j] * stored_place_[j];
      index /= radices_[j];
    }
    return p;
  }
  // The index stored at position p (the inverse of position()).
  std::uint64_t index(std::uint64_t p) const noexcept {
    if (identity_) return p;
    std::uint64_t i = 0;
    for (std::size_t t = stored_.size(); t-- > 0;) {
      const std::size_t j = stored_[t];
      i += p % radices_[j] * index_place_[j];
      p /= radices_[j];
    }
    return i;
  }

  // Walks consecutive indices (or consecutive positions) and keeps the other side of the map up
  // to date with one addition per step (amortized): the loops that permute whole segments.
  class Walk {
   public:
    // by_index: step() moves to index + 1 and other() is its position; else the converse.
    Walk(const EntryOrder& o, std::uint64_t start, bool by_index);
    std::uint64_t other() const noexcept { return other_; }
    void step() noexcept {
      if (order_.empty()) {  // no digits: positions are indices
        ++other_;
        return;
      }
      for (std::size_t t = order_.size(); t-- > 0;) {
        const std::size_t j = order_[t];
        other_ += other_place_[j];
        if (++digit_[j] < radix_[j]) return;
        other_ -= other_place_[j] * radix_[j];
        digit_[j] = 0;
      }
    }

    // Steps left before the fastest walked digit wraps (at least 1), and what each of them adds
    // to other(): loops that copy a run at a time need no step() per entry (gather_block).
    std::uint64_t run() const noexcept {
      if (order_.empty()) return UINT64_MAX;
      const std::size_t j = order_.back();
      return radix_[j] - digit_[j];
    }
    std::uint64_t stride() const noexcept {
      return order_.empty() ? 1 : other_place_[order_.back()];
    }
    // n steps at once, 1 <= n <= run().
    void skip(std::uint64_t n) noexcept {
      if (order_.empty()) {
        other_ += n;
        return;
      }
      const std::size_t j = order_.back();
      other_ += (n - 1) * other_place_[j];
      digit_[j] += n - 1;
      step();
    }

   private:
    std::vector<std::uint8_t> order_;  // digits from the most to the least significant walked
    std::vector<std::uint64_t> radix_, other_place_, digit_;
    std::uint64_t other_ = 0;
  };

  // "2x55x83 stored 1,0,2": the radices, then the stored order (for reports and the manifest).
  std::string describe() const;

 private:
  std::vector<std::uint64_t> radices_;
  std::vector<std::uint8_t> stored_;
  std::vector<std::uint64_t> index_place_, stored_place_;  // per digit
  std::vector<std::uint32_t> radices32_;                   // radices_, when narrow_
  bool identity_ = true;
  bool narrow_ = false;  // entries < 2^32
};

// "index" for entries in index order, else describe(): the manifest's `entry_order`.
inline std::string entry_order_text(const EntryOrder& o) {
  return o.identity() ? std::string("index") : o.describe();
}

}  // namespace retra::format
