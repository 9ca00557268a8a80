// Don't-care entries (docs/FORMAT.md, kDontCare): which entries of a finished segment hold what
// their converting moves give, so that an archived file may store any value no better there and
// a probe restores the value by searching those moves. Written once for every game whose
// descriptor says what its converting moves give (HasDontCare below); names no game.
// Thread safety: reentrant; the mask is computed with `threads` OpenMP threads.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "retra/error.hpp"
#include "retra/game.hpp"
#include "src/database.hpp"
#include "src/format/segment.hpp"
#include "src/memory.hpp"
#include "src/module/descriptor.hpp"

namespace retra {

// A descriptor whose game's probes search converting moves where a segment has don't-care
// entries (descriptor.hpp, OPTIONAL: conversion_value and dont_care_rank).
template <class D>
concept HasDontCare = requires(const typename D::Game& g, const typename D::Game::SegmentId& s,
                               const typename D::Game::Position& p) {
  {
    D::conversion_value(g, s, p, VerifyContext{}, archetype::Values<typename D::Game::SegmentId>{})
    } -> std::same_as<std::optional<int>>;
  {
    D::dont_care_rank(ValueKind::dtz)
    } -> std::same_as<std::optional<std::array<std::uint8_t, 256>>>;
};

// The don't-care entries of segment s of g, whose entries as they will be stored are `values`,
// `half` of them as classes, except those with a value in `far` (indices ascending): the
// positions whose stored value (or class) is what their converting moves give (`moves`: all of
// them, or the captures alone), read from s's dependencies in `db`, which must be exact files.
// nullopt where the segment's value kind has no such entries.
template <GameDescriptor D>
requires HasDontCare<D> Result<std::optional<DontCareMask>> dont_care_entries(
    const Database& db, const typename D::Game& g, const typename D::Game::SegmentId& s,
    format::ClassHalf half, std::span<const format::FarValue> far,
    std::span<const std::uint8_t> values, format::DontCareMoves moves, int threads) {
  using G = typename D::Game;
  using Seg = typename G::SegmentId;
  const ValueKind kind = value_kind_of(g, s);
  const auto rank = D::dont_care_rank(kind);
  if (!rank) return std::optional<DontCareMask>();
  const std::uint64_t size = g.segment_size(s);
  if (values.size() != size)
    return Error(Errc::internal, fmt::format("{} values given for segment '{}' of {} entries",
                                             values.size(), D::segment_name(g, s), size));
  // The dependencies, exactly (a converting move never reaches a hole of the index).
  struct Loaded {
    Seg seg;
    LargeArray<std::uint8_t> values;
    const format::SegmentReader* reader = nullptr;
  };
  std::vector<Loaded> deps;
  for (const Seg& d : g.dependencies(s)) {
    if constexpr (HasVirtualSegments<G>)
      if (G::virtual_segment(d)) continue;
    auto r = db.segment(D::segment_name(g, d));
    if (!r) return std::move(r).error();
    RETRA_TRY(format::require_exact_bytes(
        **r, fmt::format("finding the don't-care entries of '{}', which converts into it "
                         "(one `recompress --dont-care` run over both marks dependents first)",
                         D::segment_name(g, s))));
    auto arr = LargeArray<std::uint8_t>::allocate(g.segment_size(d));
    if (!arr) return std::move(arr).error();
    RETRA_TRY((*r)->read_all(arr->span(), threads, format::Exact::reached_by_moves));
    deps.push_back({d, std::move(*arr), *r});
  }
  // Values by segment, decoded, far values included (as the verifier reads them); each
  // dependency found by its segment's number, not by a search per child.
  std::vector<const Loaded*> by_id(static_cast<std::size_t>(g.segments()), nullptr);
  for (const Loaded& l : deps) by_id[static_cast<std::size_t>(static_cast<int>(l.seg))] = &l;
  auto dependency_value = [&](const Seg& seg, std::uint64_t index) {
    const Loaded* l = by_id[static_cast<std::size_t>(static_cast<int>(seg))];
    assert(l && "a converting move leads to a dependency");
    if (const auto v = l->reader->far_value(index)) return static_cast<int>(*v);
    return decode_value(value_kind_of(g, seg), l->values.data()[index]);
  };
  const VirtualAware<G, decltype(dependency_value)> lookup{g, dependency_value};
  VerifyContext ctx;
  ctx.kind = kind;
  ctx.captures_only = moves == format::DontCareMoves::captures;

  auto is_far = [&](std::uint64_t i) {
    return std::binary_search(far.begin(), far.end(), format::FarValue{i, 0},
                              [](const auto& a, const auto& b) { return a.first < b.first; });
  };
  DontCareMask mask;
  mask.rank = *rank;
  mask.bits.assign((size + 63) / 64, 0);
  // Chunks of whole words, so that no two threads write one.
  constexpr std::uint64_t kChunk = 1 << 16;
  const std::uint64_t chunks = (size + kChunk - 1) / kChunk;
  std::atomic<std::uint64_t> marked{0};
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, threads))
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const std::uint64_t begin = c * kChunk, end = std::min(size, begin + kChunk);
    auto p = g.unrank(s, begin);
    std::uint64_t here = 0;
    for (std::uint64_t i = begin; i < end; ++i) {
      if (i > begin) g.next(s, p);
      if (is_far(i)) continue;  // a far value stays exact
      const std::optional<int> v = D::conversion_value(g, s, p, ctx, lookup);
      if (!v) continue;
      const int stored = decode_value(kind, values[i]);
      if (half != format::ClassHalf::none && (i < size / 2) == (half == format::ClassHalf::lower)) {
        if constexpr (HasClassHalves<G>) {
          if (g.class_of(s, *v) != stored) continue;
        } else {
          continue;
        }
      } else if (*v != stored) {
        continue;
      }
      mask.bits[i >> 6] |= std::uint64_t{1} << (i & 63);
      ++here;
    }
    marked.fetch_add(here, std::memory_order_relaxed);
  }
  mask.marked = marked.load();
  return std::optional<DontCareMask>(std::move(mask));
}

}  // namespace retra
