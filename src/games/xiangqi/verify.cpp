// The xiangqi verifier (Fang et al. 3.4): one pass per endgame, every value read back from the
// segment files, end states checked against Table 1 and every other value against the best
// value its children propagate. Shares nothing with kernels/ but move generation.
// Thread safety: uses opt.threads threads internally; reentrant.
#include <omp.h>

#include <atomic>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "src/games/xiangqi/database.hpp"
#include "src/memory.hpp"

namespace retra::xiangqi {

namespace {

int preference(int v) { return v == 0 ? 0 : (v & 1) ? 1000 - v : -1000 + v; }

}  // namespace

Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt) {
  using Clock = std::chrono::steady_clock;
  const auto t_all = Clock::now();
  if (db.manifest().game != "xiangqi")
    return Error(Errc::mismatch, fmt::format("'{}' holds a {} database, not xiangqi",
                                             db.dir().string(), db.manifest().game));
  VerifyReport rep;
  auto fail = [&](VerifyFailure f) {
    rep.ok = false;
    rep.failure = std::move(f);
    rep.seconds = std::chrono::duration<double>(Clock::now() - t_all).count();
    return rep;
  };
  std::vector<Material> materials;
  for (const auto& rec : db.manifest().segments) {
    auto m = parse_material(rec.name);
    if (!m) return fail({rec.name, {}, {}, {}, {}, {}, m.error().message()});
    materials.push_back(*m);
  }
  if (materials.empty()) return rep;
  auto gr = Game::closure(materials);
  if (!gr) return std::move(gr).error();
  const Game& g = **gr;
  for (int s = 0; s < g.segments(); ++s)
    if (!db.has_segment(g.endgame(s).name))
      return fail({g.endgame(s).name,
                   {},
                   {},
                   {},
                   {},
                   {},
                   fmt::format("endgame {} is needed by captures but is not in the database",
                               g.endgame(s).name)});

  // Values read back from disk, each endgame once (the verifier's own copy, not the builder's).
  std::map<int, LargeArray<std::uint8_t>> loaded;
  auto load = [&](int s) -> Result<const std::uint8_t*> {
    if (auto it = loaded.find(s); it != loaded.end()) return it->second.data();
    auto seg = db.segment(g.endgame(s).name);
    if (!seg) return std::move(seg).error();
    auto arr = LargeArray<std::uint8_t>::allocate(g.segment_size(s));
    if (!arr) return std::move(arr).error();
    RETRA_TRY((*seg)->read_all(arr->span(), opt.threads));
    const std::uint8_t* p = arr->data();
    loaded.emplace(s, std::move(*arr));
    return p;
  };

  for (int s = 0; s < g.segments(); ++s) {
    const auto t0 = Clock::now();
    const Endgame& eg = g.endgame(s);
    const auto* rec = db.manifest().find(eg.name);
    const bool dtc = rec->stats.value("metric", "dtm") == "dtc";
    const std::uint64_t size = g.segment_size(s);
    progress_phase(opt.progress, fmt::format("verify {}", eg.name), size);
    std::vector<const std::uint8_t*> vals(g.segments(), nullptr);
    auto self = load(s);
    if (!self) return fail(failure_from_error(eg.name, self.error()));
    vals[s] = *self;
    for (int d : g.dependencies(s)) {
      auto dv = load(d);
      if (!dv) return fail(failure_from_error(g.endgame(d).name, dv.error()));
      vals[d] = *dv;
    }
    const std::uint64_t chunk = 1u << 14, chunks = (size + chunk - 1) / chunk;
    std::atomic<std::uint64_t> first_bad{size};
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads))
    for (std::uint64_t c = 0; c < chunks; ++c) {
      for (std::uint64_t i = c * chunk; i < std::min(size, (c + 1) * chunk); ++i) {
        if (i > first_bad.load(std::memory_order_relaxed)) break;
        const Position p = g.unrank(s, i);
        int want;
        if (!p.valid) {
          want = 0;  // holes of the index are stored as 0
        } else if (can_capture_king(g.board(s, p), p.side)) {
          want = 1;
        } else {
          int best = -1;
          const int moves = g.for_each_move(s, p, [&](const Child<int>& ch) {
            const int cv = ch.segment == Game::kArmless ? static_cast<int>(ch.index)
                                                        : vals[ch.segment][ch.index];
            const int v = dtc && ch.converts && cv != 0 ? ((cv & 1) ? 2 : 1) : cv == 0 ? 0 : cv + 1;
            if (best < 0 || preference(v) > preference(best)) best = v;
          });
          want = moves == 0 ? 2 : best;
        }
        if (vals[s][i] != want) {
          std::uint64_t cur = first_bad.load();
          while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
          }
          break;
        }
      }
      progress_advance(opt.progress, std::min(size, (c + 1) * chunk) - c * chunk);
    }
    if (const std::uint64_t i = first_bad.load(); i < size) {
      const Position p = g.unrank(s, i);
      VerifyFailure f;
      f.segment = eg.name;
      f.index = i;
      f.block = i / (*db.segment(eg.name))->info().block_entries;
      f.position = p.valid ? to_fen(g.board(s, p), p.side) : "(hole of the index)";
      f.stored = vals[s][i];
      f.message = fmt::format(
          "endgame {} index {} ({}): stored value {} is not what its moves "
          "give",
          eg.name, i, f.position, vals[s][i]);
      return fail(f);
    }
    // The manifest's statistics must describe these values.
    nlohmann::json stats = endgame_stats(g, s, vals[s], opt.threads);
    for (const char* key : {"valid_positions", "kfk", "okic", "checkmate", "stalemate", "draws",
                            "histogram", "max_dtm_plies"})
      if (stats[key] != rec->stats.value(key, nlohmann::json()))
        return fail({eg.name,
                     {},
                     {},
                     {},
                     {},
                     {},
                     fmt::format("endgame {}: statistic '{}' in the manifest differs from the "
                                 "values on disk",
                                 eg.name, key)});
    rep.segments.push_back(
        {eg.name, size, std::chrono::duration<double>(Clock::now() - t0).count()});
  }
  rep.seconds = std::chrono::duration<double>(Clock::now() - t_all).count();
  return rep;
}

}  // namespace retra::xiangqi
