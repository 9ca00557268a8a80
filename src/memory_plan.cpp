// Memory planning for builds (see include/retra/memory_plan.hpp). Thread safety: pure functions.
#include "src/memory_plan.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "src/memory.hpp"

namespace retra {

std::string format_bytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

std::uint64_t default_memory_limit() { return physical_memory_bytes() / 5 * 4; }

MemoryLimit effective_memory_limit(std::uint64_t asked) {
  MemoryLimit l = asked ? MemoryLimit{asked, "--memory", false}
                        : MemoryLimit{default_memory_limit(), "80% of the machine's memory", false};
  const MemoryCeiling c = memory_ceiling();
  if (c.bytes < l.bytes) l = {c.bytes, c.source, true, c.address_space};
  return l;
}

namespace {

// A size with an optional unit, for `option`; a percentage of the memory where `percent`.
Result<std::uint64_t> parse_size(const std::string& text, const char* option, bool percent) {
  auto bad = [&] {
    return Error(Errc::invalid_argument,
                 fmt::format("{} '{}': expected a size like 12G, 512M{}", option, text,
                             percent ? " or 80%" : " (a percentage would be of the memory)"));
  };
  if (text.empty()) return bad();
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || v <= 0 || !std::isfinite(v)) return bad();
  const std::string unit(p, end);
  double bytes = 0;
  if (unit == "%") {
    if (v > 100 || !percent) return bad();
    bytes = static_cast<double>(physical_memory_bytes()) * v / 100;
  } else if (unit.empty() || unit == "B") {
    bytes = v;
  } else {
    const std::string u = unit.substr(0, 1);
    const std::string rest = unit.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "iB")) return bad();
    const double scale = u == "K" || u == "k"   ? 0x1p10
                         : u == "M" || u == "m" ? 0x1p20
                         : u == "G" || u == "g" ? 0x1p30
                         : u == "T" || u == "t" ? 0x1p40
                                                : 0;
    if (scale == 0) return bad();
    bytes = v * scale;
  }
  if (bytes < 1 || bytes > 0x1p60) return bad();
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace

Result<std::uint64_t> parse_memory_size(const std::string& text) {
  return parse_size(text, "--memory", true);
}

Result<std::uint64_t> parse_disk_size(const std::string& text) {
  return parse_size(text, "--disk", false);
}

Result<MemoryPlan> plan_memory(const std::vector<SegmentNeed>& needs, const MemoryLimit& lim,
                               bool allow_over) {
  MemoryPlan plan;
  const std::uint64_t limit = lim.bytes;
  plan.limit = limit;
  plan.limit_source = lim.source;
  for (const auto& n : needs) {
    // The ways to build it, cheapest first (the header says why in this order); the kernel in
    // memory only where it can run nowhere else or was not asked to run out of core.
    const bool can = n.out_of_core_bytes > 0, in_memory_ok = !(can && n.prefer_out_of_core);
    struct Way {
      bool out_of_core, dependencies_in_memory;
    };
    SegmentPlan s{n, true};
    for (const Way w : {Way{false, true}, Way{true, true}, Way{false, false}, Way{true, false}}) {
      if (w.out_of_core ? !can : !in_memory_ok) continue;
      s.out_of_core = w.out_of_core;
      s.dependencies_in_memory = w.dependencies_in_memory;
      if (s.bytes() <= limit) break;
    }
    if (s.bytes() > limit) {
      const std::uint64_t least = s.out_of_core ? n.out_of_core_bytes : n.kernel_bytes;
      const char* what = s.out_of_core ? "at least" : "for its own arrays";
      if (!allow_over)
        return Error(
            Errc::resource,
            lim.hard ? fmt::format("building segment {} needs {} {} (plus a {} "
                                   "block cache), more than the {} that {} leaves this process; "
                                   "raise that limit or build a smaller range",
                                   n.name, what, format_bytes(least), format_bytes(s.cache_bytes()),
                                   format_bytes(limit), lim.source)
                     : fmt::format("building segment {} needs {} {} (plus a {} "
                                   "block cache), more than the memory limit of {}; raise "
                                   "--memory (up to the machine's {}) or build a smaller range",
                                   n.name, what, format_bytes(least), format_bytes(s.cache_bytes()),
                                   format_bytes(limit), format_bytes(physical_memory_bytes())));
      s.fits = false;
    }
    if (s.bytes() > plan.peak_bytes) {
      plan.peak_bytes = s.bytes();
      plan.peak_segment = n.name;
    }
    plan.segments.push_back(s);
  }
  return plan;
}

std::string MemoryPlan::summary() const {
  if (segments.empty()) return "memory plan: nothing to build";
  int on_disk = 0, out_of_core = 0;
  const SegmentPlan* peak = nullptr;
  for (const auto& s : segments) {
    if (!s.dependencies_in_memory) ++on_disk;
    if (s.out_of_core) ++out_of_core;
    if (s.need.name == peak_segment) peak = &s;
  }
  std::string line = fmt::format(
      "memory plan: peak {} at segment {} (kernel {}{}, capture targets {} {}), limit {}",
      format_bytes(peak_bytes), peak_segment,
      format_bytes(peak->out_of_core ? peak->need.out_of_core_bytes : peak->need.kernel_bytes),
      peak->out_of_core ? " out of core" : "",
      format_bytes(peak->dependencies_in_memory ? peak->need.dependency_bytes
                                                : peak->cache_bytes()),
      peak->dependencies_in_memory ? "in memory" : "block cache", format_bytes(limit));
  if (!limit_source.empty()) line += fmt::format(" ({})", limit_source);
  if (on_disk)
    line += fmt::format("; {} segment(s) read their capture targets block-wise from disk", on_disk);
  if (out_of_core)
    line += fmt::format("; {} segment(s) out of core (kernel arrays in files, up to {} of disk)",
                        out_of_core, format_bytes(disk_bytes));
  return line;
}

}  // namespace retra
