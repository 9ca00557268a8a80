// The typed descriptor through which a game plugs into everything above the kernels: one struct
// of static members per game (src/games/<game>/module.hpp), checked by the GameDescriptor concept
// below and turned into the game-blind table of src/module/module.hpp by ModuleOf<D>
// (src/module/module_of.hpp). The generic drivers (build, verify, solve) are templates over the
// descriptor, so they see the game's own types: no virtual call or type erasure in a hot loop.
// Thread safety: descriptors are stateless; every member is reentrant.
//
// REQUIRED
//   Game                       the kernels' game type (include/retra/game.hpp): BuildableGame and
//                              HasUnmoves (the backward kernel builds every game).
//   Stats                      the typed statistics of one segment, with
//     statistics(g, s, values, far, threads)   computed from the segment's stored bytes and its
//                                values beyond a byte (format::FarValue, indices ascending),
//     stats_json(stats), stats_from_json(json)   as the manifest stores them,
//     stats_mismatch(on_disk, in_manifest)       the first field that differs (verify), or nullopt.
//   Solver                     the solver adapter (src/solve/engine_solver.hpp, SolverAdapter).
//   kSummary                   one line for `retra games`.
//   kNouns                     what the game calls its segments and their entries.
//   kSolver                    what `retra solve` may ask: leaf limits, thresholds.
//   target_options()           the game's own build options (which segments to build).
//   targets(values)            the segment names those options name (errors say what is wrong).
//   select(names)              the game for these segments and every segment they need
//                              (Selection: dependencies first), or an error for an unknown name.
//   segment_name(g, s), segment_label(name), segment_less(a, b)
//                              names, the progress bar's label, the manifest's order.
//   report_header(), report_row(r), report_json(r), report_totals(reports, json, line)
//                              the build report's table and JSON, per segment and in total.
//   verify_value(g, s, p, ctx, values)
//                              the verifier's per-position check: the value p must have, from
//                              the rules and its children's stored values (values(seg, index),
//                              decoded); it must not use the kernels.
//   position_text(g, s, p)     a position for messages (the game's notation).
//   locator(segment_names)     the probe locator: position text -> slot and index, or an exact
//                              value (src/probe/locator.hpp).
//   probe_report(db, text), stats_report(db, plot), solve_report(run)
//                              what `retra probe`, `retra stats` and `retra solve` print.
//   leaf_limit(db, asked)      the solver's leaf limit: what the database covers, capped at the
//                              asked limit.
//
// OPTIONAL
//   kWriteDefaults             format::WriteDefaults: the zstd level and entries per block a build
//                              writes with when not told (default: zstd -3, 64 Ki entries).
//   statistics(g, s, values, far, threads, holes)
//                              the same statistics given the holes of the index as the backward
//                              kernel marked them (one bit per entry; empty: not known), so that
//                              a game whose statistics skip holes need not step through every
//                              position to find them (the build driver passes them; verify
//                              does not, so its recount stays independent of the kernel).
//   conversion_value(g, s, p, ctx, values), dont_care_rank(kind)
//                              don't-care entries (src/module/dont_care.hpp): the value p's
//                              converting moves give, or its captures alone where
//                              ctx.captures_only (nullopt: none, or a kind stored exactly),
//                              and the side to move's order of a kind's bytes as ranks (nullopt:
//                              none). Only for a game whose probes restore such entries by
//                              searching the converting moves.
#pragma once

#include <concepts>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "retra/game.hpp"
#include "src/format/segment.hpp"
#include "src/module/module.hpp"
#include "src/solve/engine_solver.hpp"

namespace retra {

// The game and segments a build or a verification works on.
template <class G>
struct Selection {
  std::shared_ptr<const G> game;
  std::vector<typename G::SegmentId> order;  // every segment needed, dependencies first
  std::vector<typename G::SegmentId> named;  // the segments asked for
};

// What the verifier knows about a segment beyond its values.
struct VerifyContext {
  bool dtc = false;  // distance-to-mate games: the segment stores distances to conversion
  ValueKind kind = ValueKind::score;  // the segment's value kind
  // conversion_value: the captures among the converting moves alone (the segment's don't-care
  // entries are format::DontCareMoves::captures), not every converting move.
  bool captures_only = false;
};

// A value source for verify_value and conversion_value: stored(seg, index) gives a stored
// segment's decoded value; the game's virtual segments are answered from the stored ones
// (HasVirtualValues), as the build's kernels see them.
template <class G, class Stored>
struct VirtualAware {
  const G& g;
  Stored stored;
  int operator()(const typename G::SegmentId& seg, std::uint64_t index) const {
    if constexpr (HasVirtualSegments<G>) {
      if (G::virtual_segment(seg)) {
        if constexpr (HasVirtualValues<G>)
          return g.virtual_value(seg, index, *this);
        else
          return static_cast<int>(index);
      }
    }
    return stored(seg, index);
  }
};

namespace archetype {
// A value source for verify_value: the stored value of (segment, index), decoded.
template <class Seg>
struct Values {
  int operator()(const Seg&, std::uint64_t) const { return 0; }
};
}  // namespace archetype

template <class D>
concept GameDescriptor = BuildableGame<typename D::Game> && HasUnmoves<typename D::Game> &&
    solve::SolverAdapter<typename D::Solver> &&
    requires(const typename D::Game& g, const typename D::Game::SegmentId& s,
             const typename D::Game::Position& p, const typename D::Stats& st,
             std::span<const std::uint8_t> values, const std::vector<std::string>& names,
             const OptionValues& ov, const SegmentReport& r,
             const std::vector<SegmentReport>& reports, nlohmann::json& j, std::string& line,
             const Database& db, const probe::Prober& prober, const SolveRun& run) {
  { D::kSummary } -> std::convertible_to<std::string_view>;
  { D::kNouns } -> std::convertible_to<Nouns>;
  { D::kSolver } -> std::convertible_to<SolverSpec>;
  { D::target_options() } -> std::same_as<std::span<const OptionSpec>>;
  { D::targets(ov) } -> std::same_as<Result<std::vector<std::string>>>;
  { D::select(names) } -> std::same_as<Result<Selection<typename D::Game>>>;
  { D::segment_name(g, s) } -> std::same_as<std::string>;
  { D::segment_label(line) } -> std::same_as<std::string>;
  { D::segment_less(line, line) } -> std::same_as<bool>;
  {
    D::statistics(g, s, values, std::span<const format::FarValue>{}, 1)
    } -> std::same_as<typename D::Stats>;
  { D::stats_json(st) } -> std::same_as<nlohmann::json>;
  { D::stats_from_json(j) } -> std::same_as<Result<typename D::Stats>>;
  { D::stats_mismatch(st, st) } -> std::same_as<std::optional<std::string>>;
  { D::report_header() } -> std::same_as<std::string>;
  { D::report_row(r) } -> std::same_as<std::string>;
  { D::report_json(r) } -> std::same_as<nlohmann::json>;
  D::report_totals(reports, j, line);
  {
    D::verify_value(g, s, p, VerifyContext{}, archetype::Values<typename D::Game::SegmentId>{})
    } -> std::same_as<int>;
  { D::position_text(g, s, p) } -> std::same_as<std::string>;
  { D::locator(names) } -> std::same_as<std::unique_ptr<probe::Locator>>;
  { D::probe_report(db, line) } -> std::same_as<Result<Report>>;
  { D::stats_report(db, std::optional<std::string>{}) } -> std::same_as<Result<Report>>;
  { D::solve_report(run) } -> std::same_as<Result<Report>>;
  { D::leaf_limit(prober, std::optional<int>{}) } -> std::same_as<Result<int>>;
};

}  // namespace retra
