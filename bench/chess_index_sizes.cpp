// Prints docs/CHESS.md's index table: for every chess table of 3..N pieces (default 6), our index
// size (placements per side to move, all pawn segments together) against Syzygy's scheme (462
// king pairs x the other pieces as combinations; pawn tables by the leading pawn's file), and
// the ratio. Exits 1 if any of ours were larger. A plain program, not a Google Benchmark.
// Usage: build/release/bench/chess_index_sizes [N]
#include <cstdio>
#include <cstdlib>

#include "src/games/chess/index.hpp"
#include "src/games/chess/material.hpp"

int main(int argc, char** argv) {
  using namespace retra::chess;
  const int largest = argc > 1 ? std::atoi(argv[1]) : 6;
  if (largest < 3 || largest > 7) {
    std::fprintf(stderr, "usage: chess_index_sizes [N], 3 <= N <= 7\n");
    return 2;
  }
  int larger = 0;
  for (int n = 3; n <= largest; ++n) {
    std::uint64_t ours_all = 0, syzygy_all = 0;
    std::printf("\n| %d pieces | segments | ours (per side) | Syzygy's scheme | ours / Syzygy |\n",
                n);
    std::printf("|---|---:|---:|---:|---:|\n");
    for (const Material& m : materials_with(n)) {
      std::uint64_t ours = 0, syzygy = 0;
      int segments = 0;
      for (const PawnProfile& p : profiles(m)) {
        const Indexer ix(TableKey{m, p});
        ours += ix.size();
        syzygy = ix.syzygy_size();
        ++segments;
      }
      larger += ours > syzygy;
      ours_all += ours;
      syzygy_all += syzygy;
      std::printf("| %s | %d | %llu | %llu | %.3f |\n", m.name().c_str(), segments,
                  static_cast<unsigned long long>(ours), static_cast<unsigned long long>(syzygy),
                  static_cast<double>(ours) / static_cast<double>(syzygy));
    }
    std::printf("| **all %d-piece** | | %llu | %llu | %.3f |\n", n,
                static_cast<unsigned long long>(ours_all),
                static_cast<unsigned long long>(syzygy_all),
                static_cast<double>(ours_all) / static_cast<double>(syzygy_all));
  }
  if (larger) std::fprintf(stderr, "%d tables have a larger index than Syzygy's scheme\n", larger);
  return larger ? 1 : 0;
}
