// Xiangqi material signatures ("KRKGGMM", "KNP(9)KGM"): the pieces of an endgame, the supporting
// endgames its captures (by either side) and pinned-pawn advances lead to, and the slot layout in
// which positions list their pieces. Thread safety: value types and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "retra/error.hpp"
#include "src/games/xiangqi/board.hpp"

namespace retra::xiangqi {

struct Material {
  // count[colour][type]; count[c][king] is always 1.
  std::array<std::array<std::uint8_t, kTypes>, 2> count{};
  // Pinned pawn ranks per colour, one entry per pinned pawn, ascending; pawns not listed here
  // may stand on any pawn square. A pinned pawn moving forward changes the endgame.
  std::array<std::vector<std::int8_t>, 2> levels;

  int pieces() const;
  bool armed(Color c) const;  // has a rook, knight, cannon or pawn
  bool armless() const { return !armed(red) && !armed(black); }
  std::string name() const;  // K, R N C P G M per side, e.g. "KNP(9)KGM"
  friend bool operator==(const Material&, const Material&) = default;
};

// Parses an endgame name. Accepts the WXF letters too (A = G, B/E = M, H = N) and any piece order;
// errors name what is wrong (unknown letter, too many pieces, a pawn level it cannot have).
Result<Material> parse_material(std::string_view name);

// The material of the pieces on a board.
Material material_of(const Board& b);

// One piece slot of a position: which piece and, for a pinned pawn, its rank.
struct Slot {
  Color color;
  PieceType type;
  std::int8_t level;  // -1 unless a pinned pawn
};

// Slots in a fixed order: red K R.. N.. C.. P(unpinned).. P(pinned, ascending).. G.. M.., then
// black the same way. Removing one piece removes one slot and keeps the order of the others.
std::vector<Slot> layout(const Material& m);

// The endgames one move leads to: capturing a piece of the given colour/type/level, or a pinned
// pawn advancing from `level` to `level +- 1`.
Material without(const Material& m, Color c, PieceType t, std::int8_t level);
Material advanced(const Material& m, Color c, std::int8_t from_level, std::int8_t to_level);

// The 151 endgames of Fang, Hsu and Hsu (CG 2000, Appendix A).
const std::vector<std::string>& fang151();

}  // namespace retra::xiangqi
