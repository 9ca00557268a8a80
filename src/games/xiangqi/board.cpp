// Xiangqi attacks, king-capture tests and FEN. Thread safety: pure functions.
#include "src/games/xiangqi/board.hpp"

#include <fmt/format.h>

namespace retra::xiangqi {

std::string square_name(int sq) {
  const char name[3] = {static_cast<char>('a' + file_of(sq)), static_cast<char>('0' + rank_of(sq)),
                        0};
  return name;
}

bool allowed(PieceType t, Color c, int sq) { return detail::kTables.allowed[t][c][sq]; }

namespace {

int king_square(const Board& b, Color side) {
  const std::uint8_t k = code(king, side);
  const int lo = side == red ? 0 : 7;
  for (int r = lo; r < lo + 3; ++r)
    for (int f = 3; f <= 5; ++f)
      if (b[square(f, r)] == k) return square(f, r);
  return -1;
}

// Whether `side` attacks `target` with a rook, cannon, knight or pawn.
bool attacks(const Board& b, Color side, int target) {
  for (auto& d : detail::kDirs) {
    int seen = 0;
    bool hit = false;
    detail::ray(target, d[0], d[1], [&](int sq) {
      const std::uint8_t c = b[sq];
      if (!c) return true;
      ++seen;
      if (color_of(c) == side &&
          ((seen == 1 && type_of(c) == rook) || (seen == 2 && type_of(c) == cannon)))
        hit = true;
      return seen < 2 && !hit;
    });
    if (hit) return true;
  }
  const auto& kn = detail::kTables.knight_from[target];
  for (int i = 0; i < kn.n; ++i)
    if (b[kn.to[i]] == code(knight, side) && !b[kn.via[i]]) return true;
  const auto& pw = detail::kTables.pawn_from[side][target];
  for (int i = 0; i < pw.n; ++i)
    if (b[pw.to[i]] == code(pawn, side)) return true;
  return false;
}

}  // namespace

bool kings_facing(const Board& b) {
  const int rk = king_square(b, red), bk = king_square(b, black);
  if (rk < 0 || bk < 0 || file_of(rk) != file_of(bk)) return false;
  for (int sq = rk + kFiles; sq < bk; sq += kFiles)
    if (b[sq]) return false;
  return true;
}

bool in_check(const Board& b, Color side) {
  const int k = king_square(b, side);
  return k >= 0 && attacks(b, opposite(side), k);
}

bool can_capture_king(const Board& b, Color side) {
  return kings_facing(b) || in_check(b, opposite(side));
}

char piece_letter(PieceType t, Color c) {
  static constexpr char kLetters[] = "KRNCPGM";
  const char l = kLetters[t];
  return c == red ? l : static_cast<char>(l - 'A' + 'a');
}

std::optional<PieceType> piece_type_of(char letter) {
  switch (letter >= 'a' && letter <= 'z' ? static_cast<char>(letter - 'a' + 'A') : letter) {
    case 'K':
      return king;
    case 'G':
    case 'A':
      return guard;
    case 'M':
    case 'B':
    case 'E':
      return minister;
    case 'R':
      return rook;
    case 'N':
    case 'H':
      return knight;
    case 'C':
      return cannon;
    case 'P':
      return pawn;
    default:
      return std::nullopt;
  }
}

std::string to_fen(const Board& b, Color side) {
  std::string s;
  for (int r = kRanks - 1; r >= 0; --r) {
    int empty = 0;
    for (int f = 0; f < kFiles; ++f) {
      const std::uint8_t c = b[square(f, r)];
      if (!c) {
        ++empty;
        continue;
      }
      if (empty) s += static_cast<char>('0' + empty);
      empty = 0;
      s += piece_letter(type_of(c), color_of(c));
    }
    if (empty) s += static_cast<char>('0' + empty);
    if (r) s += '/';
  }
  s += side == red ? " w" : " b";
  return s;
}

std::optional<std::string> board_error(const Board& b) {
  int count[2][kTypes] = {};
  for (int sq = 0; sq < kSquares; ++sq) {
    const std::uint8_t pc = b[sq];
    if (pc == 0) continue;
    if (pc > code(minister, black) || pc == code(minister, red) + 1)
      return fmt::format("square {} holds the code {}, which is no piece", square_name(sq), pc);
    const PieceType t = type_of(pc);
    const Color c = color_of(pc);
    if (!allowed(t, c, sq))
      return fmt::format("{} {} cannot stand on {}", c == red ? "red" : "black",
                         std::string(1, piece_letter(t, red)), square_name(sq));
    ++count[c][t];
  }
  for (int c = 0; c < 2; ++c) {
    if (count[c][king] != 1)
      return fmt::format("{} has {} kings", c == red ? "red" : "black", count[c][king]);
    for (int t = 1; t < kTypes; ++t)
      if (count[c][t] > kMaxOfType[t])
        return fmt::format("{} has {} pieces of type {}", c == red ? "red" : "black", count[c][t],
                           piece_letter(PieceType(t), red));
  }
  return std::nullopt;
}

Result<FenPosition> parse_fen(std::string_view fen) {
  auto bad = [&](const std::string& what) {
    return Error(Errc::invalid_argument,
                 fmt::format("FEN '{}': {}; expected ranks 9..0 separated by '/', then w or b, "
                             "e.g. 4k4/9/9/9/9/9/9/9/4R4/3K5 w",
                             fen, what));
  };
  FenPosition p;
  std::size_t i = 0;
  int rank = kRanks - 1, file = 0;
  for (; i < fen.size() && fen[i] != ' '; ++i) {
    const char ch = fen[i];
    if (ch == '/') {
      if (file != kFiles) return bad(fmt::format("rank {} has {} files, not 9", rank, file));
      if (--rank < 0) return bad("more than 10 ranks");
      file = 0;
      continue;
    }
    if (ch >= '1' && ch <= '9') {
      file += ch - '0';
      if (file > kFiles) return bad(fmt::format("rank {} has more than 9 files", rank));
      continue;
    }
    const bool upper = ch >= 'A' && ch <= 'Z';
    const auto type = piece_type_of(ch);
    if (!type)
      return bad(
          fmt::format("unknown piece letter '{}' (use K, G or A, M or B or E, R, N or "
                      "H, C, P)",
                      ch));
    if (file >= kFiles) return bad(fmt::format("rank {} has more than 9 files", rank));
    p.board[square(file, rank)] = code(*type, upper ? red : black);
    ++file;
  }
  if (rank != 0) return bad("fewer than 10 complete ranks");
  if (file != kFiles) return bad(fmt::format("rank 0 has {} files, not 9", file));
  while (i < fen.size() && fen[i] == ' ') ++i;
  if (i >= fen.size()) return bad("the side to move is missing");
  const char side = fen[i];
  if (side == 'w' || side == 'r' || side == 'W' || side == 'R')
    p.side = red;
  else if (side == 'b' || side == 'B')
    p.side = black;
  else
    return bad(fmt::format("side to move '{}' is not w, r or b", side));
  if (auto why = board_error(p.board)) return bad(*why);
  return p;
}

}  // namespace retra::xiangqi
