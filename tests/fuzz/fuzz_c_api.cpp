// Fuzz target: the C ABI's probe calls on real databases of every game (built once): text probes,
// batches, Awari pits, xiangqi boards and FENs, chess bitboards and root probes, with arbitrary
// arguments. Every call returns a status; none may crash. Thread safety: single-threaded.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.hpp"
#include "retra/retra.h"

namespace {
retra_db* handle(int k) {
  static retra_db* dbs[3] = {};
  static bool opened = false;
  if (!opened) {
    opened = true;
    const char* names[3] = {"awari", "xq", "chess"};
    for (int i = 0; i < 3; ++i) {
      const std::string dir = (retra::fuzz::databases() / names[i]).string();
      FUZZ_CHECK(retra_open(dir.c_str(), 1 << 20, &dbs[i]) == 0);
    }
  }
  return dbs[k];
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  retra_db* db = handle(data[0] % 3);
  const int call = data[1] % 6;
  const std::uint8_t* p = data + 2;
  const std::size_t n = size - 2;
  int value = 0;
  switch (call) {
    case 0: {  // any game's text
      const std::string text(reinterpret_cast<const char*>(p), n);
      (void)retra_probe(db, text.c_str(), &value);
      const char* batch[2] = {text.c_str(), "1,0,0,0,0,0,0,0,0,0,0,0"};
      int values[2], statuses[2];
      (void)retra_probe_batch(db, batch, 2, values, statuses);
      break;
    }
    case 1: {  // Awari pits, any ints
      int pits[12] = {};
      std::memcpy(pits, p, std::min(n, sizeof pits));
      (void)retra_awari_probe(db, pits, &value);
      break;
    }
    case 2: {  // xiangqi board, any bytes
      unsigned char board[90] = {};
      std::memcpy(board, p, std::min<std::size_t>(n, 90));
      (void)retra_xiangqi_probe_board(db, board, n > 90 ? p[90] : 0, &value);
      break;
    }
    case 3: {  // xiangqi FEN
      const std::string text(reinterpret_cast<const char*>(p), n);
      (void)retra_xiangqi_probe(db, text.c_str(), &value);
      break;
    }
    default: {  // chess bitboards, any masks
      unsigned long long m[8] = {};
      std::memcpy(m, p, std::min(n, sizeof m));
      const unsigned rule50 = n > 64 ? p[64] : 0, ep = n > 65 ? p[65] : 0;
      const int white = n > 66 ? p[66] & 1 : 1;
      if (call == 4) {
        int wdl, dtz, dtm, has_dtm;
        (void)retra_chess_probe(db, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], rule50, ep,
                                white, &wdl, &dtz, &dtm, &has_dtm);
      } else {
        retra_chess_move moves[256];
        std::size_t count = 0;
        (void)retra_chess_probe_root(db, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], rule50, ep,
                                     white, moves, n > 67 ? p[67] : 256, &count);
      }
    }
  }
  (void)retra_last_error();
  return 0;
}
