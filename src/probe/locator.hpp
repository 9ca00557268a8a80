// How the probe core finds a position's value without knowing the game: each game's module gives
// a Locator that turns a position (as text) into a slot (the segment's place in the manifest) and
// an index, or into an exact value that the rules give without a table.
// Thread safety: locate() and the other members are called from many threads at once; a Locator
// builds whatever it caches per segment under its own once-flags.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "retra/probe.hpp"

namespace retra::probe {

struct Location {
  static constexpr int kExact = -1;    // `value` is exact: no table needed
  static constexpr int kDerived = -2;  // not stored: the locator derives it from stored values
  int slot = kExact;                   // else the segment's place in the manifest
  std::uint64_t index = 0;
  int value = 0;
};

// How a locator reads stored values when it derives a value: (slot, index) -> the entry's value
// (its far value where the segment lists one, docs/FORMAT.md), with kClassOnly set where the
// entry holds only its class (a segment's class half): the game then finds the distance from
// the entry's moves; and kDontCare set where the segment has don't-care entries, whose stored
// value may be worse than the truth (never better): the game then takes the better of it and
// what the position's converting moves give; with kDontCareCaptures also set, what its captures
// alone give (format::kDontCareCaptures).
using Reader = std::function<Value(int slot, std::uint64_t index)>;
inline constexpr int kClassOnly = 1 << 24;
inline constexpr int kDontCare = 1 << 25;
inline constexpr int kDontCareCaptures = 1 << 26;

class Locator {
 public:
  virtual ~Locator() = default;
  // An ok Value with *where set, or the error (malformed position, segment not built, ...).
  virtual Value locate(std::string_view position, Location* where) const = 0;
  // The stored byte as the game's value.
  virtual int decode(std::uint8_t stored) const = 0;
  // What the database holds, in the game's sizes (stones, pieces).
  virtual Coverage coverage() const = 0;
  // The value of a position that locate() marked kDerived, from stored bytes read through `read`;
  // also of a located position whose segment has don't-care entries (FORMAT.md, kDontCare).
  // The default: an error (a game that derives nothing never stores don't-care entries).
  virtual Value derive(std::string_view position, const Reader& read) const;
};

}  // namespace retra::probe
