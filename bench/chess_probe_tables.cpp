// Warm WDL probes per second on real chess tables, one thread, through the public API alone (what
// an engine calls): random legal positions of one material, each probed once to warm the cache,
// then timed passes of Prober::chess_wdl. Also prints block reads per probe (the cache's lookups),
// which tells a don't-care table's capture search from the table's own reads. A plain program,
// not a Google Benchmark: it needs a built database (bench/chess_probe.sh builds one).
// Usage: chess_probe_tables DB MATERIAL [positions=65536] [passes=30] [rounds=3] [seed=1]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "retra/probe.hpp"

namespace {

using retra::probe::ChessBoard;

// The pieces of one side of a material name ("KQP" of "KQPvKQ") as ChessBoard members.
bool add_pieces(const std::string& side, std::vector<std::uint64_t ChessBoard::*>& out) {
  static constexpr std::string_view kLetters = "KQRBNP";
  static constexpr std::uint64_t ChessBoard::*kMembers[] = {
      &ChessBoard::kings,   &ChessBoard::queens,  &ChessBoard::rooks,
      &ChessBoard::bishops, &ChessBoard::knights, &ChessBoard::pawns};
  for (char c : side) {
    const std::size_t k = kLetters.find(c);
    if (k == std::string_view::npos) return false;
    out.push_back(kMembers[k]);
  }
  return !out.empty() && out.front() == &ChessBoard::kings;
}

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: chess_probe_tables DB MATERIAL [positions=65536] [passes=30] "
                 "[rounds=3] [seed=1]\n");
    return 2;
  }
  const std::string db = argv[1], material = argv[2];
  const auto arg = [&](int i, unsigned long d) {
    return argc > i ? std::strtoul(argv[i], nullptr, 10) : d;
  };
  const std::size_t want = arg(3, 65536), passes = arg(4, 30), rounds = arg(5, 3);
  const auto seed = static_cast<unsigned>(arg(6, 1));
  const std::size_t v = material.find('v');
  std::vector<std::uint64_t ChessBoard::*> white, black;
  if (v == std::string::npos || !add_pieces(material.substr(0, v), white) ||
      !add_pieces(material.substr(v + 1), black) || want == 0 || passes == 0) {
    std::fprintf(stderr, "bad material '%s' (e.g. KQPvKQ) or counts\n", material.c_str());
    return 2;
  }
  retra::probe::Options opt;
  opt.cache_bytes = std::size_t{3} << 30;  // every block of a 5-piece table stays
  retra::probe::Value err;
  auto p = retra::probe::Prober::open(db, opt, &err);
  if (!p) {
    std::fprintf(stderr, "%s\n", err.message.c_str());
    return 1;
  }
  // Random placements; the probe itself refuses the illegal ones (the side not to move in
  // check), and any other error is the database's: reported, not skipped.
  std::mt19937_64 rng(seed);
  std::vector<ChessBoard> pos;
  std::size_t tries = 0;
  while (pos.size() < want) {
    if (++tries > 100 * want) {
      std::fprintf(stderr, "too few legal positions of %s\n", material.c_str());
      return 1;
    }
    ChessBoard b;
    auto place = [&](const std::vector<std::uint64_t ChessBoard::*>& side, std::uint64_t& colour) {
      for (auto member : side) {
        int sq;
        do sq = static_cast<int>(rng() % 64);
        while (((b.white | b.black) >> sq & 1) ||
               (member == &ChessBoard::pawns && (sq < 8 || sq >= 56)));
        b.*member |= std::uint64_t{1} << sq;
        colour |= std::uint64_t{1} << sq;
      }
    };
    place(white, b.white);
    place(black, b.black);
    b.white_to_move = rng() & 1;
    const retra::probe::Value r = p->chess_wdl(b);
    if (r.status == retra::probe::Status::invalid_argument) continue;
    if (!r) {
      std::fprintf(stderr, "probe failed: %s\n", r.message.c_str());
      return 1;
    }
    pos.push_back(b);
  }
  for (const auto& b : pos) (void)p->chess_wdl(b);  // every block this needs, decompressed
  std::printf("db %s, %s: %zu legal positions of %zu tried, %zu passes\n", db.c_str(),
              material.c_str(), pos.size(), tries, passes);
  long checksum = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    const retra::probe::CacheStats before = p->cache_stats();
    const double t0 = thread_seconds();
    for (std::size_t k = 0; k < passes; ++k)
      for (const auto& b : pos) checksum += p->chess_wdl(b).value;
    const double dt = thread_seconds() - t0;
    const retra::probe::CacheStats after = p->cache_stats();
    const double probes = static_cast<double>(pos.size() * passes);
    const auto reads =
        static_cast<double>((after.hits + after.misses) - (before.hits + before.misses));
    std::printf(
        "round %zu: %.3f M WDL probes/s (CPU time %.2f s), %.3f block reads per probe, "
        "%llu misses\n",
        r + 1, probes / dt * 1e-6, dt, reads / probes,
        static_cast<unsigned long long>(after.misses - before.misses));
  }
  std::printf("checksum %ld\n", checksum);
  return 0;
}
