// Chinese chess (xiangqi): squares, pieces, positions as piece lists, FEN in both alphabets, and
// move generation with every rule of ../shared/spec/xiangqi.md (palace, river, minister's eye,
// knight's leg, cannon screen, pawn sideways after the river, flying general).
// Thread safety: pure functions over value types; the tables are constexpr.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "retra/error.hpp"

namespace retra::xiangqi {

inline constexpr int kFiles = 9, kRanks = 10, kSquares = 90;
inline constexpr int kMaxPieces = 16;
inline constexpr std::uint8_t kNoSquare = 0xff;

enum Color : std::uint8_t { red = 0, black = 1 };
inline constexpr Color opposite(Color c) { return c == red ? black : red; }

// Piece types in the order endgame names list them (R N C P G M), the king first.
enum PieceType : std::uint8_t { king = 0, rook, knight, cannon, pawn, guard, minister, kTypes };
inline constexpr bool attacking(PieceType t) { return t >= rook && t <= pawn; }
inline constexpr int kMaxOfType[kTypes] = {1, 2, 2, 2, 5, 2, 2};  // K R N C P G M

// A square is rank * 9 + file; file 0..8 = a..i, rank 0..9 with Red's back rank 0.
inline constexpr int file_of(int sq) { return sq % kFiles; }
inline constexpr int rank_of(int sq) { return sq / kFiles; }
inline constexpr int square(int file, int rank) { return rank * kFiles + file; }
inline constexpr int mirror(int sq) { return square(kFiles - 1 - file_of(sq), rank_of(sq)); }
std::string square_name(int sq);  // "e0"

// Whether a piece of this type and colour may stand on sq at all (spec: K 9, G 5, M 7, P 55).
bool allowed(PieceType t, Color c, int sq);

// Board contents: 0 = empty, else 1 + type + 8 * colour.
using Board = std::array<std::uint8_t, kSquares>;
inline constexpr std::uint8_t code(PieceType t, Color c) {
  return static_cast<std::uint8_t>(1 + t + 8 * c);
}
inline constexpr PieceType type_of(std::uint8_t code) { return PieceType((code - 1) & 7); }
inline constexpr Color color_of(std::uint8_t code) { return Color((code - 1) >> 3); }

// A move of the side to move. Captures name the captured piece's board code.
struct Move {
  std::uint8_t from, to;
  std::uint8_t captured;  // 0 if none
};

// Pseudo-legal moves: every move the rules of movement allow, including moves that leave the
// mover's own king capturable (in xiangqi they lose at once: the child has value 1).
// Calls f(const Move&) for each. Captures of the king itself are not moves (the position is
// decided before: see can_capture_king).
template <class F>
void for_each_move(const Board& b, Color side, F&& f);

// Calls f(from) for every square from which a `side` piece of type t standing there could have
// moved to `to` by a non-capturing move (to is where it stands now, `from` is empty).
template <class F>
void for_each_unmove_origin(const Board& b, PieceType t, Color side, int to, F&& f);

// The side can capture the opponent's king now: the king is attacked (OKIC) or the two kings
// face each other on one file with nothing between (KFK).
bool can_capture_king(const Board& b, Color side);
bool kings_facing(const Board& b);
// The king of `side` is attacked by the opponent's pieces (not counting KFK).
bool in_check(const Board& b, Color side);

// FEN: rank 9 first, upper case Red, `w`/`r` or `b` to move; letters K G/A M/B/E R N/H C P.
struct FenPosition {
  Board board{};
  Color side = red;
};
Result<FenPosition> parse_fen(std::string_view fen);
// What makes a board impossible (a code that is no piece, a piece on a point it can never stand
// on, not one king per side, too many pieces of a type), or nullopt when it is a valid board.
std::optional<std::string> board_error(const Board& b);
std::string to_fen(const Board& b, Color side);  // the paper's letters (K G M R N C P)

char piece_letter(PieceType t, Color c);  // paper's alphabet
// The piece type of a letter in either alphabet and either case (K G/A M/B/E R N/H C P).
std::optional<PieceType> piece_type_of(char letter);

}  // namespace retra::xiangqi

#include "src/games/xiangqi/movegen.inl"
