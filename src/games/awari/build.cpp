// Awari database builds: plans the stone counts, loads capture targets, runs the kernel, writes
// segments atomically and records them in the manifest. Thread safety: one build per directory
// (enforced by a lock file); the kernel runs opt.threads threads.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "kernels/backward.hpp"
#include "kernels/forward_iteration.hpp"
#include "src/games/awari/database.hpp"
#include "src/games/awari/game.hpp"
#include "src/io/file.hpp"
#include "src/memory.hpp"
#include "src/memory_plan.hpp"
#include "src/version.hpp"

namespace retra::awari {

DatabaseIdentity identity() {
  return {std::string(Game::kName), std::string(kVariant), std::string(kIndexer),
          std::string(kValueEncoding)};
}

std::string segment_name(int stones) { return std::to_string(stones); }

bool segment_order(const std::string& a, const std::string& b) {
  return std::stoi(a) < std::stoi(b);
}

std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::forward:
      return "forward";
    case Kernel::backward:
      return "backward";
  }
  return "?";
}

nlohmann::json segment_stats(std::span<const std::int8_t> values, int stones) {
  std::vector<std::uint64_t> counts(2 * static_cast<std::size_t>(stones) + 1, 0);
  const std::size_t n = values.size();
  const std::size_t bins = counts.size();
#pragma omp parallel
  {
    std::vector<std::uint64_t> local(bins, 0);
#pragma omp for schedule(static) nowait
    for (std::size_t i = 0; i < n; ++i) ++local[static_cast<std::size_t>(values[i] + stones)];
#pragma omp critical
    for (std::size_t k = 0; k < bins; ++k) counts[k] += local[k];
  }
  double sum = 0;
  for (std::size_t k = 0; k < bins; ++k)
    sum += static_cast<double>(counts[k]) * (static_cast<double>(k) - stones);
  return {{"positions", n},
          {"value_min", -stones},
          {"counts", counts},
          {"mean", n ? sum / static_cast<double>(n) : 0.0}};
}

namespace {

Status check_options(const BuildOptions& opt) {
  if (opt.first < 0 || opt.last > kMaxStones || opt.first > opt.last)
    return Error(Errc::invalid_argument,
                 fmt::format("stone range {}-{} is invalid; use A-B with 0 <= A <= B <= {}",
                             opt.first, opt.last, kMaxStones));
  if (opt.threads < 1) return Error(Errc::invalid_argument, "--threads must be at least 1");
  if (opt.zstd_level < 1 || opt.zstd_level > 19)
    return Error(Errc::invalid_argument, "zstd level must be in 1..19");
  if (opt.block_entries < 256 || opt.block_entries > (1u << 26))
    return Error(Errc::invalid_argument, "block size must be in 256..67108864 entries");
  if (opt.db.empty()) return Error(Errc::invalid_argument, "--db is required");
  return {};
}

// Values of finished segments that converting moves read: decompressed into memory, or probed
// block-wise through the segment reader's cache when the memory plan says they do not fit.
class Finished {
 public:
  explicit Finished(const Database& db, int threads) : db_(db), threads_(threads) {}
  Status load(int stones) {
    auto& a = in_memory_[stones];
    if (a.size() == positions(stones)) return {};
    auto reader = db_.segment(segment_name(stones));
    if (!reader) return std::move(reader).error();
    auto arr = LargeArray<std::int8_t>::allocate(positions(stones));
    if (!arr) return std::move(arr).error();
    RETRA_TRY(
        (*reader)->read_all({reinterpret_cast<std::uint8_t*>(arr->data()), arr->size()}, threads_));
    a = std::move(*arr);
    memory_[stones] = a.data();
    return {};
  }
  Status open_block_wise(int stones) {
    auto reader = db_.segment(segment_name(stones));
    if (!reader) return std::move(reader).error();
    readers_[stones] = *reader;
    return {};
  }
  void keep(int stones, LargeArray<std::int8_t> values) {
    in_memory_[stones] = std::move(values);
    memory_[stones] = in_memory_[stones].data();
  }
  // Frees every in-memory segment outside [lo, hi].
  void retain(int lo, int hi) {
    for (int m = 0; m <= kMaxStones; ++m)
      if (m < lo || m > hi) {
        in_memory_[m] = {};
        memory_[m] = nullptr;
      }
  }
  // The hot path: one predictable branch when everything is in memory. A block that fails its
  // checksum is recorded (the kernel cannot stop mid-loop) and reported after the kernel.
  std::int8_t value(int stones, std::uint64_t index) const {
    if (const std::int8_t* d = memory_[stones]) return d[index];
    auto v = readers_[stones]->byte_at(index);
    if (v) return static_cast<std::int8_t>(*v);
    std::lock_guard lock(error_mu_);
    if (!error_) error_ = v.error();
    return 0;
  }
  void prefetch(int stones, std::uint64_t index) const {
    if (const std::int8_t* d = memory_[stones]) __builtin_prefetch(d + index);
  }
  Status take_error() {
    std::lock_guard lock(error_mu_);
    if (error_) {
      Error e = *error_;
      error_.reset();
      return e;
    }
    return {};
  }

 private:
  const Database& db_;
  int threads_;
  std::array<LargeArray<std::int8_t>, kMaxStones + 1> in_memory_;
  std::array<const std::int8_t*, kMaxStones + 1> memory_{};
  std::array<const format::SegmentReader*, kMaxStones + 1> readers_{};
  mutable std::mutex error_mu_;
  mutable std::optional<Error> error_;
};

// Bytes the kernel needs for a segment of `size` positions: the value array and one scratch byte
// per position (forward: capture values; backward: counters), the backward kernel's frontiers
// (measured at most 7.5% of the positions for 10..20 stones; planned at 10%, 8 bytes per entry,
// current + next + per-thread parts), and the segment writer's compression buffers.
std::uint64_t kernel_bytes(Kernel k, std::uint64_t size, int threads) {
  const std::uint64_t writer = std::max<std::uint64_t>(64, 4ull * threads) * (256u << 10);
  const std::uint64_t frontier = k == Kernel::backward ? size / 10 * 8 * 3 : 0;
  return 2 * size + frontier + writer;
}

}  // namespace

Result<std::vector<SegmentReport>> build(const BuildOptions& opt) {
  using Clock = std::chrono::steady_clock;
  RETRA_TRY(check_options(opt));

  // Plan before touching the directory, so that a build that cannot fit changes nothing.
  std::vector<bool> built(kMaxStones + 1, false);
  {
    std::error_code ec;
    if (std::filesystem::exists(opt.db / format::kManifestName, ec))
      if (auto existing = Database::open(opt.db))
        for (const auto& rec : (*existing)->manifest().segments) {
          int n = -1;
          auto [p, e] = std::from_chars(rec.name.data(), rec.name.data() + rec.name.size(), n);
          if (e == std::errc() && n >= 0 && n <= kMaxStones) built[n] = true;
        }
  }
  auto must_build = [&](int n) { return !built[n] || (opt.force && n >= opt.first); };
  std::vector<SegmentNeed> needs;
  for (int n = 0; n <= opt.last; ++n) {
    if (!must_build(n)) continue;
    std::uint64_t deps = n > 0 ? positions(n - 1) : 0;  // kept: the capture targets and n-1
    for (int m : Game{}.dependencies(n))
      if (m != n - 1) deps += positions(m);
    needs.push_back({segment_name(n), kernel_bytes(opt.kernel, positions(n), opt.threads), deps});
  }
  auto plan = plan_memory(needs, opt.memory_limit ? opt.memory_limit : default_memory_limit());
  if (!plan) return std::move(plan).error();
  if (opt.on_plan) opt.on_plan(*plan);

  // Validate (and create) the directory, lock it, then read the manifest again under the lock:
  // another build may have finished segments in between.
  auto db = Database::open_for_build(opt.db, identity());
  if (!db) return std::move(db).error();
  auto lock = io::DirectoryLock::acquire(opt.db);
  if (!lock) return std::move(lock).error();
  db = Database::open_for_build(opt.db, identity());
  if (!db) return std::move(db).error();

  const Game game;
  Finished finished(**db, opt.threads);
  std::vector<SegmentReport> reports;
  std::size_t planned = 0;
  for (int n = 0; n <= opt.last; ++n) {
    const std::string name = segment_name(n);
    const bool in_range = n >= opt.first;
    if ((*db)->has_segment(name) && !(opt.force && in_range)) {
      if (in_range) {
        const auto* rec = (*db)->manifest().find(name);
        SegmentReport r;
        r.stones = n;
        r.positions = rec->entries;
        r.skipped = true;
        r.kernel = rec->build.value("kernel", "");
        r.iterations = rec->build.value("iterations", 0);
        r.kernel_seconds = rec->build.value("kernel_seconds", 0.0);
        r.seconds = rec->build.value("seconds", 0.0);
        r.file_bytes = rec->file_bytes;
        r.raw_bytes = rec->raw_bytes;
        r.mean = rec->stats.value("mean", 0.0);
        if (opt.on_segment) opt.on_segment(r);
        reports.push_back(r);
      }
      continue;
    }
    // Segments built by another process since planning are simply rebuilt here as planned;
    // unplanned ones (never the case without a concurrent build) are planned like the first.
    const bool in_memory =
        !opt.low_memory &&
        (planned < plan->segments.size() && plan->segments[planned].need.name == name
             ? plan->segments[planned++].dependencies_in_memory
             : true);
    const auto t0 = Clock::now();
    // The segments captures lead to must be at hand; n-1 stays for the next segment.
    const std::vector<int> deps = game.dependencies(n);
    if (in_memory) {
      finished.retain(deps.empty() ? n - 1 : deps.front(), n - 1);
      for (int m : deps) RETRA_TRY(finished.load(m));
    } else {
      finished.retain(1, 0);  // free everything: the targets are probed from disk
      for (int m : deps) RETRA_TRY(finished.open_block_wise(m));
    }

    const std::uint64_t size = positions(n);
    // Two bytes per position: the values, and forward's capture values or backward's counters.
    auto values = LargeArray<std::int8_t>::allocate(size, opt.tuning.huge_pages);
    if (!values) return std::move(values).error();
    SegmentReport r;
    r.stones = n;
    r.positions = size;
    r.kernel = std::string(kernel_name(opt.kernel));
    const auto tk = Clock::now();
    // The kernels call lower(segment, index) and, where they batch, lower.prefetch(...).
    struct Lower {
      const Finished& f;
      std::int8_t operator()(int stones, std::uint64_t index) const {
        return f.value(stones, index);
      }
      void prefetch(int stones, std::uint64_t index) const { f.prefetch(stones, index); }
    } lower{finished};
    nlohmann::json kernel_stats;
    kernels::KernelOptions ko;
    ko.threads = opt.threads;
    ko.chunk = opt.block_entries;
    ko.progress = opt.progress;
    ko.label = fmt::format("{} stones", n);
    ko.tuning = opt.tuning;
    if (opt.kernel == Kernel::forward) {
      auto scratch = LargeArray<std::int8_t>::allocate(size, opt.tuning.huge_pages);
      if (!scratch) return std::move(scratch).error();
      const auto st =
          kernels::forward_iteration(game, n, values->span(), scratch->span(), lower, ko);
      r.iterations = st.iterations;
      kernel_stats = {{"sweeps", st.iterations},
                      {"capture_seconds", st.capture_seconds},
                      {"iterate_seconds", st.iterate_seconds}};
    } else {
      auto bytes = [](LargeArray<std::int8_t>& a) {
        return std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(a.data()), a.size());
      };
      auto st = kernels::backward(game, n, bytes(*values), lower, ko);
      if (!st) return std::move(st).error();
      r.iterations = st->levels;
      kernel_stats = {{"stages", st->stages},
                      {"levels", st->levels},
                      {"decided", st->decided},
                      {"max_frontier", st->max_frontier},
                      {"predecessors", st->predecessors},
                      {"init_seconds", st->init_seconds},
                      {"scan_seconds", st->scan_seconds},
                      {"propagate_seconds", st->propagate_seconds}};
    }
    RETRA_TRY(finished.take_error());
    r.kernel_seconds = std::chrono::duration<double>(Clock::now() - tk).count();

    nlohmann::json stats = segment_stats(values->span(), n);
    r.mean = stats["mean"].get<double>();
    format::SegmentInfo info{std::string(Game::kName),
                             std::string(kVariant),
                             std::string(kIndexer),
                             std::string(kValueEncoding),
                             name,
                             size,
                             1,
                             opt.block_entries};
    progress_phase(opt.progress, fmt::format("{} stones: writing", n), 0);
    auto written = format::write_segment(
        (*db)->segment_path(name), info,
        {reinterpret_cast<const std::uint8_t*>(values->data()), values->size()},
        {opt.zstd_level, opt.threads});
    if (!written) return std::move(written).error();
    r.file_bytes = written->file_bytes;
    r.raw_bytes = written->raw_bytes;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();

    format::SegmentRecord rec;
    rec.name = name;
    rec.file = (*db)->segment_path(name).filename().string();
    rec.entries = size;
    rec.file_bytes = written->file_bytes;
    rec.raw_bytes = written->raw_bytes;
    rec.header_checksum = written->header_checksum;
    rec.build = {{"kernel", r.kernel},
                 {"threads", opt.threads},
                 {"iterations", r.iterations},
                 {"kernel_stats", kernel_stats},
                 {"kernel_seconds", r.kernel_seconds},
                 {"seconds", r.seconds},
                 {"capture_targets", in_memory ? "memory" : "block-wise"},
                 {"block_entries", opt.block_entries},
                 {"tuning", opt.tuning.to_string()},
                 {"zstd_level", opt.zstd_level},
                 {"tool_version", std::string(kVersion)},
                 {"finished", format::utc_now_iso8601()}};
    rec.stats = std::move(stats);
    RETRA_TRY((*db)->commit_segment(std::move(rec), &segment_order));
    if (in_memory) finished.keep(n, std::move(*values));
    if (opt.on_segment) opt.on_segment(r);
    reports.push_back(r);
  }
  return reports;
}

}  // namespace retra::awari
