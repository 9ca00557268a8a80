// Switches for the kernels' optimizations, so that each can be measured against the build
// without it (bench/, docs/PERFORMANCE.md). The defaults are the fastest measured settings.
// Thread safety: a plain value type.
#pragma once

#include <string>

#include "retra/error.hpp"

namespace retra {

struct Tuning {
  bool huge_pages = true;     // madvise(MADV_HUGEPAGE) on the per-position arrays
  bool prefetch = true;       // batched child/predecessor lookups with software prefetch
  bool simd_scan = true;      // seed scans compare 32 positions per instruction
  bool pack_frontier = true;  // frontiers hold packed positions (no unranking) where possible
  bool graph = true;          // forward kernel: re-examine only positions whose children changed
  bool own_kernel = true;     // a game's own kernel where it has one (include/retra/game.hpp)
  // Out of core: the statistics and the segment writer read a copy of the values in memory where
  // the kernel's work budget holds it, instead of the file mapping (src/build/driver.hpp).
  bool copy_values = true;
  // Backward kernel in memory: the threads append to a frontier in place, in address space
  // reserved for every position, whose pages are given back once its entries are consumed (0:
  // each thread's entries gathered into a vector after the level, which holds a frontier up to
  // three times over; also what the kernel does where the address space cannot be had).
  bool frontier_in_place = true;

  // "prefetch=0,huge_pages=1": the names above, 0 or 1, comma separated.
  static Result<Tuning> parse(const std::string& text);
  std::string to_string() const;
};

inline Result<Tuning> Tuning::parse(const std::string& text) {
  Tuning t;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    const std::string item = text.substr(i, j - i);
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string val = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (val != "0" && val != "1")
      return Error(Errc::invalid_argument,
                   "--tune '" + text + "': expected name=0 or name=1, e.g. prefetch=0");
    const bool on = val == "1";
    if (key == "huge_pages")
      t.huge_pages = on;
    else if (key == "prefetch")
      t.prefetch = on;
    else if (key == "simd_scan")
      t.simd_scan = on;
    else if (key == "graph")
      t.graph = on;
    else if (key == "pack_frontier")
      t.pack_frontier = on;
    else if (key == "own_kernel")
      t.own_kernel = on;
    else if (key == "copy_values")
      t.copy_values = on;
    else if (key == "frontier_in_place")
      t.frontier_in_place = on;
    else
      return Error(
          Errc::invalid_argument,
          "--tune: unknown switch '" + key +
              "' (known: huge_pages, prefetch, simd_scan, pack_frontier, graph, own_kernel, "
              "copy_values, frontier_in_place)");
    i = j + 1;
  }
  return t;
}

inline std::string Tuning::to_string() const {
  return std::string("huge_pages=") + (huge_pages ? "1" : "0") +
         ",prefetch=" + (prefetch ? "1" : "0") + ",simd_scan=" + (simd_scan ? "1" : "0") +
         ",pack_frontier=" + (pack_frontier ? "1" : "0") + ",graph=" + (graph ? "1" : "0") +
         ",own_kernel=" + (own_kernel ? "1" : "0") + ",copy_values=" + (copy_values ? "1" : "0") +
         ",frontier_in_place=" + (frontier_in_place ? "1" : "0");
}

}  // namespace retra
