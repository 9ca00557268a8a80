// Fuzz target: the position parsers of every game (Awari pit counts, xiangqi FEN, chess FEN).
// The first byte picks the game. Whatever parses must print back to text that parses to the same
// position; nothing may crash. Thread safety: single-threaded (libFuzzer).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_util.hpp"
#include "src/games/awari/board.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/xiangqi/board.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  using namespace retra;
  switch (data[0] % 3) {
    case 0: {
      auto b = awari::parse_board(text);
      if (!b) break;
      auto again = awari::parse_board(awari::format_board(*b));
      FUZZ_CHECK(again && *again == *b);
      break;
    }
    case 1: {
      auto p = xiangqi::parse_fen(text);
      if (!p) break;
      const std::string fen = xiangqi::to_fen(p->board, p->side);
      auto again = xiangqi::parse_fen(fen);
      FUZZ_CHECK(again && again->board == p->board && again->side == p->side);
      break;
    }
    default: {
      auto b = chess::parse_fen(text);
      if (!b) break;
      auto again = chess::parse_fen(chess::to_fen(*b));
      FUZZ_CHECK(again && *again == *b);
      // A parsed board is legal: its moves can be generated and played.
      chess::for_each_legal_move(*b, [&](const chess::Move& m) { (void)chess::play(*b, m); });
    }
  }
  return 0;
}
