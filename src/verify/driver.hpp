// The verify driver, written once for every game: every segment of the database in dependency
// order, read back from its file (every block checksum checked), every stored value compared with
// the value the game's per-position check computes from the rules and the children's stored
// values, and the manifest's statistics recomputed. The one-pass check shares nothing with the
// kernels: positions come from the index (unrank, next), values from the descriptor's
// verify_value. Only `--full` runs a kernel: the one the build did not use (recompute below).
// Thread safety: runs opt.threads threads internally; reentrant.
#pragma once

#include <fnmatch.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "kernels/backward.hpp"
#include "kernels/forward_iteration.hpp"
#include "src/build/finished.hpp"
#include "src/database.hpp"
#include "src/memory.hpp"
#include "src/module/descriptor.hpp"
#include "src/module/dont_care.hpp"
#include "src/verify/verify.hpp"

namespace retra::verifier {

// Wrong positions listed per segment (spread over its blocks, at least 16 per block), and how
// many of them are examined for the culprit (each costs one move generation): bounds on the
// memory and time spent on a badly damaged segment.
inline constexpr std::size_t kListed = 1 << 20;
inline constexpr std::size_t kDiagnosed = 1 << 16;

struct Recomputed {
  std::string kernel;
  LargeArray<std::uint8_t> values;
};

// `verify --full` for a score segment: its values recomputed from the verified supporting
// segments `vals` (by segment id) by the kernel its build did not use ("forward" for "backward"
// and the other way round). The kernels are the builder's own: what makes this a proof is that
// the two are different algorithms (value iteration from zero against retrograde counters,
// docs/VERIFY.md) that agree only on the game's values.
template <class G>
Result<Recomputed> recompute(const G& g, const typename G::SegmentId& s,
                             const std::vector<const std::uint8_t*>& vals,
                             const std::string& built_with, const VerifyOptions& opt,
                             const std::string& label) {
  builder::Lookup<G, ValueKind::score> lookup(g, g.segments());
  for (const auto& d : g.dependencies(s))
    lookup.use(static_cast<int>(d), vals[static_cast<std::size_t>(static_cast<int>(d))]);
  const std::uint64_t size = g.segment_size(s);
  auto values = LargeArray<std::uint8_t>::allocate(size);
  if (!values) return std::move(values).error();
  kernels::KernelOptions ko;
  ko.threads = std::max(1, opt.threads);
  ko.progress = opt.progress;
  ko.label = label + " (full: recomputing)";
  Recomputed r;
  if (built_with == "forward") {
    r.kernel = "backward";
    auto st = kernels::backward_as<ValueKind::score>(g, s, values->span(), lookup, ko);
    if (!st) return std::move(st).error();
  } else {
    r.kernel = "forward";
    auto exits = LargeArray<std::int8_t>::allocate(size);
    if (!exits) return std::move(exits).error();
    kernels::forward_iteration(
        g, s, std::span<std::int8_t>(reinterpret_cast<std::int8_t*>(values->data()), size),
        exits->span(), lookup, ko);
  }
  RETRA_TRY(lookup.take_error());
  r.values = std::move(*values);
  return r;
}

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
  rep.full = opt.full;
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
  // A database may be partial (a build stopped by a full disk, a kill, or asked for less than
  // the selection spans): what it holds must be complete under its dependencies, and only that
  // is verified.
  std::vector<bool> present(static_cast<std::size_t>(n), false);
  for (Seg s : sel->order) present[id(s)] = db.has_segment(name[id(s)]);
  for (Seg s : sel->order)
    if (present[id(s)])
      for (Seg d : g.dependencies(s))
        if (!present[id(d)])
          return fail(plain(name[id(d)], fmt::format("{} {} is needed by {} but is not in the "
                                                     "database; build it",
                                                     nouns.segment, name[id(d)], name[id(s)])));

  // The segments to check: all present ones, or those opt.only selects (each pattern must
  // select one); the others are read where checked ones need them.
  std::vector<bool> checked = opt.only.empty() ? present : std::vector<bool>(present.size());
  if (!opt.only.empty()) {
    auto selects = [](const std::string& pattern, const std::string& sname) {
      if (sname == pattern) return true;
      if (sname.size() > pattern.size() && sname.compare(0, pattern.size(), pattern) == 0 &&
          (sname[pattern.size()] == '_' || sname[pattern.size()] == '.'))
        return true;
      return fnmatch(pattern.c_str(), sname.c_str(), 0) == 0;
    };
    for (const std::string& pattern : opt.only) {
      bool any = false;
      for (Seg s : sel->order)
        if (present[id(s)] && selects(pattern, name[id(s)])) checked[id(s)] = any = true;
      if (!any)
        return Error(Errc::not_found,
                     fmt::format("no {} of '{}' matches '{}'; `retra info --db {}` lists them",
                                 nouns.segment, db.dir().string(), pattern, db.dir().string()));
    }
    std::vector<bool> needed(present.size(), false);
    for (Seg s : sel->order)
      if (checked[id(s)])
        for (Seg d : g.dependencies(s)) needed[id(d)] = !checked[id(d)];
    for (Seg s : sel->order)
      if (needed[id(s)]) rep.unchecked.push_back(name[id(s)]);
  }

  // Values read back from disk, each segment once (the verifier's own copy, not the builder's),
  // freed when no later segment reads it.
  std::vector<LargeArray<std::uint8_t>> loaded(static_cast<std::size_t>(n));
  // Each loaded segment's reader, for its values beyond a byte (the far section).
  std::vector<const format::SegmentReader*> readers(static_cast<std::size_t>(n), nullptr);
  std::vector<bool> is_loaded(static_cast<std::size_t>(n), false);
  std::vector<int> users(static_cast<std::size_t>(n), 0);
  for (Seg s : sel->order)
    if (checked[id(s)])
      for (Seg d : g.dependencies(s)) ++users[id(d)];
  // A segment with don't-care entries (docs/FORMAT.md, kDontCare) stores values no better than
  // the truth, which is the better of the stored value and what the converting moves give: its
  // loaded copy gets that value back, from its dependencies' loaded (and so restored) values,
  // before anything reads it. The checks below then compare the restored values with the rules
  // as they compare any other; a stored value better than the truth, or worse without a
  // converting move that gives the truth, stays wrong there.
  std::function<Status(const Seg&)> load;
  auto restore = [&](const Seg& s) -> Status {
    if constexpr (HasDontCare<D>) {
      const ValueKind kind = value_kind_of(g, s);
      const auto rank = D::dont_care_rank(kind);
      if (!rank)
        return Error(Errc::corrupt, fmt::format("{} {} has don't-care entries, which its values "
                                                "cannot have (a damaged header?)",
                                                nouns.segment, name[id(s)]));
      for (Seg d : g.dependencies(s)) RETRA_TRY(load(d));
      auto loaded_value = [&](const Seg& seg, std::uint64_t index) {
        if (const auto v = readers[id(seg)]->far_value(index)) return static_cast<int>(*v);
        return decode_value(value_kind_of(g, seg), loaded[id(seg)].data()[index]);
      };
      const VirtualAware<G, decltype(loaded_value)> deps{g, loaded_value};
      const format::SegmentReader* reader = readers[id(s)];
      VerifyContext ctx;
      ctx.kind = kind;
      // The moves the probes search: captures alone where the file says so (kDontCareCaptures).
      ctx.captures_only = reader->dont_care_moves() == format::DontCareMoves::captures;
      std::uint8_t* const self = loaded[id(s)].data();
      const std::uint64_t size = g.segment_size(s);
      constexpr std::uint64_t kChunk = 1 << 16;
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads))
      for (std::uint64_t c = 0; c < (size + kChunk - 1) / kChunk; ++c) {
        const std::uint64_t begin = c * kChunk, end = std::min(size, begin + kChunk);
        auto p = g.unrank(s, begin);
        for (std::uint64_t i = begin; i < end; ++i) {
          if (i > begin) g.next(s, p);
          if (reader->far_value(i)) continue;  // exact
          const std::optional<int> v = D::conversion_value(g, s, p, ctx, deps);
          if (!v) continue;
          int want = *v;
          if (reader->class_only(i)) {
            if constexpr (HasClassHalves<G>) want = g.class_of(s, *v);
          }
          if (want < 0 || want > 255) continue;  // no byte: cannot be what the file left out
          const auto b = static_cast<std::uint8_t>(want);
          if ((*rank)[b] > (*rank)[self[i]]) self[i] = b;
        }
      }
      return {};
    } else {
      return Error(Errc::corrupt, fmt::format("{} {} has don't-care entries, which {} segments "
                                              "cannot have (a damaged header?)",
                                              nouns.segment, name[id(s)], G::kName));
    }
  };
  load = [&](const Seg& s) -> Status {
    if (is_loaded[id(s)]) return {};
    auto seg = db.segment(name[id(s)]);
    if (!seg) return std::move(seg).error();
    auto arr = LargeArray<std::uint8_t>::allocate(g.segment_size(s));
    if (!arr) return std::move(arr).error();
    RETRA_TRY((*seg)->read_all(arr->span(), opt.threads));
    loaded[id(s)] = std::move(*arr);
    readers[id(s)] = *seg;
    is_loaded[id(s)] = true;
    if ((*seg)->dont_care()) RETRA_TRY(restore(s));
    return {};
  };

  std::uint64_t positions = 0;  // to check: the bar's estimate of the time left counts them
  for (Seg s : sel->order)
    if (checked[id(s)]) positions += g.segment_size(s);
  progress_job(opt.progress, positions);
  for (Seg s : sel->order) {
    if (!checked[id(s)]) continue;
    const auto t0 = Clock::now();
    const std::string& sname = name[id(s)];
    const format::SegmentRecord* rec = db.manifest().find(sname);
    const std::uint64_t size = g.segment_size(s);
    if (rec->entries != size)
      return fail(plain(sname, fmt::format("manifest lists {} entries for {} {}, which has {}",
                                           rec->entries, nouns.segment, sname, size)));
    progress_phase(opt.progress, "verify " + D::segment_label(sname), size);
    // Where each segment's stored values come from, one flat entry per segment: every move reads
    // one, and following readers[] to each segment's far list drew about 8% of the samples of an
    // endgame table's check (perf); with this entry the check takes about 5% less time.
    struct Source {
      const std::uint8_t* bytes = nullptr;
      const format::SegmentReader* far = nullptr;  // only where the segment lists far values
      ValueKind kind = ValueKind::score;
    };
    std::vector<Source> sources(static_cast<std::size_t>(n));
    std::vector<const std::uint8_t*> vals(static_cast<std::size_t>(n), nullptr);
    // The segment and each dependency: loaded (a dependency's failure names who needed it), then
    // its values and its entry.
    auto use = [&](const Seg& seg) -> Status {
      RETRA_TRY(load(seg));
      vals[id(seg)] = loaded[id(seg)].data();
      Source& src = sources[id(seg)];
      src.bytes = vals[id(seg)];
      src.far = readers[id(seg)]->far().empty() ? nullptr : readers[id(seg)];
      src.kind = value_kind_of(g, seg);
      return {};
    };
    if (Status st = use(s); !st) return fail(failure_from_error(sname, st.error()));
    for (Seg d : g.dependencies(s))
      if (Status st = use(d); !st) {
        VerifyFailure f = failure_from_error(name[id(d)], st.error());
        f.message =
            fmt::format("{} {} (needed by {}): {}", nouns.segment, name[id(d)], sname, f.message);
        return fail(f);
      }
    // A stored value: the far value where the segment lists one, else the decoded byte.
    auto stored_value = [src = sources.data(), &id](const Seg& seg, std::uint64_t index) {
      const Source& from = src[id(seg)];
      if (from.far)
        if (const auto v = from.far->far_value(index)) return static_cast<int>(*v);
      return decode_value(from.kind, from.bytes[index]);
    };
    // The stored values this segment's children read (decoded; virtual children as the game
    // computes them from stored ones). `reads`, when set, collects the indices of children in
    // this segment (only while diagnosing a failure).
    auto values_reading = [&](std::vector<std::uint64_t>* reads) {
      auto read = [&stored_value, reads, own = s](const Seg& seg, std::uint64_t index) {
        if (reads && static_cast<int>(seg) == static_cast<int>(own)) reads->push_back(index);
        return stored_value(seg, index);
      };
      return VirtualAware<G, decltype(read)>{g, read};
    };
    const auto values = values_reading(nullptr);
    const ValueKind kind = value_kind_of(g, s);
    VerifyContext ctx;
    ctx.dtc = rec->stats.value("metric", "") == "dtc";
    ctx.kind = kind;

    const format::SegmentReader* reader = readers[id(s)];
    const std::uint64_t block = reader->info().block_entries;
    const std::uint64_t blocks = (size + block - 1) / block;
    const std::uint8_t* const self = vals[id(s)];
    // A failure at position i of this segment (the caller writes the message).
    auto failure_at = [&](std::uint64_t i, int expected, std::uint64_t wrong) {
      VerifyFailure f;
      f.segment = sname;
      f.block = reader->position(i) / block;  // the file's block (its entry order)
      f.index = i;
      f.position = D::position_text(g, s, g.unrank(s, i));
      f.stored = stored_value(s, i);
      f.expected = expected;
      f.wrong_positions = wrong;
      return f;
    };
    // Every position is checked, also after a wrong one: the failure then names a position whose
    // own value is wrong, not one of its parents (which disagree with their moves too).
    std::vector<std::vector<std::uint64_t>> wrong_in(blocks);
    const std::size_t listed_per_block =
        std::max<std::size_t>(16, kListed / std::max<std::uint64_t>(1, blocks));
    std::atomic<std::uint64_t> wrong{0};
    // A class half (docs/FORMAT.md, "Class halves") holds classes where values were: each such
    // entry's value is the best over its moves, whose children lie in the other half (stored in
    // full) or in other segments (read by their classes, which is all a conversion reads). The
    // value is put back where its class is the stored one; an entry whose class disagrees keeps
    // its class byte and is wrong, and its parents then disagree with their moves below. The
    // check below skips the class entries (class_only() is false in segments without a class
    // half): it would compute the same value from the same children again (the restore changes
    // only this half, which none of them lies in).
    if (reader->class_half() != format::ClassHalf::none) {
      if constexpr (HasClassHalves<G>) {
        std::uint8_t* const mutable_self = loaded[id(s)].data();
        const std::uint64_t half = size / 2;
        const std::uint64_t lo = reader->class_half() == format::ClassHalf::lower ? 0 : half;
        constexpr std::uint64_t kChunk = 1 << 16;
        const std::uint64_t chunks = (half + kChunk - 1) / kChunk;
        std::vector<std::vector<std::uint64_t>> unrestored(chunks);  // ascending per chunk
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads))
        for (std::uint64_t c = 0; c < chunks; ++c) {
          const std::uint64_t begin = lo + c * kChunk, end = std::min(lo + half, begin + kChunk);
          auto p = g.unrank(s, begin);
          std::uint64_t here = 0;
          for (std::uint64_t i = begin; i < end; ++i) {
            if (i > begin) g.next(s, p);
            if (!reader->class_only(i)) continue;  // a far value: stored in full
            const int v = D::verify_value(g, s, p, ctx, values);
            const auto byte = static_cast<std::uint8_t>(v);
            if (decode_value(kind, byte) == v &&
                g.class_of(s, v) == decode_value(kind, mutable_self[i])) {
              mutable_self[i] = byte;
            } else {
              if (unrestored[c].size() < listed_per_block) unrestored[c].push_back(i);
              ++here;
            }
          }
          if (here) wrong.fetch_add(here, std::memory_order_relaxed);
        }
        for (const auto& u : unrestored)
          for (std::uint64_t i : u)
            if (wrong_in[i / block].size() < listed_per_block) wrong_in[i / block].push_back(i);
      } else {
        return fail(plain(sname, fmt::format("{} {} stores a class half, which {} segments "
                                             "cannot have (a damaged header?)",
                                             nouns.segment, sname, G::kName)));
      }
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.threads))
    for (std::uint64_t b = 0; b < blocks; ++b) {
      const std::uint64_t begin = b * block, end = std::min(size, begin + block);
      auto p = g.unrank(s, begin);
      std::uint64_t at = begin;  // the index p shows
      std::uint64_t here = 0;
      for (std::uint64_t i = begin; i < end; ++i) {
        // Class entries were checked by the restore. p skips them too: stepping over a class
        // half position by position cost about 5% of a pawn segment's check.
        if (reader->class_only(i)) continue;
        if (i - at > 16) {
          p = g.unrank(s, i);
        } else {
          for (; at < i; ++at) g.next(s, p);
        }
        at = i;
        if (stored_value(s, i) != D::verify_value(g, s, p, ctx, values)) {
          if (wrong_in[b].size() < listed_per_block) wrong_in[b].push_back(i);
          ++here;
        }
      }
      if (here) wrong.fetch_add(here, std::memory_order_relaxed);
      progress_advance(opt.progress, end - begin);
    }
    if (const std::uint64_t count = wrong.load(); count > 0) {
      std::vector<std::uint64_t> listed;  // ascending: blocks in order, each in index order
      for (auto& w : wrong_in) {
        std::sort(w.begin(), w.end());  // the restore listed its class entries first
        listed.insert(listed.end(), w.begin(), w.end());
      }
      // Suspects: listed positions none of whose children in this segment is listed, so their
      // own value must be wrong (their parents disagree too, but only through them). One wrong
      // value makes exactly one suspect; a damaged block, suspects mostly in that block. The
      // failure names the first suspect of the block with most of them (else the first listed).
      std::uint64_t culprit = listed.front(), suspects = 0, best_block_suspects = 0;
      std::uint64_t counting_block = ~std::uint64_t{0}, in_block = 0, first_in_block = 0;
      std::vector<std::uint64_t> reads;
      for (std::size_t k = 0; k < std::min<std::size_t>(listed.size(), kDiagnosed); ++k) {
        reads.clear();
        const auto rec_values = values_reading(&reads);
        (void)D::verify_value(g, s, g.unrank(s, listed[k]), ctx, rec_values);
        if (std::any_of(reads.begin(), reads.end(), [&](std::uint64_t c) {
              return std::binary_search(listed.begin(), listed.end(), c);
            }))
          continue;
        ++suspects;
        if (listed[k] / block != counting_block) {
          counting_block = listed[k] / block;
          in_block = 0;
          first_in_block = listed[k];
        }
        if (++in_block > best_block_suspects) {
          best_block_suspects = in_block;
          culprit = first_in_block;
        }
      }
      const bool own_fault = suspects > 0;
      VerifyFailure f =
          failure_at(culprit, D::verify_value(g, s, g.unrank(s, culprit), ctx, values), count);
      f.message = fmt::format(
          "{} {} block {} index {} position {}: stored value {}, but its moves give {}{}",
          nouns.segment, sname, *f.block, culprit, f.position, *f.stored, *f.expected,
          count == 1
              ? std::string()
              : fmt::format(
                    " ({} positions of this {} disagree with their moves{})", count, nouns.segment,
                    !own_fault      ? std::string()
                    : suspects == 1 ? std::string("; only this one's children all agree with "
                                                  "theirs, so its own value is the wrong one")
                                    : fmt::format("; {} of them have children that all agree, "
                                                  "so their own values are wrong, {} of "
                                                  "those in block {}",
                                                  suspects, best_block_suspects, *f.block)));
      return fail(f);
    }
    // The manifest's statistics must describe these values.
    auto recorded = D::stats_from_json(rec->stats);
    if (!recorded)
      return fail(plain(sname, fmt::format("{} {}: the manifest's statistics are unreadable: {}",
                                           nouns.segment, sname, recorded.error().message())));
    const auto computed = D::statistics(g, s, std::span<const std::uint8_t>(self, size),
                                        readers[id(s)]->far(), opt.threads);
    if (auto field = D::stats_mismatch(computed, *recorded))
      return fail(plain(sname, fmt::format("{} {}: statistic '{}' in the manifest differs from "
                                           "the values on disk",
                                           nouns.segment, sname, *field)));
    std::string check = "one-pass";
    if constexpr (G::kValueKind == ValueKind::score) {
      if (opt.full) {
        // The one-pass check accepts any solution of the equations; on cycles there are others
        // than the game's values. A second algorithm decides between them.
        const std::string built = rec->build.value("kernel", "backward");
        auto other = recompute(g, s, vals, built, opt, D::segment_label(sname));
        if (!other) return fail(plain(sname, other.error().message()));
        check += "+" + other->kernel;
        std::uint64_t differ = 0, first = size;
        for (std::uint64_t i = 0; i < size; ++i)
          if (self[i] != other->values[i]) {
            if (first == size) first = i;
            ++differ;
          }
        if (differ) {
          VerifyFailure f = failure_at(first, decode_value(kind, other->values[first]), differ);
          f.message = fmt::format(
              "{} {} block {} index {} position {}: stored value {}, but the {} kernel computes "
              "{} ({} positions differ). Every stored value agrees with its moves, so the "
              "{} holds another solution of the game's equations (values on cycles), not the "
              "game's values",
              nouns.segment, sname, *f.block, first, f.position, *f.stored, other->kernel,
              *f.expected, differ, nouns.segment);
          return fail(f);
        }
      }
    }
    rep.segments.push_back(
        {sname, size, std::chrono::duration<double>(Clock::now() - t0).count(), check});
    progress_job_advance(opt.progress, size);
    auto release = [&](const Seg& x) {
      loaded[id(x)] = {};
      readers[id(x)] = nullptr;
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
