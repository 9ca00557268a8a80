// A hash map from 64-bit keys to small values in one flat array (open addressing, linear probing,
// Fibonacci hashing, backward-shift deletion): the probes' hot lookups (a block of the cache, a
// segment by its key), where std::unordered_map costs a division and a pointer chase per find.
// Thread safety: none of its own; const members may run concurrently with each other.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

namespace retra {

// The top `bits` bits of key times 2^64 / phi (Fibonacci hashing): spreads keys that differ in
// any bits, low ones included, over 2^bits buckets. 1 <= bits <= 63.
constexpr std::size_t fibonacci_hash(std::uint64_t key, int bits) noexcept {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

template <class V>
class FlatMap64 {
 public:
  explicit FlatMap64(std::size_t expected = 0) { rehash(capacity_for(expected)); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  const V* find(std::uint64_t key) const noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  V* find(std::uint64_t key) noexcept {
    return const_cast<V*>(static_cast<const FlatMap64&>(*this).find(key));
  }

  // Inserts key -> value unless key is present (then returns false and changes nothing).
  bool insert(std::uint64_t key, const V& value) {
    if (find(key)) return false;
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    std::size_t i = home(key);
    while (slots_[i].used) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value, true};
    ++size_;
    return true;
  }
  // Inserts or overwrites.
  void assign(std::uint64_t key, const V& value) {
    if (V* v = find(key))
      *v = value;
    else
      insert(key, value);
  }

  // Removes key; false if absent. Later entries of its probe run move back into the hole, so
  // finds never need tombstones.
  bool erase(std::uint64_t key) noexcept {
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (!slots_[j].used) break;
      // The entry at j may fill the hole at i if its home is not in (i, j] (cyclically).
      const std::size_t h = home(slots_[j].key);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].used = false;
    --size_;
    return true;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
    bool used = false;
  };
  static std::size_t capacity_for(std::size_t n) {
    return std::bit_ceil(std::max<std::size_t>(16, 2 * n));
  }
  std::size_t home(std::uint64_t key) const noexcept { return fibonacci_hash(key, bits_); }
  void rehash(std::size_t capacity) {
    assert(std::has_single_bit(capacity));
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    bits_ = std::countr_zero(capacity);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
  int bits_ = 0;  // log2 of the capacity
};

}  // namespace retra
