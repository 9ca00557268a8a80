// How the probe core finds a position's value without knowing the game: each game's module gives
// a Locator that turns a position (as text) into a slot (the segment's place in the manifest) and
// an index, or into an exact value that the rules give without a table.
// Thread safety: locate() and the other members are called from many threads at once; a Locator
// builds whatever it caches per segment under its own once-flags.
#pragma once

#include <cstdint>
#include <string_view>

#include "retra/probe.hpp"

namespace retra::probe {

struct Location {
  int slot = -1;  // the segment's place in the manifest; -1: `value` is exact, no table needed
  std::uint64_t index = 0;
  int value = 0;
};

class Locator {
 public:
  virtual ~Locator() = default;
  // An ok Value with *where set, or the error (malformed position, segment not built, ...).
  virtual Value locate(std::string_view position, Location* where) const = 0;
  // The stored byte as the game's value.
  virtual int decode(std::uint8_t stored) const = 0;
  // What the database holds, in the game's sizes (stones, pieces).
  virtual Coverage coverage() const = 0;
};

}  // namespace retra::probe
