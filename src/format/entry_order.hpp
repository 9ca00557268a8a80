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

  // A whole permutation cut into tiles, for loops that permute whole segments (read_all): one
  // tile is every value of the index's fastest digit L and the stored order's fastest digit S
  // for one value of all the other digits. Its entries form an rS x rL matrix that is a run of
  // rL bytes per value of S in index order and a run of rS bytes per value of L in stored
  // order, so a tile's copy reads and writes a few KiB of whole cache lines, where a walk in the
  // order of one side reads the other a large stride apart: a byte per cache line, missed each
  // time when the strided side outgrows the caches (docs/PERFORMANCE.md, "Segment encodings").
  class Tiles {
   public:
    // by_stored: tiles numbered in stored order of their digits (slabs, below: the writer),
    // else in index order, where consecutive tiles complete each other's index lines (read_all:
    // KRBvKR's order 0.63 G entries/s, against 0.49 G numbered by stored order).
    explicit Tiles(const EntryOrder& o, bool by_stored = false);
    // False when the two fastest digits are one (a walk copies runs already) or too small for
    // tiles to pay (below kMinRadix, a tile is a few bytes): callers then walk.
    bool usable() const noexcept { return usable_; }
    // Whether tiles beat a walk in index order: true when such a walk comes back to a stored
    // cache line only after more than kWalkReuse other entries (the product of the index
    // digits faster than S), each on a line of its own, so that the line has left L2. Below
    // that a walk copies faster, writing whole lines in order (bench_segment's BM_PermuteToIndex:
    // a KRPvKR segment's order, 3,660 entries between visits, 1.08 G entries/s by the walk and
    // 0.73 G by tiles; KRBvKR's, 226,920 apart, 0.086 G by the walk and 0.63 G by tiles).
    bool pays() const noexcept { return usable_ && index_place_ > kWalkReuse; }
    static constexpr std::uint64_t kWalkReuse = std::uint64_t{1} << 14;  // 1 MiB of lines
    // Whether tiles beat a walk in stored order, which the writer's blocks take: such a walk
    // comes back to an index line when L steps, after pl (L's stored place) other entries.
    bool pays_for_writing() const noexcept { return usable_ && stored_place_ > kWalkReuse; }
    std::uint64_t count() const noexcept { return count_; }
    std::uint64_t entries_per_tile() const noexcept { return r_index_ * r_stored_; }
    // Numbered by_stored, tiles go in stored order of their digits, so that the stored positions
    // [s * slab_entries(), (s + 1) * slab_entries()) (one value of the digits stored above L)
    // hold exactly the entries of tiles [s * tiles_per_slab(), (s + 1) * tiles_per_slab()).
    std::uint64_t slab_entries() const noexcept { return stored_place_ * r_index_; }
    std::uint64_t tiles_per_slab() const noexcept { return stored_place_ / r_stored_; }
    // Copies the entries of tiles [t0, t1) from their stored positions in `stored` to their
    // indices in `index`; one byte per entry. Tiles are disjoint on both sides, so threads may
    // copy disjoint ranges of tiles at once (the writer's direction is a visit: it marks too).
    void to_index(const std::uint8_t* stored, std::uint8_t* index, std::uint64_t t0,
                  std::uint64_t t1) const noexcept {
      visit(t0, t1, [&](std::uint64_t i, std::uint64_t p) { index[i] = stored[p]; });
    }
    // Calls f(index, position) for every entry of tiles [t0, t1): a tile at a time, and in a
    // tile a value of S at a time (rL consecutive indices, their positions pl apart, inside the
    // tile's few KiB that the previous values brought into L1).
    template <class F>
    void visit(std::uint64_t t0, std::uint64_t t1, F&& f) const noexcept {
      if (t0 >= t1) return;
      // Tile t0's digits (rest_'s order) and its first entry on each side; then an odometer
      // over the digits, one addition per tile amortized.
      std::uint64_t digit[kMaxOrderDigits] = {};
      std::uint64_t base_index = 0, base_stored = 0;
      for (std::size_t d = rest_.size(), t = t0; d-- > 0;) {
        digit[d] = t % rest_[d].radix;
        t /= rest_[d].radix;
        base_index += digit[d] * rest_[d].index_place;
        base_stored += digit[d] * rest_[d].stored_place;
      }
      const std::uint64_t rl = r_index_, rs = r_stored_, pl = stored_place_, ps = index_place_;
      for (std::uint64_t t = t0; t < t1; ++t) {
        for (std::uint64_t vs = 0; vs < rs; ++vs) {
          const std::uint64_t i0 = base_index + vs * ps, p0 = base_stored + vs;
          for (std::uint64_t vl = 0; vl < rl; ++vl) f(i0 + vl, p0 + vl * pl);
        }
        for (std::size_t d = rest_.size(); d-- > 0;) {
          base_index += rest_[d].index_place;
          base_stored += rest_[d].stored_place;
          if (++digit[d] < rest_[d].radix) break;
          base_index -= rest_[d].index_place * rest_[d].radix;
          base_stored -= rest_[d].stored_place * rest_[d].radix;
          digit[d] = 0;
        }
      }
    }

    static constexpr std::uint64_t kMinRadix = 8;

   private:
    bool usable_ = false;
    std::uint64_t count_ = 0;
    // L's radix and its stored place; S's radix and its index place.
    std::uint64_t r_index_ = 1, stored_place_ = 1, r_stored_ = 1, index_place_ = 1;
    // The other digits (radix > 1), the slowest first (by_stored: in storage): radix, index
    // place, stored place.
    struct Digit {
      std::uint64_t radix, index_place, stored_place;
    };
    std::vector<Digit> rest_;
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
