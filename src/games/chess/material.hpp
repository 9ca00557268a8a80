// Chess material signatures ("KQvKR", "KRPvKR"), their canonical orientation (the stronger side
// is white, spec chess.md), the pawn-rank profiles that split a table into segments (every pawn
// move changes the profile, so pawn moves convert like captures), and the slot layout in which
// positions list their pieces. Thread safety: value types and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "retra/error.hpp"
#include "src/games/chess/board.hpp"

namespace retra::chess {

inline constexpr int kMaxPieces = 7;  // kings included; tables up to 7 pieces are named

struct Material {
  // count[colour][type]; count[c][king] is always 1.
  std::array<std::array<std::uint8_t, kTypes>, 2> count{};

  int pieces() const;
  int pieces(Color c) const;
  bool has_pawns() const { return count[0][pawn] + count[1][pawn] > 0; }
  std::string name() const;  // "KQvKR": white first, pieces in the order Q R B N P
  // The same material with the colours exchanged.
  Material flipped() const;
  // The stronger side first (more pieces, then higher-valued ones): the table's own orientation.
  bool canonical() const;
  Material canonicalized() const { return canonical() ? *this : flipped(); }
  // Both colourings are the same material (KRvKR): either side to move is the other's mirror.
  bool symmetric() const { return count[0] == count[1]; }
  friend bool operator==(const Material&, const Material&) = default;
};

// Parses "KQvKR" (either colour first, pieces in any order, upper or lower case). Errors name what
// is wrong: no 'v', a side without its king, an unknown letter, more than 7 pieces.
Result<Material> parse_material(std::string_view name);
// The material of a board.
Material material_of(const Board& b);

// Ranks of the pawns of each colour (0-based, 1..6), ascending: the segment of a pawn table.
struct PawnProfile {
  std::array<std::vector<std::int8_t>, 2> ranks;
  friend bool operator==(const PawnProfile&, const PawnProfile&) = default;
  friend auto operator<=>(const PawnProfile&, const PawnProfile&) = default;
};

// A segment: a canonical material and, with pawns, a pawn profile.
struct TableKey {
  Material material;
  PawnProfile profile;
  // "KQvKR", "KPvK_w2", "KPvKP_w4_b5": ranks as chess ranks (2..7), white's then black's.
  std::string name() const;
  friend bool operator==(const TableKey&, const TableKey&) = default;
};
Result<TableKey> parse_table_key(std::string_view name);

// Every pawn profile of a material: ranks 2..7 for each pawn, identical pawns of one colour as
// multisets.
std::vector<PawnProfile> profiles(const Material& m);

// One piece slot of a position: its piece and, for a pawn, the rank it stands on in this segment.
struct Slot {
  Color color;
  PieceType type;
  std::int8_t rank;  // pawns: the profile's rank; -1 for other pieces
};
// Slots in a fixed order: white K Q.. R.. B.. N.. P.. (pawns by ascending rank), then black the
// same way.
std::vector<Slot> layout(const TableKey& k);

// Every canonical material of `pieces` pieces (kings included), in name order.
std::vector<Material> materials_with(int pieces);

}  // namespace retra::chess
