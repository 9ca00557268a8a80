// Chess boards: attacks, playing moves, perft, FEN and UCI notation (board.hpp).
// Thread safety: pure functions; the magic attack tables are built at compile time.
#include "src/games/chess/board.hpp"

#include <charconv>
#include <utility>

#include <fmt/format.h>

namespace retra::chess {

namespace detail {
namespace {

// The multipliers, square a1 first (found by a seeded random search over sparse 64-bit numbers).
constexpr Bitboard kRookMagic[64] = {
    0x1080004008801020ull, 0x0840092002c03000ull, 0x1900200010400900ull, 0x0880100008000480ull,
    0x4200100420080200ull, 0x8100020100080400ull, 0x0200040110886200ull, 0x0200008040220411ull,
    0x0404800084400220ull, 0x0000401000402000ull, 0x0086001081220440ull, 0x0408800800100280ull,
    0x000a001201040820ull, 0x8848800200840080ull, 0x4001000100040200ull, 0x0442000102105084ull,
    0x9080010020804100ull, 0x0040404000201009ull, 0x0000808010002009ull, 0x2200090021d00100ull,
    0x0008008008040080ull, 0x0004004002010040ull, 0x0011040008015042ull, 0x00000a0001768104ull,
    0x0000800080204009ull, 0x2010004140002001ull, 0x9800200280100080ull, 0x1000100080080080ull,
    0x0442000a00049020ull, 0x2100040080020080ull, 0x0800120400900148ull, 0x0010040a00128541ull,
    0x2800804000800030ull, 0x1010002000400041ull, 0x4000200011004100ull, 0x0610008410800800ull,
    0x0400802402800800ull, 0xc100020080800400ull, 0x0002000802000401ull, 0x0182085882000401ull,
    0x0220204000808000ull, 0x2860100040024022ull, 0x0001002004110040ull, 0x99101042000a0020ull,
    0x0004080004008080ull, 0x0010040002008080ull, 0x2012004881020004ull, 0x8300842444820011ull,
    0x0088403882010200ull, 0x0820400080210100ull, 0x0110910040a00300ull, 0x0801100280080480ull,
    0x0242009008200600ull, 0x1002000489500200ull, 0x0040800200010080ull, 0x0091800041000080ull,
    0x0000209300488001ull, 0x04c1002414824001ull, 0x020020000b001041ull, 0x7000100004200901ull,
    0x8002002004100802ull, 0x30010002084c0007ull, 0x0888221800813004ull, 0x4000002840840112ull,
};
constexpr Bitboard kBishopMagic[64] = {
    0xa010041108003100ull, 0x006082020a002900ull, 0x6810010619200000ull, 0x08281a0520000408ull,
    0x0001104001000400ull, 0x0018901008048400ull, 0x00040a0210245280ull, 0x000200210808a402ull,
    0x9140048410821200ull, 0x0800091010820041ull, 0x20504804832202c0ull, 0x0100091401081000ull,
    0x8021011140000012ull, 0x0810020804450400ull, 0x208b0542109008a2ull, 0x0080084a08040204ull,
    0x0040e2a80811244cull, 0x2505022008008108ull, 0x0430220100420040ull, 0x010a040420220040ull,
    0x1105000290400000ull, 0x0093001200822120ull, 0x4000a62048043004ull, 0x280120048a015004ull,
    0x006090002a020814ull, 0x44042000240800d0ull, 0x01102800040a4400ull, 0x1004080080220040ull,
    0x0001001011004024ull, 0x0010044000805040ull, 0x0914041200820100ull, 0x0004821012821480ull,
    0x0024040500c05021ull, 0x0088611002080200ull, 0x0116080a00040020ull, 0x4000020080080080ull,
    0x2450450140840040ull, 0x0000880201484100ull, 0x0222020404020092ull, 0x8081110600002e00ull,
    0x2842101105000801ull, 0x1100809008001025ull, 0x00020202221c0400ull, 0x0422014022009020ull,
    0x0210046102100c00ull, 0xc004008082029102ull, 0x00aa461801101200ull, 0x0404080080201108ull,
    0x020542108c205002ull, 0x0410544804100100ull, 0x0040910841100000ull, 0x0400200042021100ull,
    0x00004204850400c0ull, 0x0200100410a42102ull, 0x1040020801210102ull, 0x0805040410420000ull,
    0x2884804130100200ull, 0x800c262201242000ull, 0x1058000194108800ull, 0x0014221054420204ull,
    0x0104000012a02200ull, 0x0200881003300100ull, 0x0140400202840100ull, 0x0402020801010201ull,
};

// The squares that can block a slider on sq: its rays from sq without each ray's last square
// (a piece there blocks nothing further).
constexpr Bitboard blocker_mask(int sq, bool rook) {
  Bitboard m = 0;
  for (int dir = rook ? 0 : 1; dir < 8; dir += 2) {
    const Bitboard r = kTables.ray[dir][sq];
    if (!r) continue;
    const int last = dir < 4 ? 63 - std::countl_zero(r) : std::countr_zero(r);
    m |= r & ~bit(last);
  }
  return m;
}

// One square's slots for one slider, a constant of its own: the compilers bound the work of a
// single constant evaluation, and the whole table at once exceeds GCC's bound. An empty slot is
// 0 (a slider always attacks some square); two occupancies with different attacks in one slot
// (a wrong multiplier) throw, which fails the build.
template <int Sq, bool Rook>
struct SquareSlots {
  static constexpr Bitboard kMask = blocker_mask(Sq, Rook);
  static constexpr Bitboard kMagic = Rook ? kRookMagic[Sq] : kBishopMagic[Sq];
  static constexpr std::uint32_t kShift = static_cast<std::uint32_t>(64 - std::popcount(kMask));
  static constexpr std::array<Bitboard, (std::size_t{1} << (64 - kShift))> make() {
    std::array<Bitboard, (std::size_t{1} << (64 - kShift))> slot{};
    Bitboard occ = 0;
    do {  // every subset of the mask (Carry-Rippler)
      const Bitboard a = Rook ? rook_rays(Sq, occ) : bishop_rays(Sq, occ);
      Bitboard& s = slot[(occ * kMagic) >> kShift];
      if (s != 0 && s != a) throw "a magic multiplier maps two attack sets to one slot";
      s = a;
      occ = (occ - kMask) & kMask;
    } while (occ);
    return slot;
  }
  static constexpr auto kSlot = make();
};

template <bool Rook, std::size_t... Sq>
constexpr std::array<Magic, 64> make_magics(std::index_sequence<Sq...>) {
  return {Magic{SquareSlots<Sq, Rook>::kMask, SquareSlots<Sq, Rook>::kMagic,
                SquareSlots<Sq, Rook>::kSlot.data(), SquareSlots<Sq, Rook>::kShift}...};
}

}  // namespace

constinit const MagicTables kMagics = {make_magics<true>(std::make_index_sequence<64>{}),
                                       make_magics<false>(std::make_index_sequence<64>{})};

}  // namespace detail

std::string square_name(int sq) {
  return {static_cast<char>('a' + file_of(sq)), static_cast<char>('1' + rank_of(sq))};
}

char piece_letter(PieceType t, Color c) {
  static constexpr char kLetters[] = "KQRBNP";
  const char l = kLetters[t];
  return c == white ? l : static_cast<char>(l - 'A' + 'a');
}

std::optional<PieceType> piece_type_of(char letter) {
  switch (letter) {
    case 'K':
    case 'k':
      return king;
    case 'Q':
    case 'q':
      return queen;
    case 'R':
    case 'r':
      return rook;
    case 'B':
    case 'b':
      return bishop;
    case 'N':
    case 'n':
      return knight;
    case 'P':
    case 'p':
      return pawn;
    default:
      return std::nullopt;
  }
}

bool attacked(const Board& b, int sq, Color by) {
  const Bitboard occ = b.occupied();
  for (Bitboard pieces = b.by(by); pieces; pieces &= pieces - 1) {
    const int s = std::countr_zero(pieces);
    const PieceType t = type_of(b.piece[s]);
    const Bitboard a = t == pawn ? pawn_attacks(by, s) : attacks(t, s, occ);
    if (a & bit(sq)) return true;
  }
  return false;
}

bool in_check(const Board& b, Color c) {
  const int k = b.king_square(c);
  return k >= 0 && attacked(b, k, opposite(c));
}

std::string uci(const Move& m) {
  std::string s = square_name(m.from) + square_name(m.to);
  if (m.promotion != kNoPromotion) s += piece_letter(m.promotion, black);
  return s;
}

Board play(const Board& b, const Move& m) {
  Board c = b;
  const std::uint8_t pc = c.piece[m.from];
  const bool pawn_move = type_of(pc) == pawn;
  c.piece[m.from] = 0;
  if (m.en_passant) c.piece[m.to + (b.side == white ? -8 : 8)] = 0;
  c.piece[m.to] = m.promotion != kNoPromotion ? code(m.promotion, b.side) : pc;
  c.ep = -1;
  if (pawn_move && (m.to - m.from == 16 || m.from - m.to == 16)) c.ep = (m.from + m.to) / 2;
  c.halfmove = pawn_move || m.capture ? 0 : b.halfmove + 1;
  if (b.side == black) ++c.fullmove;
  c.side = opposite(b.side);
  return c;
}

int legal_move_count(const Board& b) {
  return for_each_legal_move(b, [](const Move&) {});
}

std::uint64_t perft(const Board& b, int depth) {
  if (depth == 0) return 1;
  std::uint64_t n = 0;
  for_each_legal_move(b,
                      [&](const Move& m) { n += depth == 1 ? 1 : perft(play(b, m), depth - 1); });
  return n;
}

std::optional<std::string> board_error(const Board& b) {
  int kings[2] = {}, pawns[2] = {}, count[2][kTypes] = {};
  for (int s = 0; s < 64; ++s) {
    const std::uint8_t pc = b.piece[s];
    if (!pc) continue;
    if (pc > code(pawn, black) || (pc & 7) == 7 || (pc & 7) == 0)
      return fmt::format("square {} holds {}, which is no piece", square_name(s), int{pc});
    const PieceType t = type_of(pc);
    const Color c = color_of(pc);
    ++count[c][t];
    if (t == king) ++kings[c];
    if (t == pawn) {
      ++pawns[c];
      if (rank_of(s) == 0 || rank_of(s) == 7)
        return fmt::format("a pawn stands on {}: pawns never stand on rank 1 or 8", square_name(s));
    }
  }
  for (int c = 0; c < 2; ++c) {
    const char* name = c == white ? "white" : "black";
    if (kings[c] != 1)
      return fmt::format("{} has {} kings; each side has exactly one", name, kings[c]);
    if (pawns[c] > 8) return fmt::format("{} has {} pawns; at most 8", name, pawns[c]);
    // Pieces beyond the starting set can only come from promotions.
    int promoted = std::max(0, count[c][queen] - 1) + std::max(0, count[c][rook] - 2) +
                   std::max(0, count[c][bishop] - 2) + std::max(0, count[c][knight] - 2);
    if (promoted > 8 - pawns[c])
      return fmt::format("{} has more pieces than promotions of its {} missing pawns allow", name,
                         8 - pawns[c]);
  }
  if (b.side != white && b.side != black) return "the side to move must be white or black";
  const int wk = b.king_square(white), bk = b.king_square(black);
  if (std::abs(file_of(wk) - file_of(bk)) <= 1 && std::abs(rank_of(wk) - rank_of(bk)) <= 1)
    return fmt::format("the kings stand next to each other ({} and {}): the position cannot arise",
                       square_name(wk), square_name(bk));
  if (in_check(b, opposite(b.side)))
    return fmt::format("the side not to move ({}) is in check: the position cannot arise",
                       b.side == white ? "black" : "white");
  return std::nullopt;
}

namespace {

// Whether the side to move has a legal en-passant capture onto ep.
bool ep_capture_exists(const Board& b, int ep) {
  Board t = b;
  t.ep = ep;
  bool any = false;
  for_each_legal_move(t, [&](const Move& m) { any = any || m.en_passant; });
  return any;
}

}  // namespace

Result<Board> parse_fen(std::string_view fen) {
  auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument, fmt::format("FEN '{}': {}", fen, why));
  };
  std::string_view fields[6];
  int n = 0;
  for (std::size_t i = 0; i < fen.size();) {
    while (i < fen.size() && fen[i] == ' ') ++i;
    if (i >= fen.size()) break;
    std::size_t j = i;
    while (j < fen.size() && fen[j] != ' ') ++j;
    if (n == 6) return bad("more than six fields");
    fields[n++] = fen.substr(i, j - i);
    i = j;
  }
  if (n < 2) return bad("expected at least the placement and the side to move");
  Board b;
  int rank = 7, file = 0;
  for (char ch : fields[0]) {
    if (ch == '/') {
      if (file != 8) return bad(fmt::format("rank {} does not have 8 squares", rank + 1));
      if (--rank < 0) return bad("more than 8 ranks");
      file = 0;
    } else if (ch >= '1' && ch <= '8') {
      file += ch - '0';
      if (file > 8) return bad(fmt::format("rank {} has more than 8 squares", rank + 1));
    } else if (auto t = piece_type_of(ch)) {
      if (file >= 8) return bad(fmt::format("rank {} has more than 8 squares", rank + 1));
      b.piece[square(file++, rank)] = code(*t, ch >= 'a' ? black : white);
    } else {
      return bad(fmt::format("unknown piece letter '{}'", ch));
    }
  }
  if (rank != 0 || file != 8) return bad("the placement does not have 8 complete ranks");
  if (fields[1] == "w")
    b.side = white;
  else if (fields[1] == "b")
    b.side = black;
  else
    return bad(fmt::format("side to move '{}': use w or b", fields[1]));
  if (n >= 3 && fields[2] != "-")
    return bad(
        fmt::format("castling rights '{}': positions with castling rights are outside "
                    "every endgame table; use '-'",
                    fields[2]));
  if (auto why = board_error(b)) return bad(*why);
  if (n >= 4 && fields[3] != "-") {
    const std::string_view e = fields[3];
    if (e.size() != 2 || e[0] < 'a' || e[0] > 'h' || e[1] < '1' || e[1] > '8')
      return bad(fmt::format("en-passant square '{}' is not a square", e));
    const int ep = square(e[0] - 'a', e[1] - '1');
    if (rank_of(ep) != (b.side == white ? 5 : 2))
      return bad(
          fmt::format("en-passant square {} is on the wrong rank: with {} to move it "
                      "is on rank {}",
                      e, b.side == white ? "white" : "black", b.side == white ? 6 : 3));
    // The pawn that moved stands beyond the square, which it passed empty: only then does the
    // square name a capture; without a legal capture it is as if there were none (spec).
    const int pushed = ep + (b.side == white ? -8 : 8), origin = ep + (b.side == white ? 8 : -8);
    if (b.piece[pushed] == code(pawn, opposite(b.side)) && !b.piece[ep] && !b.piece[origin] &&
        ep_capture_exists(b, ep))
      b.ep = ep;
  }
  auto number = [&](std::string_view s, int& out, const char* what) -> Status {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || p != s.data() + s.size() || out < 0)
      return bad(fmt::format("{} '{}' is not a non-negative number", what, s));
    return {};
  };
  if (n >= 5) RETRA_TRY(number(fields[4], b.halfmove, "half-move clock"));
  if (n >= 6) RETRA_TRY(number(fields[5], b.fullmove, "move number"));
  return b;
}

std::string to_fen(const Board& b) {
  std::string s;
  for (int r = 7; r >= 0; --r) {
    int empty = 0;
    for (int f = 0; f < 8; ++f) {
      const std::uint8_t pc = b.piece[square(f, r)];
      if (!pc) {
        ++empty;
        continue;
      }
      if (empty) s += static_cast<char>('0' + empty);
      empty = 0;
      s += piece_letter(type_of(pc), color_of(pc));
    }
    if (empty) s += static_cast<char>('0' + empty);
    if (r) s += '/';
  }
  s += b.side == white ? " w - " : " b - ";
  s += b.ep >= 0 ? square_name(b.ep) : "-";
  s += fmt::format(" {} {}", b.halfmove, b.fullmove);
  return s;
}

}  // namespace retra::chess
