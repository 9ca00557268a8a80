// Micro benchmarks of the chess generator's hot paths, per position of a 5-piece table: the
// in-order step with its legality test (every index of the backward kernel's initialization),
// counting moves and ranking the converting ones (initialization), every move ranked (the
// verifier's), the unmoves of a decided position (every frontier entry of every level) and
// ranking. KQRvKR is pawnless (8 symmetries), KRPvKR's largest segment has a pawn (the mirror
// only). bench/chess_build.sh times whole tables.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "src/games/chess/game.hpp"

namespace {

using namespace retra::chess;

struct Fixture {
  std::shared_ptr<const Game> game;
  int segment = -1;
  std::vector<Position> legal;  // random legal positions of the segment
};

// The table's game (its closure) and its largest segment, with 4096 random legal positions.
const Fixture& fixture(const std::string& table) {
  static std::vector<std::pair<std::string, std::unique_ptr<Fixture>>> cache;
  for (const auto& [name, f] : cache)
    if (name == table) return *f;
  auto m = parse_material(table);
  if (!m) {
    std::fprintf(stderr, "bench_chess: %s\n", m.error().message().c_str());
    std::exit(2);
  }
  auto g = Game::closure({*m}, false);
  if (!g) {
    std::fprintf(stderr, "bench_chess: %s\n", g.error().message().c_str());
    std::exit(2);
  }
  auto f = std::make_unique<Fixture>();
  f->game = *g;
  const Game& game = *f->game;
  for (int s = 0; s < game.tables(); ++s)
    if (game.table(s).key.material == m->canonicalized() &&
        (f->segment < 0 || game.segment_size(s) > game.segment_size(f->segment)))
      f->segment = s;
  std::mt19937_64 rng(7);
  while (f->legal.size() < 4096) {
    const Position p = game.unrank(f->segment, rng() % game.segment_size(f->segment));
    if (p.valid) f->legal.push_back(p);
  }
  cache.emplace_back(table, std::move(f));
  return *cache.back().second;
}

// The initialization's enumeration: next() over consecutive indices (holes included).
void BM_Next(benchmark::State& st, const std::string& table) {
  const Fixture& f = fixture(table);
  const Game& g = *f.game;
  Position p = g.unrank(f.segment, 0);
  for (auto _ : st) {
    if (!g.next(f.segment, p)) p = g.unrank(f.segment, 0);
    benchmark::DoNotOptimize(p.valid);
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

// The initialization's move generation: quiet moves counted, converting ones ranked.
void BM_CountMoves(benchmark::State& st, const std::string& table) {
  const Fixture& f = fixture(table);
  const Game& g = *f.game;
  std::size_t i = 0;
  std::uint64_t sum = 0;
  for (auto _ : st) {
    const retra::MoveCount mc =
        g.for_each_conversion(f.segment, f.legal[i++ & 4095], [&](const retra::Child<int>& c) {
          sum += c.index + static_cast<std::uint64_t>(c.segment);
        });
    benchmark::DoNotOptimize(mc);
  }
  benchmark::DoNotOptimize(sum);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

// visit(game, segment, position, sum, items) over the fixture's positions in turn, adding the
// ranks it finds to sum and counting them in items (reported per position as `counter`).
template <class Visit>
void per_position(benchmark::State& st, const std::string& table, const char* counter,
                  Visit visit) {
  const Fixture& f = fixture(table);
  std::size_t i = 0;
  std::uint64_t sum = 0, items = 0;
  for (auto _ : st) visit(*f.game, f.segment, f.legal[i++ & 4095], sum, items);
  benchmark::DoNotOptimize(sum);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
  st.counters[counter] =
      static_cast<double>(items) / static_cast<double>(std::max<std::int64_t>(1, st.iterations()));
}

// The one-pass verifier's move generation (probes and the solver play moves on boards): every
// move's child ranked, quiet ones too.
void BM_Moves(benchmark::State& st, const std::string& table) {
  per_position(st, table, "children/position",
               [](const Game& g, int s, const Position& p, std::uint64_t& sum, std::uint64_t& n) {
                 g.for_each_move(s, p, [&](const retra::Child<int>& c) {
                   sum += c.index + static_cast<std::uint64_t>(c.segment);
                   ++n;
                 });
               });
}

// Propagation: the parents of a decided position, ranked.
void BM_Unmoves(benchmark::State& st, const std::string& table) {
  per_position(st, table, "parents/position",
               [](const Game& g, int s, const Position& p, std::uint64_t& sum, std::uint64_t& n) {
                 g.for_each_unmove(s, p, [&](std::uint64_t r, const Position&) {
                   sum += r;
                   ++n;
                 });
               });
}

void BM_Rank(benchmark::State& st, const std::string& table) {
  const Fixture& f = fixture(table);
  const Game& g = *f.game;
  std::size_t i = 0;
  for (auto _ : st) benchmark::DoNotOptimize(g.rank(f.segment, f.legal[i++ & 4095]));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

void BM_Unrank(benchmark::State& st, const std::string& table) {
  const Fixture& f = fixture(table);
  const Game& g = *f.game;
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> idx(4096);
  for (auto& x : idx) x = rng() % g.segment_size(f.segment);
  std::size_t i = 0;
  for (auto _ : st) benchmark::DoNotOptimize(g.unrank(f.segment, idx[i++ & 4095]));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}

BENCHMARK_CAPTURE(BM_Next, KQRvKR, std::string("KQRvKR"));
BENCHMARK_CAPTURE(BM_Next, KRPvKR, std::string("KRPvKR"));
BENCHMARK_CAPTURE(BM_CountMoves, KQRvKR, std::string("KQRvKR"));
BENCHMARK_CAPTURE(BM_CountMoves, KRPvKR, std::string("KRPvKR"));
BENCHMARK_CAPTURE(BM_Moves, KQRvKR, std::string("KQRvKR"));
BENCHMARK_CAPTURE(BM_Moves, KRPvKR, std::string("KRPvKR"));
BENCHMARK_CAPTURE(BM_Unmoves, KQRvKR, std::string("KQRvKR"));
BENCHMARK_CAPTURE(BM_Unmoves, KRPvKR, std::string("KRPvKR"));
BENCHMARK_CAPTURE(BM_Rank, KQRvKR, std::string("KQRvKR"));
BENCHMARK_CAPTURE(BM_Rank, KRPvKR, std::string("KRPvKR"));
BENCHMARK_CAPTURE(BM_Unrank, KQRvKR, std::string("KQRvKR"));
BENCHMARK_CAPTURE(BM_Unrank, KRPvKR, std::string("KRPvKR"));

}  // namespace
