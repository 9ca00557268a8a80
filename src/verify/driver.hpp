// The verify driver, written once for every game: every segment of the database in dependency
// order, read back from its file (every block checksum checked), every stored value compared with
// the value the game's per-position check computes from the rules and the children's stored
// values, and the manifest's statistics recomputed. It shares nothing with the kernels: positions
// come from the index (unrank, next), values from the descriptor's verify_value.
// Thread safety: runs opt.threads threads internally; reentrant.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/memory.hpp"
#include "src/module/descriptor.hpp"
#include "src/verify/verify.hpp"

namespace retra::verifier {

template <GameDescriptor D>
Result<VerifyReport> run(const Database& db, const VerifyOptions& opt) {
  using G = typename D::Game;
  using Seg = typename G::SegmentId;
  using Clock = std::chrono::steady_clock;
  const auto t_all = Clock::now();
  const Nouns& nouns = D::kNouns;
  if (db.manifest().game != G::kName)
    return Error(Errc::mismatch, fmt::format("'{}' holds a {} database, not {}", db.dir().string(),
                                             db.manifest().game, G::kName));
  VerifyReport rep;
  auto fail = [&](VerifyFailure f) {
    rep.ok = false;
    rep.failure = std::move(f);
    rep.seconds = std::chrono::duration<double>(Clock::now() - t_all).count();
    return rep;
  };
  auto plain = [](std::string segment, std::string message) {
    VerifyFailure f;
    f.segment = std::move(segment);
    f.message = std::move(message);
    return f;
  };
  std::vector<std::string> names;
  for (const auto& rec : db.manifest().segments) names.push_back(rec.name);
  if (names.empty()) return rep;
  auto sel = D::select(names);
  if (!sel) return fail(plain(names.front(), sel.error().message()));
  const G& g = *sel->game;
  const int n = g.segments();
  auto id = [](const Seg& s) { return static_cast<std::size_t>(static_cast<int>(s)); };
  std::vector<std::string> name(static_cast<std::size_t>(n));
  for (Seg s : sel->order) name[id(s)] = D::segment_name(g, s);
  for (Seg s : sel->order)
    if (!db.has_segment(name[id(s)]))
      return fail(plain(name[id(s)], fmt::format("{} {} is needed by the {} of the database but "
                                                 "is not in it",
                                                 nouns.segment, name[id(s)], nouns.segments)));

  // Values read back from disk, each segment once (the verifier's own copy, not the builder's),
  // freed when no later segment reads it.
  std::vector<LargeArray<std::uint8_t>> loaded(static_cast<std::size_t>(n));
  std::vector<bool> is_loaded(static_cast<std::size_t>(n), false);
  std::vector<int> users(static_cast<std::size_t>(n), 0);
  for (Seg s : sel->order)
    for (Seg d : g.dependencies(s)) ++users[id(d)];
  auto load = [&](const Seg& s) -> Status {
    if (is_loaded[id(s)]) return {};
    auto seg = db.segment(name[id(s)]);
    if (!seg) return std::move(seg).error();
    auto arr = LargeArray<std::uint8_t>::allocate(g.segment_size(s));
    if (!arr) return std::move(arr).error();
    RETRA_TRY((*seg)->read_all(arr->span(), opt.threads));
    loaded[id(s)] = std::move(*arr);
    is_loaded[id(s)] = true;
    return {};
  };

  for (Seg s : sel->order) {
    const auto t0 = Clock::now();
    const std::string& sname = name[id(s)];
    const format::SegmentRecord* rec = db.manifest().find(sname);
    const std::uint64_t size = g.segment_size(s);
    if (rec->entries != size)
      return fail(plain(sname, fmt::format("manifest lists {} entries for {} {}, which has {}",
                                           rec->entries, nouns.segment, sname, size)));
    progress_phase(opt.progress, "verify " + D::segment_label(sname), size);
    if (Status st = load(s); !st) return fail(failure_from_error(sname, st.error()));
    for (Seg d : g.dependencies(s))
      if (Status st = load(d); !st) {
        VerifyFailure f = failure_from_error(name[id(d)], st.error());
        f.message =
            fmt::format("{} {} (needed by {}): {}", nouns.segment, name[id(d)], sname, f.message);
        return fail(f);
      }
    std::vector<const std::uint8_t*> vals(static_cast<std::size_t>(n), nullptr);
    vals[id(s)] = loaded[id(s)].data();
    for (Seg d : g.dependencies(s)) vals[id(d)] = loaded[id(d)].data();
    // The stored values this segment's children read (decoded; virtual children as the game
    // computes them from stored ones).
    struct Values {
      const G& g;
      const std::vector<const std::uint8_t*>& vals;
      int operator()(const Seg& seg, std::uint64_t index) const {
        if constexpr (HasVirtualSegments<G>) {
          if (G::virtual_segment(seg)) {
            if constexpr (HasVirtualValues<G>)
              return g.virtual_value(seg, index, *this);
            else
              return static_cast<int>(index);
          }
        }
        return decode_value(value_kind_of(g, seg),
                            vals[static_cast<std::size_t>(static_cast<int>(seg))][index]);
      }
    } values{g, vals};
    const ValueKind kind = value_kind_of(g, s);
    VerifyContext ctx;
    ctx.dtc = rec->stats.value("metric", "") == "dtc";
    ctx.kind = kind;

    const std::uint64_t block = (*db.segment(sname))->info().block_entries;
    const std::uint64_t blocks = (size + block - 1) / block;
    const std::uint8_t* const self = vals[id(s)];
    std::atomic<std::uint64_t> first_bad{size};
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads))
    for (std::uint64_t b = 0; b < blocks; ++b) {
      const std::uint64_t begin = b * block, end = std::min(size, begin + block);
      if (begin > first_bad.load(std::memory_order_relaxed)) continue;
      auto p = g.unrank(s, begin);
      for (std::uint64_t i = begin; i < end; ++i) {
        if (i > begin) g.next(s, p);
        if (decode_value(kind, self[i]) != D::verify_value(g, s, p, ctx, values)) {
          std::uint64_t cur = first_bad.load();
          while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
          }
          break;
        }
      }
      progress_advance(opt.progress, end - begin);
    }
    if (const std::uint64_t i = first_bad.load(); i < size) {
      const auto p = g.unrank(s, i);
      VerifyFailure f;
      f.segment = sname;
      f.block = i / block;
      f.index = i;
      f.position = D::position_text(g, s, p);
      f.stored = decode_value(kind, self[i]);
      f.expected = D::verify_value(g, s, p, ctx, values);
      f.message =
          fmt::format("{} {} block {} index {} position {}: stored value {}, but its moves give {}",
                      nouns.segment, sname, *f.block, i, f.position, *f.stored, *f.expected);
      return fail(f);
    }
    // The manifest's statistics must describe these values.
    auto recorded = D::stats_from_json(rec->stats);
    if (!recorded)
      return fail(plain(sname, fmt::format("{} {}: the manifest's statistics are unreadable: {}",
                                           nouns.segment, sname, recorded.error().message())));
    const auto computed =
        D::statistics(g, s, std::span<const std::uint8_t>(self, size), opt.threads);
    if (auto field = D::stats_mismatch(computed, *recorded))
      return fail(plain(sname, fmt::format("{} {}: statistic '{}' in the manifest differs from "
                                           "the values on disk",
                                           nouns.segment, sname, *field)));
    rep.segments.push_back({sname, size, std::chrono::duration<double>(Clock::now() - t0).count()});
    auto release = [&](const Seg& x) {
      loaded[id(x)] = {};
      is_loaded[id(x)] = false;
    };
    for (Seg d : g.dependencies(s))
      if (--users[id(d)] == 0) release(d);
    if (users[id(s)] == 0) release(s);
  }
  rep.seconds = std::chrono::duration<double>(Clock::now() - t_all).count();
  return rep;
}

}  // namespace retra::verifier
