// The segment format's EntryRules for any game: which entries the rules answer without the file
// (holes of the index, HasValidity; values fixed by the rules, HasTerminalValue). Written once
// for every game over the Game concept. Thread safety: immutable; rule_values is reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "retra/game.hpp"
#include "src/format/segment.hpp"

namespace retra {

template <Game G>
inline constexpr bool kHasEntryRules = HasValidity<G> || HasTerminalValue<G>;

template <Game G>
class GameEntryRules final : public format::EntryRules {
  using Seg = typename G::SegmentId;

 public:
  GameEntryRules(std::shared_ptr<const G> g, Seg s) : g_(std::move(g)), s_(s) {}

  void rule_values(std::uint64_t first, std::span<std::int16_t> out) const override {
    if (out.empty()) return;
    const G& g = *g_;
    // One unrank, then the index order's successor: the kernels' own way through a range.
    auto p = g.unrank(s_, first);
    for (std::size_t i = 0;;) {
      std::int16_t v = kStored;
      if constexpr (HasValidity<G>) {
        if (!g.is_valid(s_, p)) v = 0;  // the kernels store 0 in holes
      }
      if constexpr (HasTerminalValue<G>) {
        if (v == kStored)
          if (const auto t = g.terminal_value(s_, p))
            v = static_cast<std::int16_t>(static_cast<std::uint8_t>(*t));
      }
      out[i] = v;
      if (++i == out.size()) break;
      g.next(s_, p);
    }
  }
  bool holes_only() const override { return HasValidity<G> && !HasTerminalValue<G>; }

 private:
  std::shared_ptr<const G> g_;
  Seg s_;
};

// The rules of a segment whose holes are already known, one bit per entry (the backward kernel
// marks them while it counts moves, KernelOptions::holes), for the writer: a bit test per entry
// instead of the game's position step. Only for games whose rules answer holes alone
// (holes_only()), whose kernels store 0 there.
class KnownHoles final : public format::EntryRules {
 public:
  explicit KnownHoles(std::span<const std::uint64_t> bits) : bits_(bits) {}
  void rule_values(std::uint64_t first, std::span<std::int16_t> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::uint64_t x = first + i;
      out[i] = (bits_[x >> 6] >> (x & 63)) & 1 ? std::int16_t{0} : kStored;
    }
  }
  bool holes_only() const override { return true; }
  std::span<const std::uint64_t> zero_bits() const override { return bits_; }

 private:
  std::span<const std::uint64_t> bits_;
};

// The byte each byte of segment s becomes in a class half (Game::class_of, docs/FORMAT.md,
// "Class halves").
template <HasClassHalves G>
std::array<std::uint8_t, 256> class_bytes(const G& g, const typename G::SegmentId& s) {
  std::array<std::uint8_t, 256> classes;
  const ValueKind kind = value_kind_of(g, s);
  for (int b = 0; b < 256; ++b)
    classes[static_cast<std::size_t>(b)] =
        static_cast<std::uint8_t>(g.class_of(s, decode_value(kind, static_cast<std::uint8_t>(b))));
  return classes;
}

}  // namespace retra
