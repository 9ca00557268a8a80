// The build driver, written once for every game: option checks, the memory plan, the directory
// lock, the store of finished values (in memory or block-wise), scheduling by dependencies (a TBB
// flow graph: a segment starts when the segments it depends on are finished; small ones run side
// by side on one thread each, large ones get every thread), the kernel, statistics, one commit
// path (segment file written atomically, then the manifest) and one report.
// Thread safety: one build per directory (lock file); inside, the flow graph's bodies share state
// through the driver's mutex, atomics and the graph's happens-before edges.
#pragma once

#ifndef RETRA_NO_TBB
#include <tbb/flow_graph.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kernels/backward.hpp"
#include "kernels/forward_iteration.hpp"
#include "kernels/own_kernel.hpp"
#include "src/build/build.hpp"
#include "src/build/checkpoint.hpp"
#include "src/build/finished.hpp"
#include "src/build/out_of_core.hpp"
#include "src/database.hpp"
#include "src/io/file.hpp"
#include "src/memory.hpp"
#include "src/memory_plan.hpp"
#include "src/module/descriptor.hpp"
#include "src/module/entry_rules.hpp"
#include "src/version.hpp"

namespace retra::builder {

// Checks what every game's build needs; the game's own options were checked by its module.
// score: the game's values are scores (the forward kernel); dtc: it may store distances to
// conversion (--metric dtc).
Status check_request(const BuildRequest& r, bool score, bool dtc);

// Bytes the kernel needs for a segment of `entries` positions: the value array, the kernel's own
// per-position state (backward: counters of state_bytes each; forward: the capture values), the
// backward kernel's frontiers (filled in place, a level's and the next one's at once: measured
// at most 23.7% of the positions whole, 14.1% as a level is read in eighths and gives back what
// it has read; planned at 30%, 8 bytes per entry, and a megabyte per thread for its piece on the
// way), and the segment writer's compression buffers.
std::uint64_t kernel_bytes(Kernel k, std::uint64_t entries, std::size_t state_bytes, int threads);

// The backward kernel out of core (kernels::OutOfCore): the least memory it runs in (the writer's
// buffers, 4 MiB per thread for frontier pieces and spill reads, kOutOfCoreBaselineBytes of what
// the process holds beyond the plan's items (at most a quarter of the limit, `limit`), and
// kOutOfCoreWorkBytes of resident partitions and
// update batches, which get whatever the limit leaves beyond that), and
// the disk its files take at most (out_of_core_disk_bytes).
inline constexpr std::uint64_t kOutOfCoreWorkBytes = 32ull << 20;
// Measured on Awari 0..24 at a third of its in-memory need: after twenty segments built in
// memory, the out-of-core segments held up to about 150 MB more than their capture targets and
// their own buffers (the allocator's heaps, a dependency's file pages while it is decoded, the
// binary); planned so that the peak stays within --memory.
inline constexpr std::uint64_t kOutOfCoreBaselineBytes = 160ull << 20;
std::uint64_t out_of_core_bytes(std::uint64_t entries, std::size_t state_bytes, int threads,
                                std::uint64_t limit);
// The most disk an out-of-core segment's files take: its values and counters; its two frontiers,
// which together hold each position at most once (8 bytes an entry, reserved in steps of a
// quarter more and a megabyte); and the spill files' least budget, out_of_core_spill_reserve.
std::uint64_t out_of_core_disk_bytes(std::uint64_t entries, std::size_t state_bytes);
// The spill files' least budget (OutOfCore::spill_budget): the bytes of the values and counters,
// and 64 MiB at least. A level that spills more is applied in rounds.
std::uint64_t out_of_core_spill_reserve(std::uint64_t entries, std::size_t state_bytes);
// The budget a build gets where `free` bytes of disk are free as it starts: half of what the
// files beyond the reserve leave, so that checkpoints and segments built beside it keep room;
// within `limit` (--disk; 0: none) less those files; the reserve at least.
std::uint64_t out_of_core_spill_budget(std::uint64_t entries, std::size_t state_bytes,
                                       std::uint64_t free, std::uint64_t limit);

// Threads lent to segments that run at the same time: small segments take one, large ones all.
class ThreadPool {
 public:
  explicit ThreadPool(int n) : free_(n) {}
  void acquire(int k) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return free_ >= k; });
    free_ -= k;
  }
  void release(int k) {
    {
      std::lock_guard lock(mu_);
      free_ += k;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

// Segments smaller than this are built on one thread, beside others.
inline constexpr std::uint64_t kSmallSegment = 4u << 20;

// The threads the machine gives this process (TBB's count honours the CPU affinity mask).
inline int hardware_threads() {
#ifdef RETRA_NO_TBB
  return static_cast<int>(std::thread::hardware_concurrency());
#else
  return tbb::info::default_concurrency();
#endif
}

// Runs body(i) for every node i of a dependency graph (edges: deps(i)), each after its
// dependencies, with up to `jobs` at once; `order` lists the nodes dependencies first. Of the
// nodes ready, the one first in `order` starts first, so that one job runs them in that order:
// the memory plan counts what is resident while each is built in that order, and a game's own
// kernel may keep a segment's results for a segment its depth-first order builds soon after.
// Taken as they became ready instead (the flow graph's own order), a large closure ran level by
// level, and what a kernel kept waited for readers many tables away (docs/ARCHITECTURE.md).
template <class Deps, class Body>
void schedule(const std::vector<int>& order, int nodes, Deps&& deps, Body&& body, int jobs) {
  const auto n = static_cast<std::size_t>(nodes);
  std::vector<std::size_t> rank(n, 0);  // each node's place in `order`
  for (std::size_t k = 0; k < order.size(); ++k) rank[static_cast<std::size_t>(order[k])] = k;
  // No more jobs than hardware threads: more would only share the cores. TBB ran no more anyway,
  // and asked for more workers than its limit (`--threads 4` on 2 cores) it printed a warning of
  // its own on stderr.
  jobs = std::clamp(jobs, 1, std::max(1, hardware_threads()));
#ifdef RETRA_NO_TBB
  // Without TBB (the static build, as Debian ships TBB only shared, and the ThreadSanitizer build,
  // which cannot see the synchronization inside Debian's uninstrumented libtbb): `jobs` threads
  // take nodes whose dependencies are done from one queue, first in `order` first.
  std::vector<bool> listed(n, false);
  for (int s : order) listed[static_cast<std::size_t>(s)] = true;
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> users(n);
  for (int s : order)
    for (int d : deps(s))
      if (listed[static_cast<std::size_t>(d)]) {
        ++waiting[static_cast<std::size_t>(s)];
        users[static_cast<std::size_t>(d)].push_back(s);
      }
  auto later = [&](int a, int b) {
    return rank[static_cast<std::size_t>(a)] > rank[static_cast<std::size_t>(b)];
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (int s : order)
    if (waiting[static_cast<std::size_t>(s)] == 0) ready.push(s);
  std::mutex mu;
  std::condition_variable cv;
  std::size_t done = 0;
  auto worker = [&] {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return !ready.empty() || done == order.size(); });
      if (ready.empty()) return;
      const int s = ready.top();
      ready.pop();
      lock.unlock();
      body(s);
      lock.lock();
      ++done;
      for (int u : users[static_cast<std::size_t>(s)])
        if (--waiting[static_cast<std::size_t>(u)] == 0) ready.push(u);
      cv.notify_all();
    }
  };
  std::vector<std::thread> helpers;
  for (int k = 1; k < jobs; ++k) helpers.emplace_back(worker);
  worker();
  for (auto& t : helpers) t.join();
#else
  tbb::task_arena arena(jobs);
  arena.execute([&] {
    tbb::flow::graph graph;
    tbb::flow::broadcast_node<tbb::flow::continue_msg> start(graph);
    std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg>>> node(
        static_cast<std::size_t>(nodes));
    // A node's priority (the graph runs the highest of those ready first; 0 is none).
    for (int s : order)
      node[static_cast<std::size_t>(s)] =
          std::make_unique<tbb::flow::continue_node<tbb::flow::continue_msg>>(
              graph, [&body, s](const tbb::flow::continue_msg&) { body(s); },
              static_cast<tbb::flow::node_priority_t>(order.size() -
                                                      rank[static_cast<std::size_t>(s)]));
    for (int s : order) {
      bool root = true;
      for (int d : deps(s))
        if (node[static_cast<std::size_t>(d)]) {
          tbb::flow::make_edge(*node[static_cast<std::size_t>(d)],
                               *node[static_cast<std::size_t>(s)]);
          root = false;
        }
      if (root) tbb::flow::make_edge(start, *node[static_cast<std::size_t>(s)]);
    }
    start.try_put(tbb::flow::continue_msg());
    graph.wait_for_all();
  });
#endif
}

template <GameDescriptor D>
class Driver {
  using G = typename D::Game;
  using Seg = typename G::SegmentId;
  using Clock = std::chrono::steady_clock;
  static constexpr ValueKind K = G::kValueKind;
  static constexpr bool kDtc = [] {
    if constexpr (requires { G::kDtcFallback; })
      return G::kDtcFallback;
    else
      return false;
  }();

 public:
  explicit Driver(const BuildRequest& req) : req_(req) {}

  Result<std::vector<SegmentReport>> run() {
    RETRA_TRY(check_request(req_, K == ValueKind::score, kDtc));
    auto sel = D::select(req_.targets);
    if (!sel) return std::move(sel).error();
    sel_ = std::move(*sel);
    const G& g = *sel_.game;
    n_ = g.segments();
    name_.resize(static_cast<std::size_t>(n_));
    for (Seg s : sel_.order) name_[idx(s)] = D::segment_name(g, s);
    for (Seg s : sel_.order) order_.push_back(static_cast<int>(s));

    // What is built already, and the memory plan, before the directory is touched.
    std::set<std::string> built;
    {
      std::error_code ec;
      if (std::filesystem::exists(req_.db / format::kManifestName, ec))
        if (auto existing = Database::open(req_.db))
          for (const auto& rec : (*existing)->manifest().segments) built.insert(rec.name);
    }
    requested_.assign(static_cast<std::size_t>(n_), false);
    todo_.assign(static_cast<std::size_t>(n_), false);
    for (Seg s : sel_.named) requested_[idx(s)] = true;
    for (int s : order_) todo_[s] = !built.count(name_[s]) || (req_.force && requested_[s]);
    RETRA_TRY(plan());
    if (req_.plan_only) return std::vector<SegmentReport>{};
    kernels::Cluster* const cluster = req_.cluster;
    if (cluster)
      for (int s : order_)
        if (todo_[s] && out_of_core_[s] > 0)
          return Error(Errc::resource,
                       fmt::format("a build over MPI ranks keeps the kernel's arrays in memory "
                                   "on every rank, and segment {} does not fit the limit that "
                                   "way (`retra build --plan` shows the need); raise --memory "
                                   "or build without mpirun",
                                   name_[s]));
    const DatabaseIdentity id{std::string(G::kName), std::string(G::kVariant),
                              std::string(G::kIndexer), std::string(G::kValueEncoding)};
    if (cluster && cluster->rank() != 0) return run_beside_rank0(id);

    // Validate (and create) the directory, lock it, then read the manifest again under the lock:
    // another build may have finished segments in between.
    auto db = Database::open_for_build(req_.db, id);
    if (!db) return agree_error(std::move(db).error());
    auto lock = io::DirectoryLock::acquire(req_.db);
    if (!lock) return agree_error(std::move(lock).error());
    db = Database::open_for_build(req_.db, id);
    if (!db) return agree_error(std::move(db).error());
    RETRA_TRY(kernels::agree(cluster, {}));  // the other ranks may open the directory now
    RETRA_TRY(kernels::agree(cluster, {}));  // and they have
    db_ = std::move(*db);
    for (int s : order_) remove_out_of_core(s);

    return build_all();
  }

 private:
  // A failure before the segments start, told to the other ranks of a cluster build.
  Error agree_error(Error e) {
    (void)kernels::agree(req_.cluster, e);
    return e;
  }

  // Ranks other than 0 of a cluster build: they read the directory rank 0 prepared (and hold
  // the lock of), build every segment with it and write nothing.
  Result<std::vector<SegmentReport>> run_beside_rank0(const DatabaseIdentity& id) {
    RETRA_TRY(kernels::agree(req_.cluster, {}));  // rank 0 has opened and locked the directory
    // Opened the way rank 0 opened it (a new database has no manifest yet); never committed to.
    auto db = Database::open_for_build(req_.db, id);
    RETRA_TRY(kernels::agree(req_.cluster, db ? Status{} : Status(std::move(db).error())));
    db_ = std::move(*db);
    return build_all();
  }

  // The segments to build, each after its dependencies; over a cluster one at a time, in the
  // same order on every rank, each over all of them.
  Result<std::vector<SegmentReport>> build_all() {
    const G& g = *sel_.game;
    // The positions of every segment to build: what the bar's estimate of the time left
    // counts, one segment's worth as each one finishes.
    std::uint64_t positions = 0;
    for (int s : order_)
      if (todo_[s]) positions += g.segment_size(Seg(s));
    progress_job(req_.progress, positions);
    // Checkpoints of segments finished since (killed between the commit and their removal);
    // every rank of a cluster build removes its own.
    for (int s : order_)
      if (!todo_[s]) remove_checkpoints(s);
    store_.emplace(*db_, n_, req_.threads);
    users_ = std::vector<std::atomic<int>>(static_cast<std::size_t>(n_));
    for (int s : order_)
      if (todo_[s])
        for (Seg d : g.dependencies(Seg(s))) ++users_[idx(d)];
    pool_.emplace(req_.threads);
    if (req_.cluster)
      for (int s : order_) run_segment(s);
    else
      schedule(
          order_, n_, [&](int s) { return deps(s); }, [&](int s) { run_segment(s); },
          req_.jobs > 0 ? req_.jobs : req_.threads);
    if (failure_) return *failure_;
    // Report in dependency order, whatever order they finished in.
    std::vector<SegmentReport> ordered;
    for (int s : order_)
      for (auto& r : reports_)
        if (r.name == name_[s]) ordered.push_back(std::move(r));
    return ordered;
  }

  static std::size_t idx(const Seg& s) { return static_cast<std::size_t>(static_cast<int>(s)); }
  std::vector<int> deps(int s) const {
    std::vector<int> d;
    for (Seg x : sel_.game->dependencies(Seg(s))) d.push_back(static_cast<int>(x));
    return d;
  }

  // Bytes in memory while the segment order_[k] is built, for every k: its dependencies, and the
  // segments built or loaded before it that a later build still needs. A segment d is resident
  // from just after the first build that makes or reads it until the last build that reads it,
  // so the sum is one prefix sum over those intervals (linear: 6-piece plans have 10^4 segments).
  std::vector<std::uint64_t> resident_bytes() const {
    const G& g = *sel_.game;
    const std::size_t m = order_.size();
    const std::size_t never = m;
    std::vector<std::size_t> first(static_cast<std::size_t>(n_), never), last(first.size(), 0);
    for (std::size_t k = 0; k < m; ++k) {
      const int t = order_[k];
      if (!todo_[t]) continue;
      first[static_cast<std::size_t>(t)] = std::min(first[static_cast<std::size_t>(t)], k);
      for (int d : deps(t)) {
        const auto du = static_cast<std::size_t>(d);
        first[du] = std::min(first[du], k);
        last[du] = k;
      }
    }
    std::vector<std::int64_t> delta(m + 1, 0);  // d counts for k in (first[d], last[d]]
    for (std::size_t d = 0; d < first.size(); ++d)
      if (first[d] < last[d]) {  // read by a build after the one that first held it
        const auto bytes = static_cast<std::int64_t>(g.segment_size(Seg(static_cast<int>(d))));
        delta[first[d] + 1] += bytes;
        delta[last[d] + 1] -= bytes;
      }
    // resize, not the sized constructor: GCC 12 at -O3 cannot bound m on some -march targets and
    // reports the constructor's allocation as oversized (-Walloc-size-larger-than); resize checks.
    std::vector<std::uint64_t> out;
    out.resize(m, 0);
    std::int64_t running = 0;
    for (std::size_t k = 0; k < m; ++k) {
      running += delta[k];
      const int s = order_[k];
      if (!todo_[s]) continue;
      std::uint64_t bytes = static_cast<std::uint64_t>(running);
      for (int d : deps(s))  // its own that no earlier build held are not in the running sum
        if (first[static_cast<std::size_t>(d)] == k) bytes += g.segment_size(Seg(d));
      out[k] = bytes;
    }
    return out;
  }

  Status plan() {
    const G& g = *sel_.game;
    std::vector<SegmentNeed> needs;
    const std::size_t state =
        req_.kernel == Kernel::forward ? 1 : kernels::backward_state_bytes<G>();
    const std::vector<std::uint64_t> resident = resident_bytes();
    const MemoryLimit limit = effective_memory_limit(req_.memory_limit);
    for (std::size_t k = 0; k < order_.size(); ++k) {
      const int s = order_[k];
      if (!todo_[s]) continue;
      const std::uint64_t entries = g.segment_size(Seg(s));
      SegmentNeed need{name_[s], kernel_bytes(req_.kernel, entries, state, req_.threads),
                       resident[k]};
      if (req_.kernel == Kernel::backward && !limit.address_space) {
        need.out_of_core_bytes = out_of_core_bytes(entries, state, req_.threads, limit.bytes);
        need.disk_bytes = out_of_core_disk_bytes(entries, state);
        need.prefer_out_of_core = req_.out_of_core;
      }
      needs.push_back(need);
    }
    auto p = plan_memory(needs, limit, req_.plan_only);
    if (!p) return std::move(p).error();
    spare_bytes_ = p->limit > p->peak_bytes ? p->limit - p->peak_bytes : 0;
    in_memory_.assign(static_cast<std::size_t>(n_), true);
    out_of_core_.assign(static_cast<std::size_t>(n_), 0);
    std::uint64_t disk = 0;
    std::string disk_segment;
    std::size_t i = 0;  // p->segments follow the segments to build in order_, as `needs` did
    for (int s : order_)
      if (todo_[s]) {
        const SegmentPlan& sp = p->segments[i++];
        in_memory_[s] = sp.dependencies_in_memory && !req_.low_memory;
        if (sp.out_of_core) {
          // What the limit leaves beyond the least the kernel needs goes to its work.
          out_of_core_[s] = kOutOfCoreWorkBytes + (p->limit - sp.bytes());
          if (sp.need.disk_bytes > disk) disk = sp.need.disk_bytes, disk_segment = sp.need.name;
        }
      }
    p->disk_bytes = disk;
    const std::uint64_t free = io::free_disk_bytes(req_.db);
    p->disk_free_bytes = free;
    p->disk_limit_bytes = req_.disk_limit;
    if (req_.on_plan) req_.on_plan(*p);
    if (disk > 0 && !req_.plan_only) {
      if (req_.disk_limit > 0 && req_.disk_limit < disk)
        return Error(Errc::resource,
                     fmt::format("building segment {} out of core needs {} of disk in '{}' for "
                                 "its arrays, frontiers and spilled updates, and --disk allows "
                                 "{}; raise --disk or --memory, or build a smaller range",
                                 disk_segment, format_bytes(disk), req_.db.string(),
                                 format_bytes(req_.disk_limit)));
      if (free < disk)
        return Error(
            Errc::resource,
            fmt::format("building segment {} out of core needs {} of disk in '{}' for "
                        "its arrays, frontiers and spilled updates, and {} is free; free "
                        "space there, raise --memory, or build a smaller range",
                        disk_segment, format_bytes(disk), req_.db.string(), format_bytes(free)));
    }
    return {};
  }

  void fail(Error e) {
    std::lock_guard l(mu_);
    if (!failure_) failure_ = std::move(e);
    failed_ = true;
  }

  void report(SegmentReport r) {
    std::lock_guard l(mu_);
    if (req_.on_segment) req_.on_segment(r);
    reports_.push_back(std::move(r));
  }

  // A segment built before: its report from the manifest (only when it was asked for).
  void report_skipped(int s) {
    if (!requested_[s]) return;
    const format::SegmentRecord* rec;
    {
      std::lock_guard l(mu_);
      rec = db_->manifest().find(name_[s]);
    }
    SegmentReport r;
    r.name = name_[s];
    r.entries = rec->entries;
    r.skipped = true;
    r.kernel = rec->build.value("kernel", "");
    r.metric = rec->build.value("metric", rec->stats.value("metric", ""));
    r.iterations = rec->build.value("iterations", rec->build.value("levels", 0));
    r.threads = rec->build.value("threads", 0);
    r.kernel_seconds = rec->build.value("kernel_seconds", 0.0);
    r.seconds = rec->build.value("seconds", 0.0);
    r.rss_bytes = rec->build.value("rss_bytes", std::uint64_t{0});
    r.file_bytes = rec->file_bytes;
    r.raw_bytes = rec->raw_bytes;
    r.stats = rec->stats;
    report(std::move(r));
  }

  void run_segment(int s) {
    if (failed_) return;
    if (!todo_[s]) return report_skipped(s);
    if (Status st = build_segment(s); !st) fail(std::move(st).error());
  }

  // Makes the values of s's dependencies available to its kernel.
  template <class L>
  Status gather(int s, L& lookup) {
    const G& g = *sel_.game;
    if (in_memory_[s]) {
      for (int d : deps(s)) {
        auto v = store_->load(d, name_[d], g.segment_size(Seg(d)));
        if (!v) return std::move(v).error();
        lookup.use(d, std::move(*v));
      }
      return {};
    }
    store_->drop_all();  // the plan counted none of them: read the targets from disk
    for (int d : deps(s)) {
      std::lock_guard l(mu_);
      auto r = store_->reader(name_[d]);
      if (!r) return std::move(r).error();
      lookup.use(d, *r);
    }
    return {};
  }

  struct KernelRun {
    std::string kernel, metric;
    int iterations = 0;
    int checkpoints = 0, resumed_level = -1;
    std::uint64_t resumed_decided = 0;
    std::string resumed_at;
    nlohmann::json stats;
    std::vector<format::FarValue> far;  // values beyond a byte (BackwardStats::far)
    // The holes of the index as the kernel marked them (KernelOptions::holes; empty: not
    // marked), for the writer's rule entries and the statistics.
    std::vector<std::uint64_t> holes;
  };

  void note(const std::string& line) {
    std::lock_guard l(mu_);
    if (req_.on_note) req_.on_note(line);
  }

  // The checkpoint file of segment s (one per distance metric: a distance-to-conversion rerun
  // must not take the distance-to-mate run's state; over a cluster one per rank).
  std::filesystem::path checkpoint_path(int s, bool dtc) const {
    auto p = db_->segment_path(name_[s]);
    const kernels::Cluster* c = req_.cluster;
    p.replace_extension(fmt::format("{}{}.ckpt", dtc ? ".dtc" : "",
                                    c ? fmt::format(".rank-{}-of-{}", c->rank(), c->size()) : ""));
    return p;
  }
  // The out-of-core directory of segment s (kernel arrays and spill files while it is built).
  std::filesystem::path out_of_core_dir(int s) const {
    auto p = db_->segment_path(name_[s]);
    p.replace_extension(".ooc");
    return p;
  }
  void remove_out_of_core(int s) const {
    std::error_code ec;
    std::filesystem::remove_all(out_of_core_dir(s), ec);
  }
  void remove_checkpoints(int s) const {
    std::error_code ec;
    for (bool dtc : {false, true}) std::filesystem::remove(checkpoint_path(s, dtc), ec);
  }

  // The memory the plan leaves unused that a segment built on `threads` threads may take for
  // what only saves time (the forward kernel's graph, the backward kernel's holes): segments
  // built side by side share it by the threads they were lent.
  std::uint64_t headroom_share(int threads) const {
    return spare_bytes_ / static_cast<std::uint64_t>(std::max({1, req_.threads, req_.jobs})) *
           static_cast<std::uint64_t>(threads);
  }

  // The kernel of a segment of kind KS: the forward one where asked for score games, else the
  // backward one (with the distance-to-conversion fallback of the games that allow it).
  template <ValueKind KS>
  Result<KernelRun> run_kernel(int s, std::span<std::uint8_t> values, Lookup<G, KS>& lookup,
                               int threads, kernels::OutOfCore* ooc, bool share,
                               bool holes_out_of_core) {
    const G& g = *sel_.game;
    kernels::KernelOptions ko;
    ko.threads = threads;
    ko.chunk = req_.block_entries;
    ko.progress = req_.progress;
    ko.label = D::segment_label(name_[s]);
    ko.tuning = req_.tuning;
    ko.partitions = req_.partitions;
    ko.out_of_core = ooc;
    ko.cluster = req_.cluster;
    ko.cluster_share = share;
    KernelRun kr;
    kr.kernel = std::string(kernel_name(req_.kernel));
    if constexpr (KS == ValueKind::score) {
      if (req_.kernel == Kernel::forward) {
        auto exits = LargeArray<std::int8_t>::allocate(values.size(), req_.tuning.huge_pages);
        if (!exits) return std::move(exits).error();
        const std::span<std::int8_t> v(reinterpret_cast<std::int8_t*>(values.data()),
                                       values.size());
        ko.graph_bytes = headroom_share(threads);
        const auto st = kernels::forward_iteration(g, Seg(s), v, exits->span(), lookup, ko);
        RETRA_TRY(lookup.take_error());
        kr.iterations = st.iterations;
        kr.stats = {{"mode", st.graph ? "graph" : "sweeps"},
                    {"sweeps", st.iterations},
                    {"evaluations", st.evaluations},
                    {"capture_seconds", st.capture_seconds},
                    {"iterate_seconds", st.iterate_seconds}};
        if (st.graph) {
          kr.stats["edges"] = st.edges;
          kr.stats["graph_bytes"] = st.graph_bytes;
          kr.stats["graph_seconds"] = st.graph_seconds;
        }
        return kr;
      }
    }
    // The kernel (the game's own or the backward one) marks the holes while it works when they
    // are all the game's rules answer. The bitmap (entries / 8 bytes) saves time, not memory,
    // so the plan does not count it: in memory it is made only where the plan leaves room for
    // it (this segment's share of the headroom, as for the forward kernel's graph), and a
    // segment that would not fit without it never goes out of core for it; out of core where
    // build_segment took it out of the kernel's work budget (holes_out_of_core).
    const std::uint64_t hole_words = (g.segment_size(Seg(s)) + 63) / 64;
    if constexpr (HasValidity<G> && !HasTerminalValue<G>)
      if (!req_.cluster && (ooc ? holes_out_of_core : hole_words * 8 <= headroom_share(threads))) {
        kr.holes.assign(hole_words, 0);
        ko.holes = kr.holes.data();
      }
    if constexpr (kernels::HasOwnKernel<G>) {
      // The game's own kernel where it has one for this segment: in memory and on one machine
      // only, since it keeps no checkpoints, spills nothing and splits no index ranges.
      if (req_.tuning.own_kernel && !ooc && !req_.cluster) {
        const kernels::Lower<Seg> lower = [&lookup](const Seg& d, std::uint64_t i) {
          return lookup(d, i);
        };
        auto own = g.own_kernel(Seg(s), values, lower, ko,
                                {headroom_share(threads) - 8 * kr.holes.size()});
        if (own) {
          if (!*own) return std::move(*own).error();
          RETRA_TRY(lookup.take_error());
          kr.kernel = (*own)->kernel;
          kr.iterations = (*own)->levels;
          kr.far = std::move((*own)->far);
          if (!(*own)->holes_marked) kr.holes = {};
          kr.stats = nlohmann::json::object();
          for (const auto& [key, value] : (*own)->stats) kr.stats[key] = value;
          return kr;
        }
      }
    }
    if constexpr (KS == ValueKind::dtm && kDtc) {
      ko.dtc = req_.metric == Metric::dtc;
      kr.metric = ko.dtc ? "dtc" : "dtm";
    }
    // What a checkpoint belongs to: a state saved by another game, segment, kind or version of
    // the tool is never taken over; over a cluster, a rank's state holds its own range, and only
    // the same rank of as many ranks takes it over.
    const kernels::Cluster* const cluster = req_.cluster;
    const std::string key = fmt::format(
        "{} {} {} {} segment {} kind {} entries {} retra {}{}", G::kName, G::kVariant, G::kIndexer,
        G::kValueEncoding, name_[s], static_cast<int>(KS), g.segment_size(Seg(s)), kVersion,
        cluster ? fmt::format(" rank {} of {}", cluster->rank(), cluster->size()) : "");
    std::optional<FileCheckpoints> ck;
    auto run = [&] {
      const std::uint64_t entries = g.segment_size(Seg(s));
      ck.emplace(
          checkpoint_path(s, ko.dtc), key, req_.checkpoint_seconds,
          [this](const std::string& line) { note(line); },
          [this, s, entries, file = checkpoint_path(s, ko.dtc).filename().string()](
              const kernels::CheckpointPoint& p) {
            // How far the segment got, for `retra info` (rank 0 writes the manifest); a failure
            // to say so is only noted.
            if (req_.cluster && req_.cluster->rank() != 0) return;
            std::lock_guard l(mu_);
            const Status st =
                db_->record_building(name_[s], {{"checkpoint", file},
                                                {"at", p.at},
                                                {"decided", p.decided},
                                                {"entries", entries},
                                                {"saved", format::utc_now_iso8601()}});
            if (!st && req_.on_note) req_.on_note(st.error().message());
          });
      ko.checkpoints = &*ck;
      return kernels::backward_as<KS>(g, Seg(s), values, lookup, ko);
    };
    auto st = run();
    if constexpr (KS == ValueKind::dtm && kDtc) {
      if (!st && !ko.dtc && st.error().cause() == Cause::distance_overflow) {
        // A distance beyond one byte: distance to conversion instead (Fang 3.3).
        ko.dtc = true;
        kr.metric = "dtc";
        st = run();
      }
    }
    if (!st) return std::move(st).error();
    RETRA_TRY(lookup.take_error());
    kr.iterations = st->levels;
    kr.checkpoints = st->checkpoints;
    kr.far = std::move(st->far);
    if (!st->holes_marked) kr.holes = {};
    kr.resumed_level = st->resumed_level;
    kr.resumed_decided = st->resumed_decided;
    kr.resumed_at = st->resumed_at;
    kr.stats = {{"stages", st->stages},
                {"levels", st->levels},
                {"decided", st->decided},
                {"max_frontier", st->max_frontier},
                {"predecessors", st->predecessors},
                {"counter_bits", st->counter_bits},
                {"init_seconds", st->init_seconds},
                {"scan_seconds", st->scan_seconds},
                {"propagate_seconds", st->propagate_seconds},
                {"checkpoints", st->checkpoints},
                {"checkpoint_seconds", st->checkpoint_seconds}};
    if (st->partitions > 0) kr.stats["partitions"] = st->partitions;
    if (ooc) {
      kr.stats["spilled_bytes"] = st->spilled_bytes;
      kr.stats["batch_peak_bytes"] = st->batch_peak_bytes;
      kr.stats["slot_read_bytes"] = st->slot_read_bytes;
      kr.stats["slot_written_bytes"] = st->slot_written_bytes;
      kr.stats["spill_budget_bytes"] = ooc->spill_budget();
      kr.stats["spill_rounds"] = st->spill_rounds;
      kr.stats["disk_peak_bytes"] = st->disk_peak_bytes;
      kr.stats["holes"] = !kr.holes.empty();  // whether the statistics and writer had them
    }
    if (st->resumed_level >= 0) {
      kr.stats["resumed_level"] = st->resumed_level;
      kr.stats["resumed_decided"] = st->resumed_decided;
      kr.stats["resumed_at"] = st->resumed_at;
    }
    return kr;
  }

  Status build_segment(int s) {
    return with_value_kind<G>(value_kind_of(*sel_.game, Seg(s)),
                              [&]<ValueKind KS>() { return build_segment_as<KS>(s); });
  }

  template <ValueKind KS>
  Status build_segment_as(int s) {
    const G& g = *sel_.game;
    const std::uint64_t entries = g.segment_size(Seg(s));
    kernels::Cluster* const cluster = req_.cluster;
    Lookup<G, KS> lookup(g, n_);
    RETRA_TRY(kernels::agree(cluster, gather(s, lookup)));
    const int threads = entries < kSmallSegment ? 1 : req_.threads;
    pool_->acquire(threads);
    struct Release {
      ThreadPool& p;
      int k;
      ~Release() { p.release(k); }
    } release{*pool_, threads};
    const auto t0 = Clock::now();  // the segment's own time, not its wait for threads
    // The values in memory, or out of core in a file beside the kernel's other arrays.
    std::optional<Values> in_memory;
    std::unique_ptr<FileOutOfCore> ooc;
    std::span<std::uint8_t> values;
    bool holes_out_of_core = false;
    std::uint64_t work = 0;  // out of core: the kernel's work budget, the holes' bitmap taken out
    if (out_of_core_[s] > 0) {
      return_free_memory();  // what earlier segments freed must not count against this one
      // Small segments run side by side, one thread each: they share the work budget by the
      // threads they were lent (a large one has them all).
      work = out_of_core_[s] / static_cast<std::uint64_t>(std::max(1, req_.threads)) *
             static_cast<std::uint64_t>(threads);
      // The holes' bitmap (a bit per position) spares the statistics and the writer a position
      // step per entry (measured in docs/ARCHITECTURE.md, the backward kernel's memory plan):
      // out of core it comes out of the work budget, where it takes no more than a quarter, so
      // that resident partitions and update batches keep at least three quarters of theirs.
      if constexpr (HasValidity<G> && !HasTerminalValue<G>) {
        const std::uint64_t hole_bytes = (entries + 63) / 64 * 8;
        if (!cluster && hole_bytes <= work / 4) {
          work -= hole_bytes;
          holes_out_of_core = true;
        }
      }
      // A quarter for resident partitions, an eighth for update batches, the rest for what the
      // allocator keeps, pages of frontiers and checkpoints in flight: measured on Awari 0..24
      // at a third of its in-memory need, a half for resident partitions went 6% over the
      // limit.
      // The spill files get what the disk has free as the segment starts (half of what its
      // other files leave), at least the reserve that the plan's disk figure counts.
      const std::uint64_t spill =
          out_of_core_spill_budget(entries, kernels::backward_state_bytes<G>(),
                                   io::free_disk_bytes(req_.db), req_.disk_limit);
      auto store = FileOutOfCore::create(out_of_core_dir(s), work / 4, work / 8, spill);
      if (!store) return std::move(store).error();
      ooc = std::move(*store);
      auto v = ooc->array("values", entries, false);
      if (!v) return std::move(v).error();
      values = *v;
    } else {
      auto v = Values::allocate(entries, req_.tuning.huge_pages);
      RETRA_TRY(kernels::agree(cluster, v ? Status{} : Status(std::move(v).error())));
      in_memory.emplace(std::move(*v));
      values = in_memory->span();
    }
    const auto tk = Clock::now();
    // Values later segments read from memory are kept: over a cluster, every rank then needs
    // them; the others reach rank 0 alone, which writes them (later builds read the file).
    const bool keep = users_[static_cast<std::size_t>(s)].load() > 0 && in_memory_[s];
    auto kr = run_kernel<KS>(s, values, lookup, threads, ooc.get(), keep, holes_out_of_core);
    RETRA_TRY(kernels::agree(cluster, kr ? Status{} : Status(std::move(kr).error())));
    // Every rank has the values now; rank 0 alone writes the file and the manifest.
    if (!cluster || cluster->rank() == 0) {
      RETRA_TRY(
          kernels::agree(cluster, publish<KS>(s, values, *kr, threads, tk, t0, ooc.get(), work)));
    } else {
      RETRA_TRY(kernels::agree(cluster, {}));
      remove_checkpoints(s);  // rank 0 has committed the segment
    }
    // Beside rank 0: the manifest as rank 0 wrote it, so that later segments can read this one
    // from disk.
    if (cluster)
      RETRA_TRY(kernels::agree(cluster, cluster->rank() != 0 ? db_->reload_manifest() : Status{}));
    // Keep the values while later builds read them; forget dependencies nobody needs any more.
    if (keep && in_memory) store_->keep(s, std::move(*in_memory));
    for (int d : deps(s))
      if (--users_[static_cast<std::size_t>(d)] == 0) store_->drop(d);
    return {};
  }

  // The statistics, the segment file and its manifest record of a finished kernel run. Out of
  // core, `work` is the kernel's work budget, free again now that the kernel is done.
  template <ValueKind KS>
  Status publish(int s, std::span<std::uint8_t> values, const KernelRun& kr, int threads,
                 Clock::time_point tk, Clock::time_point t0, FileOutOfCore* ooc,
                 std::uint64_t work) {
    const G& g = *sel_.game;
    const std::string& name = name_[s];
    const std::uint64_t entries = g.segment_size(Seg(s));
    if (ooc) return_free_memory();  // the kernel's update batches, before the writer's buffers
    // Out of core, the statistics and the writer read a copy of the values in memory when it
    // fits three quarters of the work budget beside the bit per entry the writer marks rule
    // entries with (the kernel's resident partitions had a quarter, its update batches an
    // eighth). The writer's entry-order trials, codec sample and blocks gather entries out of
    // index order; through the file mapping, every trim (below) unmaps the page cache's folios
    // the next gathers fault back in, ten times as slow as in memory where measured
    // (docs/ARCHITECTURE.md, the memory plan).
    std::optional<Values> copy;
    double copy_seconds = 0;
    if (ooc && req_.tuning.copy_values && entries + (entries + 63) / 64 * 8 <= work / 4 * 3) {
      const auto tc = Clock::now();
      // Where the allocation fails, the mapping serves as before.
      if (auto v = Values::allocate(entries, req_.tuning.huge_pages)) {
        copy.emplace(std::move(*v));
        ooc->copy_out(values.data(), entries, copy->data());
        values = copy->span();
      }
      copy_seconds = std::chrono::duration<double>(Clock::now() - tc).count();
    }
    // Else they read the values through the file mapping; a trimmer releases what they have
    // read every 2 ms, so that the pages do not add up to the segment's size in this process.
    std::optional<Trimmer> trim;
    if (ooc && !copy) trim.emplace(*ooc);
    SegmentReport r;
    r.name = name;
    r.entries = entries;
    r.kernel = kr.kernel;
    r.metric = kr.metric;
    if (kr.resumed_level >= 0)
      note(fmt::format("resumed at {} ({} positions were decided at the checkpoint); finished",
                       kr.resumed_at, kr.resumed_decided));
    r.iterations = kr.iterations;
    r.checkpoints = kr.checkpoints;
    r.resumed_level = kr.resumed_level;
    r.resumed_decided = kr.resumed_decided;
    r.resumed_at = kr.resumed_at;
    r.threads = threads;
    r.kernel_seconds = std::chrono::duration<double>(Clock::now() - tk).count();
    r.rss_bytes = current_rss_bytes();

    const auto ts = Clock::now();
    // With the kernel's holes when the game's statistics can take them (descriptor.hpp).
    if constexpr (requires(std::span<const std::uint64_t> h) {
                    D::statistics(g, Seg(s), values, kr.far, threads, h);
                  })
      r.stats = D::stats_json(D::statistics(g, Seg(s), values, kr.far, threads,
                                            std::span<const std::uint64_t>(kr.holes)));
    else
      r.stats = D::stats_json(D::statistics(g, Seg(s), values, kr.far, threads));
    if (!r.metric.empty()) r.stats["metric"] = r.metric;
    const double stats_seconds = std::chrono::duration<double>(Clock::now() - ts).count();

    progress_phase(req_.progress, D::segment_label(name) + ": writing", 0);
    // One half as classes, after the statistics (they count the distances). In place: segments
    // built later read the same bytes from memory as from the file (a class is all their
    // conversions read).
    format::ClassHalf half = format::ClassHalf::none;
    if constexpr (HasClassHalves<G>) {
      if (req_.class_half != format::ClassHalfChoice::none && g.drops_distances(Seg(s)) &&
          entries > 0 && entries % 2 == 0) {
        const auto classes = class_bytes(g, Seg(s));
        half = format::resolve_class_half(req_.class_half, values, classes);
        format::store_class_half(values, half, classes, threads);
      }
    }
    const format::SegmentInfo info{std::string(G::kName),
                                   std::string(G::kVariant),
                                   std::string(G::kIndexer),
                                   std::string(G::kValueEncoding),
                                   name,
                                   entries,
                                   1,
                                   req_.block_entries};
    // The rules' entries from the kernel's holes where it marked them (the same positions:
    // both ask the game's is_valid), else from the game's rules, a position step per entry.
    std::optional<GameEntryRules<G>> rules;
    std::optional<KnownHoles> known;
    if constexpr (kHasEntryRules<G>)
      if (req_.fill_rule_entries) {
        if (!kr.holes.empty())
          known.emplace(kr.holes);
        else
          rules.emplace(sel_.game, Seg(s));
      }
    format::WriteOptions wo;
    wo.zstd_level = req_.zstd_level;
    wo.threads = threads;
    wo.codec = req_.codec;
    wo.rules = known ? static_cast<const format::EntryRules*>(&*known) : rules ? &*rules : nullptr;
    wo.order = req_.order;
    if constexpr (HasIndexDigits<G>) wo.digits = g.index_digits(Seg(s));
    wo.far = kr.far;
    wo.class_half = half;
    auto written = format::write_segment(db_->segment_path(name), info, values, wo);
    if (!written) return std::move(written).error();
    r.file_bytes = written->file_bytes;
    r.raw_bytes = written->raw_bytes;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();

    format::SegmentRecord rec;
    rec.name = name;
    rec.file = db_->segment_path(name).filename().string();
    rec.entries = entries;
    rec.file_bytes = written->file_bytes;
    rec.raw_bytes = written->raw_bytes;
    rec.header_checksum = written->header_checksum;
    rec.build = {{"kernel", r.kernel},
                 {"threads", threads},
                 {"iterations", r.iterations},
                 {"kernel_stats", kr.stats},
                 {"kernel_seconds", r.kernel_seconds},
                 {"stats_seconds", stats_seconds},
                 {"seconds", r.seconds},
                 {"rss_bytes", r.rss_bytes},
                 {"capture_targets", in_memory_[s] ? "memory" : "block-wise"},
                 {"arrays", ooc ? "out-of-core" : "memory"},
                 {"writer_values", ooc && !copy ? "file" : "memory"},
                 {"ranks", req_.cluster ? req_.cluster->size() : 1},
                 {"block_entries", req_.block_entries},
                 {"zstd_level", req_.zstd_level},
                 {"codec", format::codec_name(written->codec)},
                 {"rule_entries", written->rule_entries},
                 {"write_seconds", written->seconds},
                 {"write",
                  {{"rules_seconds", written->rules_seconds},
                   {"order_seconds", written->order_seconds},
                   {"codec_seconds", written->codec_seconds},
                   {"blocks_seconds", written->blocks_seconds},
                   {"commit_seconds", written->commit_seconds}}},
                 {"entry_order", format::entry_order_text(written->order)},
                 {"class_half", format::class_half_name(half)},
                 {"tuning", req_.tuning.to_string()},
                 {"tool_version", std::string(kVersion)},
                 {"finished", format::utc_now_iso8601()}};
    if (!r.metric.empty()) rec.build["metric"] = r.metric;
    if (ooc && copy) rec.build["copy_seconds"] = copy_seconds;
    rec.stats = r.stats;
    {
      std::lock_guard l(mu_);
      RETRA_TRY(db_->commit_segment(std::move(rec), &D::segment_less));
    }
    remove_checkpoints(s);  // after the commit: until then a kill resumes from them
    progress_job_advance(req_.progress, r.entries);
    report(std::move(r));
    return {};
  }

  const BuildRequest& req_;
  Selection<G> sel_;
  int n_ = 0;
  std::vector<int> order_;
  std::vector<std::string> name_;  // by segment id
  std::vector<bool> requested_, todo_, in_memory_;
  // Out of core: the bytes of the kernel's work (resident partitions, update batches), by segment
  // (0: in memory).
  std::vector<std::uint64_t> out_of_core_;
  // The plan's headroom (its limit less its peak): the forward kernel may spend it on its graph.
  std::uint64_t spare_bytes_ = 0;
  std::unique_ptr<Database> db_;
  std::optional<FinishedStore> store_;
  std::vector<std::atomic<int>> users_;
  std::optional<ThreadPool> pool_;
  std::mutex mu_;  // manifest, reports, first error, callbacks
  std::vector<SegmentReport> reports_;
  std::optional<Error> failure_;
  std::atomic<bool> failed_{false};
};

template <GameDescriptor D>
Result<std::vector<SegmentReport>> run(const BuildRequest& req) {
  return Driver<D>(req).run();
}

}  // namespace retra::builder
