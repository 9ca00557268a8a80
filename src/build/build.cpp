// build(): the game's module runs the generic driver; the checks and sizes every game shares.
// Thread safety: reentrant.
#include "src/build/build.hpp"

#include <fmt/format.h>

#include "src/build/driver.hpp"
#include "src/module/module.hpp"

namespace retra {

std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::forward:
      return "forward";
    case Kernel::backward:
      return "backward";
  }
  return "?";
}

Result<Kernel> parse_kernel(std::string_view name) {
  if (name == "backward") return Kernel::backward;
  if (name == "forward") return Kernel::forward;
  return Error(Errc::invalid_argument,
               fmt::format("--kernel '{}': use backward (default) or forward", name));
}

Result<std::vector<SegmentReport>> build(const BuildRequest& request) {
  const GameModule* m = find_module(request.game);
  if (!m)
    return Error(Errc::invalid_argument,
                 fmt::format("unknown game '{}'; known games: {}", request.game, module_names()));
  return m->build(request);
}

namespace builder {

Status check_request(const BuildRequest& r, bool score, bool dtc) {
  if (r.targets.empty()) return Error(Errc::invalid_argument, "nothing to build: name a segment");
  if (r.threads < 1) return Error(Errc::invalid_argument, "--threads must be at least 1");
  if (r.jobs < 0) return Error(Errc::invalid_argument, "--jobs must be at least 1");
  if (r.zstd_level < 1 || r.zstd_level > 19)
    return Error(Errc::invalid_argument, "zstd level must be in 1..19");
  if (r.block_entries < 256 || r.block_entries > (1u << 26))
    return Error(Errc::invalid_argument, "block size must be in 256..67108864 entries");
  if (r.db.empty()) return Error(Errc::invalid_argument, "--db is required");
  if (r.kernel == Kernel::forward && !score)
    return Error(Errc::invalid_argument,
                 fmt::format("--kernel forward computes score values only; {} databases are "
                             "built by the backward kernel",
                             r.game));
  if (r.out_of_core && r.kernel == Kernel::forward)
    return Error(Errc::invalid_argument,
                 "--out-of-core runs the backward kernel out of core; drop --kernel forward");
  if (r.cluster && (r.kernel == Kernel::forward || r.out_of_core))
    return Error(Errc::invalid_argument,
                 "a build over MPI ranks runs the backward kernel with its arrays in memory; "
                 "drop --kernel forward and --out-of-core, or run without mpirun");
  if (r.metric == Metric::dtc && !dtc)
    return Error(Errc::invalid_argument,
                 fmt::format("--metric dtc is for games that store distances to conversion; {} "
                             "does not",
                             r.game));
  return {};
}

std::uint64_t kernel_bytes(Kernel k, std::uint64_t entries, std::size_t state_bytes, int threads) {
  const std::uint64_t writer = std::max<std::uint64_t>(64, 4ull * threads) * (256u << 10);
  // Two consecutive frontiers, filled in place (kernels/backward.hpp, Frontier), planned at 30%
  // of the positions, and each thread's piece on its way to one (64 Ki entries and a task's).
  const std::uint64_t frontier =
      k == Kernel::backward
          ? entries / 10 * 8 * 3 + (1ull << 20) * static_cast<std::uint64_t>(std::max(1, threads))
          : 0;
  return entries * (1 + state_bytes) + frontier + writer;
}

std::uint64_t out_of_core_bytes(std::uint64_t entries, std::size_t state_bytes, int threads,
                                std::uint64_t limit) {
  const std::uint64_t writer = std::max<std::uint64_t>(64, 4ull * threads) * (256u << 10);
  const std::uint64_t per_thread = 4ull << 20;
  return writer + std::min(kOutOfCoreBaselineBytes, limit / 4) +
         per_thread * static_cast<std::uint64_t>(std::max(1, threads)) +
         std::min<std::uint64_t>(kOutOfCoreWorkBytes, entries * (1 + state_bytes));
}

std::uint64_t out_of_core_spill_reserve(std::uint64_t entries, std::size_t state_bytes) {
  return std::max<std::uint64_t>(64ull << 20, entries * (1 + state_bytes));
}

std::uint64_t out_of_core_disk_bytes(std::uint64_t entries, std::size_t state_bytes) {
  const std::uint64_t frontiers = entries * 8 / 4 * 5 + (2ull << 20);
  return entries * (1 + state_bytes) + frontiers + out_of_core_spill_reserve(entries, state_bytes);
}

std::uint64_t out_of_core_spill_budget(std::uint64_t entries, std::size_t state_bytes,
                                       std::uint64_t free, std::uint64_t limit) {
  const std::uint64_t reserve = out_of_core_spill_reserve(entries, state_bytes);
  const std::uint64_t files = out_of_core_disk_bytes(entries, state_bytes) - reserve;
  std::uint64_t budget = free > files ? (free - files) / 2 : 0;
  if (limit > 0) budget = std::min(budget, limit > files ? limit - files : 0);
  return std::max(reserve, budget);
}

}  // namespace builder
}  // namespace retra
