// A game's own kernel (include/retra/game.hpp, own_kernel): what the build driver hands it and
// what it hands back, for games that build some segments faster than the generic kernels can.
// Thread safety: plain value types; Lower is called from many threads at once.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"
#include "retra/game.hpp"

namespace retra::kernels {

// lower(segment, index): the stored value of a position in a finished segment, as the generic
// kernels read it (builder::Lookup). Called from any thread.
template <class SegmentId>
using Lower = std::function<int(const SegmentId&, std::uint64_t)>;

// What the driver tells a game's kernel besides the kernel options (threads, progress, label).
struct OwnKernelLimits {
  // Bytes the kernel may allocate beyond the values array (the memory the plan leaves unused, as
  // the forward kernel's graph and the backward kernel's hole bitmap take it); a kernel that
  // needs more declines, and the generic kernel runs within the plan.
  std::uint64_t spare_bytes = 0;
};

struct OwnKernelRun {
  std::string kernel;  // its name in reports and manifests ("sweep")
  int levels = 0;      // plies, sweeps: what the report counts as iterations
  // Entries whose value is a far code, (index, code) in index order, their byte holding the
  // kind's clamp, as BackwardStats::far.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> far;
  std::vector<std::pair<std::string, double>> stats;  // for the manifest's kernel statistics
  // Whether it set the bits of KernelOptions::holes (given: a zeroed bitmap of the segment's
  // entries) where the entry is a hole of the index, as the backward kernel does.
  bool holes_marked = false;
};

// own_kernel(s, values, lower, options, limits) fills every entry of segment s (holes 0) and
// returns its run, fails with an error, or declines with std::nullopt, leaving values and
// options.holes as they were (zeroed), so that the generic kernel builds the segment instead.
template <class G>
concept HasOwnKernel = Game<G> &&
    requires(const G& g, const typename G::SegmentId& s, std::span<std::uint8_t> v,
             const Lower<typename G::SegmentId>& lower, const KernelOptions& o,
             const OwnKernelLimits& l) {
  { g.own_kernel(s, v, lower, o, l) } -> std::same_as<std::optional<Result<OwnKernelRun>>>;
};

}  // namespace retra::kernels
