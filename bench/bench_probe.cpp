// Probe throughput of the probing library (retra::probe::Prober), per game: random positions,
// one thread and all threads, warm cache (every block already decompressed) and cold cache (a
// cache smaller than one block per shard, so every probe decompresses a block).
// The databases are built once at start in a temporary directory: Awari 0..16 stones
// (2.6 M positions in the 16-stone segment), xiangqi KCPKGM (11.6 M entries; large enough that
// both encodings store it in another entry order, docs/FORMAT.md) with its supporting endgames,
// chess KQvKR and KRvKP (WDL, DTZ and DTM) with the 3-piece tables they convert into (and a copy
// in zstd -3 with 64 Ki-entry blocks, to show what chess's larger default blocks cost, and one
// with don't-care entries, to show what the probes' search costs). Reported:
// items_per_second = probes per second of one benchmark thread.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "retra/probe.hpp"
#include "src/build/build.hpp"
#include "src/games/awari/module.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/solver.hpp"
#include "src/games/xiangqi/module.hpp"
#include "src/module/module.hpp"
#include "src/recompress.hpp"

namespace {

using namespace retra;

struct Databases {
  std::filesystem::path dir;
  std::vector<std::array<int, 12>> awari;              // random 16-stone positions
  std::vector<std::string> fens;                       // random valid KCPKGM positions
  std::vector<std::pair<xiangqi::Board, int>> boards;  // the same positions as boards
  std::vector<probe::ChessBoard> chess;                // random legal KQvKR and KRvKP positions
  std::vector<std::string> chess_fens;                 // the same as FEN
  Databases() {
    dir =
        std::filesystem::temp_directory_path() / ("retra-bench-probe-" + std::to_string(getpid()));
    BuildRequest a;
    a.game = "awari";
    a.targets = awari::stone_range(0, 16);
    a.db = dir / "awari";
    a.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (!build(a)) std::abort();
    BuildRequest x = a;
    x.game = "xiangqi";
    x.targets = {"KCPKGM"};
    x.db = dir / "xiangqi";
    if (!build(x)) std::abort();
    BuildRequest c = a;
    c.game = "chess";
    OptionValues ov;
    ov["--endgame"] = {"KQvKR", "KRvKP"};
    auto targets = find_module("chess")->targets(ov);
    if (!targets) std::abort();
    c.targets = *targets;
    c.db = dir / "chess";
    if (!build(c)) std::abort();
    // The same Awari and xiangqi databases in the archival encoding (`retra recompress`
    // defaults: zstd -19 or rANS, 1 Mi-entry blocks): the "z" variants below.
    for (const char* g : {"awari", "xiangqi"}) {
      std::filesystem::copy(dir / g, dir / (std::string(g) + "-z"));
      RecompressOptions ro;
      ro.threads = a.threads;
      if (!recompress(dir / (std::string(g) + "-z"), ro)) std::abort();
    }
    // The chess tables in the encoding builds used before chess chose its own (zstd -3, 64 Ki
    // entries): what the larger default blocks cost a cold probe.
    std::filesystem::copy(dir / "chess", dir / "chess-64k");
    RecompressOptions small;
    small.threads = a.threads;
    small.zstd_level = format::kDefaultZstdLevel;
    small.block_entries = format::kDefaultBlockEntries;
    if (!recompress(dir / "chess-64k", small)) std::abort();
    // And with don't-care entries (`recompress --dont-care`, the build's -9 and 256 Ki-entry
    // blocks): what the probes' search over captures costs, and over every zeroing move where
    // those decided the entries (`--dont-care-moves conversions`).
    std::filesystem::copy(dir / "chess", dir / "chess-dc");
    std::filesystem::copy(dir / "chess", dir / "chess-dc-conversions");
    RecompressOptions dc;
    dc.threads = a.threads;
    dc.zstd_level = 9;
    dc.block_entries = 1u << 18;
    dc.dont_care = true;
    if (!recompress(dir / "chess-dc", dc)) std::abort();
    dc.dont_care_moves = format::DontCareMoves::conversions;
    if (!recompress(dir / "chess-dc-conversions", dc)) std::abort();
    std::mt19937_64 rng(11);
    while (chess.size() < (1u << 16)) {
      using namespace chess;
      Board b;
      const bool pawns = rng() % 2;
      const std::uint8_t pieces[4] = {code(king, white), code(king, black),
                                      code(pawns ? rook : queen, white),
                                      code(pawns ? pawn : rook, black)};
      bool ok = true;
      for (std::uint8_t pc : pieces) {
        const int sq = static_cast<int>(rng() % 64);
        ok = ok && !b.piece[sq] && !(type_of(pc) == pawn && (rank_of(sq) == 0 || rank_of(sq) == 7));
        b.piece[sq] = pc;
      }
      b.side = rng() % 2 ? white : black;
      if (!ok || board_error(b)) continue;
      chess.push_back(bitboards_of(b));
      chess_fens.push_back(to_fen(b));
    }
    for (int i = 0; i < (1 << 16); ++i) {
      const auto b = awari::unrank(16, rng() % awari::positions(16));
      std::array<int, 12> p;
      for (int k = 0; k < 12; ++k) p[k] = b.pit[k];
      awari.push_back(p);
    }
    auto g = xiangqi::Game::closure({*xiangqi::parse_material("KCPKGM")});
    const auto& game = **g;
    const int s = game.find("KCPKGM");
    while (fens.size() < (1u << 14)) {
      const auto pos = game.unrank(s, rng() % game.segment_size(s));
      if (!pos.valid) continue;
      fens.push_back(xiangqi::to_fen(game.board(s, pos), pos.side));
      boards.emplace_back(game.board(s, pos), pos.side);
    }
  }
  ~Databases() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Databases& dbs() {
  static Databases d;
  return d;
}

// One Prober per (game, cache size), shared by the benchmark's threads.
probe::Prober& prober(const std::string& game, std::size_t cache) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::size_t>, std::unique_ptr<probe::Prober>> m;
  std::lock_guard lock(mu);
  auto& p = m[{game, cache}];
  if (!p) {
    probe::Value err;
    p = probe::Prober::open((dbs().dir / game).string(), {.cache_bytes = cache}, &err);
    if (!p) std::abort();
  }
  return *p;
}

constexpr std::size_t kWarm = std::size_t{1} << 30;  // holds every block
constexpr std::size_t kCold = std::size_t{1} << 18;  // < 1 block per shard: reads through

// range(0): warm (1) or cold (0); range(1): the build's encoding (0) or the archival one (1).
void warm_cold_archival(benchmark::internal::Benchmark* b) {
  b->Args({1, 0})->Args({0, 0})->Args({1, 1})->Args({0, 1})->ThreadRange(1, 16)->UseRealTime();
}

void BM_AwariProbe(benchmark::State& st) {
  const std::size_t cache = st.range(0) ? kWarm : kCold;
  auto& p = prober(st.range(1) ? "awari-z" : "awari", cache);
  const auto& pos = dbs().awari;
  if (st.range(0) && st.thread_index() == 0)
    for (const auto& x : pos) benchmark::DoNotOptimize(p.awari(x));  // warm every block
  std::size_t i = static_cast<std::size_t>(st.thread_index()) * 7919;
  for (auto _ : st) {
    auto v = p.awari(pos[i++ & (pos.size() - 1)]);
    benchmark::DoNotOptimize(v.value);
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel(std::string(st.range(0) ? "warm" : "cold") + (st.range(1) ? " archival" : ""));
}
BENCHMARK(BM_AwariProbe)->Apply(warm_cold_archival);

void BM_AwariProbeBatch(benchmark::State& st) {
  auto& p = prober("awari", kWarm);
  const auto& pos = dbs().awari;
  std::vector<probe::Value> out(256);
  std::size_t i = 0;
  for (auto _ : st) {
    p.awari_batch(std::span(pos).subspan(i, 256), out);
    i = (i + 256) & (pos.size() - 1);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(st.iterations() * 256);
}
BENCHMARK(BM_AwariProbeBatch)->ThreadRange(1, 16)->UseRealTime();

void BM_XiangqiProbe(benchmark::State& st) {
  const std::size_t cache = st.range(0) ? kWarm : kCold;
  auto& p = prober("xiangqi", cache);
  const auto& fens = dbs().fens;
  std::size_t i = static_cast<std::size_t>(st.thread_index()) * 7919;
  for (auto _ : st) {
    auto v = p.xiangqi(fens[i++ & (fens.size() - 1)]);
    benchmark::DoNotOptimize(v.value);
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel(st.range(0) ? "warm" : "cold");
}
BENCHMARK(BM_XiangqiProbe)->Arg(1)->Arg(0)->ThreadRange(1, 16)->UseRealTime();

// The same positions by board (engines and the solver): no FEN parsing.
void BM_XiangqiProbeBoard(benchmark::State& st) {
  const std::size_t cache = st.range(0) ? kWarm : kCold;
  auto& p = prober(st.range(1) ? "xiangqi-z" : "xiangqi", cache);
  const auto& boards = dbs().boards;
  std::size_t i = static_cast<std::size_t>(st.thread_index()) * 7919;
  for (auto _ : st) {
    const auto& [b, side] = boards[i++ & (boards.size() - 1)];
    auto v = p.xiangqi_board(b, side);
    benchmark::DoNotOptimize(v.value);
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel(std::string(st.range(0) ? "warm" : "cold") + (st.range(1) ? " archival" : ""));
}
BENCHMARK(BM_XiangqiProbeBoard)->Apply(warm_cold_archival);

// Chess by bitboards, as engines probe at their leaves: WDL only (Fathom's tb_probe_wdl: the
// bar is 1.5 M probes per second per thread, warm), and WDL + DTZ + DTM.
// range(0): warm (1) or cold (0); range(1): the build's encoding (0), -3 with 64 Ki blocks (1),
// or the build's with don't-care entries decided by captures (2) or by every zeroing move (3).
const char* chess_db(std::int64_t variant) {
  return variant == 3   ? "chess-dc-conversions"
         : variant == 2 ? "chess-dc"
         : variant == 1 ? "chess-64k"
                        : "chess";
}
const char* chess_label(std::int64_t variant) {
  return variant == 3   ? " don't-care (conversions)"
         : variant == 2 ? " don't-care"
         : variant == 1 ? " -3 64 Ki"
                        : "";
}
void BM_ChessProbeWdl(benchmark::State& st) {
  const std::size_t cache = st.range(0) ? kWarm : kCold;
  auto& p = prober(chess_db(st.range(1)), cache);
  const auto& pos = dbs().chess;
  if (st.range(0) && st.thread_index() == 0)
    for (const auto& x : pos) benchmark::DoNotOptimize(p.chess(x));  // warm every block
  std::size_t i = static_cast<std::size_t>(st.thread_index()) * 7919;
  for (auto _ : st) {
    auto v = p.chess_wdl(pos[i++ & (pos.size() - 1)]);
    benchmark::DoNotOptimize(v.value);
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel(std::string(st.range(0) ? "warm" : "cold") + chess_label(st.range(1)));
}
BENCHMARK(BM_ChessProbeWdl)
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 2})
    ->Args({0, 2})
    ->Args({1, 3})
    ->ThreadRange(1, 16)
    ->UseRealTime();

// range(0): the build's encoding (0) or with don't-care entries (2, 3).
void BM_ChessProbeAll(benchmark::State& st) {
  auto& p = prober(chess_db(st.range(0)), kWarm);
  const auto& pos = dbs().chess;
  if (st.thread_index() == 0)
    for (const auto& x : pos) benchmark::DoNotOptimize(p.chess(x));
  std::size_t i = static_cast<std::size_t>(st.thread_index()) * 7919;
  for (auto _ : st) {
    auto v = p.chess(pos[i++ & (pos.size() - 1)]);
    benchmark::DoNotOptimize(v.dtm);
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel(std::string("warm") + chess_label(st.range(0)));
}
BENCHMARK(BM_ChessProbeAll)->Arg(0)->Arg(2)->Arg(3)->ThreadRange(1, 16)->UseRealTime();

// By FEN text through the game-blind entry point (what `retra probe` and Python use).
void BM_ChessProbeFen(benchmark::State& st) {
  auto& p = prober("chess", kWarm);
  const auto& fens = dbs().chess_fens;
  std::size_t i = static_cast<std::size_t>(st.thread_index()) * 7919;
  for (auto _ : st) {
    auto v = p.probe(fens[i++ & (fens.size() - 1)]);
    benchmark::DoNotOptimize(v.value);
  }
  st.SetItemsProcessed(st.iterations());
  st.SetLabel("warm");
}
BENCHMARK(BM_ChessProbeFen)->ThreadRange(1, 16)->UseRealTime();

}  // namespace
