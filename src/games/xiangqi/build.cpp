// Xiangqi builds: the hierarchy of supporting endgames as a TBB flow graph (an endgame starts
// when the endgames it depends on are finished; independent small ones run side by side), each
// endgame computed by the generic backward kernel in distance-to-mate mode, written atomically
// and recorded in the manifest with its statistics.
// Thread safety: one build per directory (lock file); internally the flow graph's bodies share
// state through mutexes, atomics and the graph's happens-before edges.
#ifndef RETRA_NO_TBB
#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>
#endif

#include <omp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "kernels/backward.hpp"
#include "src/games/xiangqi/database.hpp"
#include "src/io/file.hpp"
#include "src/memory.hpp"
#include "src/version.hpp"

namespace retra::xiangqi {

DatabaseIdentity identity() {
  return {std::string(Game::kName), std::string(kVariant), std::string(kIndexerName),
          std::string(kValueEncoding)};
}

nlohmann::json endgame_stats(const Game& g, int s, const std::uint8_t* values, int threads) {
  const std::uint64_t half = g.endgame(s).indexer->size();
  struct Counts {
    std::uint64_t valid = 0, kfk = 0, okic[2] = {}, mate[2] = {}, stale[2] = {}, draws[2] = {};
    std::uint64_t hist[2][256] = {};
    int max_dtm = -1;
  };
  Counts total;
  const std::uint64_t chunk = 1u << 14, chunks = (half + chunk - 1) / chunk;
#pragma omp parallel num_threads(std::max(1, threads)) if (chunks > 1)
  {
    Counts c;
#pragma omp for schedule(dynamic, 1)
    for (std::uint64_t k = 0; k < chunks; ++k) {
      const std::uint64_t end = std::min(half, (k + 1) * chunk);
      Position p = g.unrank(s, k * chunk);
      for (std::uint64_t i = k * chunk; i < end; ++i) {
        if (i > k * chunk) g.next(s, p);
        if (!p.valid) continue;
        ++c.valid;
        const Board b = g.board(s, p);
        const bool facing = kings_facing(b);
        c.kfk += facing;
        for (int side = 0; side < 2; ++side) {
          const int v = values[side * half + i];
          ++c.hist[side][v];
          if (v == 0) ++c.draws[side];
          if (v == 1 && !facing) ++c.okic[side];
          if (v == 2) ++(in_check(b, Color(side)) ? c.mate : c.stale)[side];
          if (v >= 2) c.max_dtm = std::max(c.max_dtm, v - 2);
        }
      }
    }
#pragma omp critical
    {
      total.valid += c.valid;
      total.kfk += c.kfk;
      for (int side = 0; side < 2; ++side) {
        total.okic[side] += c.okic[side];
        total.mate[side] += c.mate[side];
        total.stale[side] += c.stale[side];
        total.draws[side] += c.draws[side];
        for (int v = 0; v < 256; ++v) total.hist[side][v] += c.hist[side][v];
      }
      total.max_dtm = std::max(total.max_dtm, c.max_dtm);
    }
  }
  auto pair = [](const std::uint64_t(&a)[2]) { return nlohmann::json::array({a[0], a[1]}); };
  nlohmann::json hist = {{"red", nlohmann::json::object()}, {"black", nlohmann::json::object()}};
  for (int side = 0; side < 2; ++side)
    for (int v = 0; v < 256; ++v)
      if (total.hist[side][v])
        hist[side == 0 ? "red" : "black"][std::to_string(v)] = total.hist[side][v];
  const Indexer& ix = *g.endgame(s).indexer;
  return {{"index_size", half},
          {"paper_index_size", ix.paper_size()},
          {"scheme", ix.scheme()},
          {"valid_positions", total.valid},
          {"kfk", total.kfk},
          {"okic", pair(total.okic)},
          {"checkmate", pair(total.mate)},
          {"stalemate", pair(total.stale)},
          {"draws", pair(total.draws)},
          {"histogram", hist},
          {"max_dtm_plies", total.max_dtm >= 0 ? nlohmann::json(total.max_dtm) : nlohmann::json()}};
}

namespace {

// Threads lent to concurrently running builds: small endgames take one, large ones all.
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

std::uint64_t kernel_bytes(std::uint64_t entries, int threads) {
  const std::uint64_t writer = std::max<std::uint64_t>(64, 4ull * threads) * (256u << 10);
  return 2 * entries + entries / 10 * 8 * 3 + writer;  // values, state, frontiers, writer
}

}  // namespace

Result<std::vector<EndgameReport>> build(const BuildOptions& opt) {
  using Clock = std::chrono::steady_clock;
  if (opt.endgames.empty()) return Error(Errc::invalid_argument, "no endgame to build");
  if (opt.threads < 1) return Error(Errc::invalid_argument, "--threads must be at least 1");
  if (opt.zstd_level < 1 || opt.zstd_level > 19)
    return Error(Errc::invalid_argument, "zstd level must be in 1..19");
  if (opt.block_entries < 256 || opt.block_entries > (1u << 26))
    return Error(Errc::invalid_argument, "block size must be in 256..67108864 entries");
  if (opt.db.empty()) return Error(Errc::invalid_argument, "--db is required");
  std::vector<Material> targets;
  std::set<std::string> requested;
  for (const auto& name : opt.endgames) {
    auto m = parse_material(name);
    if (!m) return std::move(m).error();
    requested.insert(m->name());
    targets.push_back(*m);
  }
  auto gr = Game::closure(targets);
  if (!gr) return std::move(gr).error();
  const Game& game = **gr;
  const int n = game.segments();

  // What is built already, and the memory plan, before the directory is touched.
  std::set<std::string> built;
  {
    std::error_code ec;
    if (std::filesystem::exists(opt.db / format::kManifestName, ec))
      if (auto existing = Database::open(opt.db))
        for (const auto& rec : (*existing)->manifest().segments) built.insert(rec.name);
  }
  std::vector<bool> todo(n);
  std::vector<SegmentNeed> needs;
  for (int s = 0; s < n; ++s) {
    const std::string& name = game.endgame(s).name;
    todo[s] = !built.count(name) || (opt.force && requested.count(name));
    if (!todo[s]) continue;
    std::uint64_t deps = 0;
    for (int d : game.dependencies(s)) deps += game.segment_size(d);
    needs.push_back({name, kernel_bytes(game.segment_size(s), opt.threads), deps});
  }
  auto plan = plan_memory(needs, opt.memory_limit ? opt.memory_limit : default_memory_limit());
  if (!plan) return std::move(plan).error();
  if (opt.on_plan) opt.on_plan(*plan);

  auto db = Database::open_for_build(opt.db, identity());
  if (!db) return std::move(db).error();
  auto lock = io::DirectoryLock::acquire(opt.db);
  if (!lock) return std::move(lock).error();
  db = Database::open_for_build(opt.db, identity());
  if (!db) return std::move(db).error();

  // Values of finished endgames that later builds read, and how many builds still need each.
  std::vector<LargeArray<std::uint8_t>> kept(n);
  std::vector<std::atomic<const std::uint8_t*>> ptr(n);
  std::vector<std::atomic<int>> users(n);
  std::vector<std::once_flag> load_once(n);
  std::vector<Error> load_errors(n, Error(Errc::internal, ""));
  std::vector<bool> load_failed(n, false);
  for (int s = 0; s < n; ++s) {
    ptr[s] = nullptr;
    users[s] = 0;
  }
  for (int s = 0; s < n; ++s)
    if (todo[s])
      for (int d : game.dependencies(s)) ++users[d];

  std::mutex mu;  // manifest, reports, first error
  std::vector<EndgameReport> reports;
  std::optional<Error> failure;
  std::atomic<bool> failed{false};
  ThreadPool pool(opt.threads);

  auto load = [&](int s) -> Status {
    std::call_once(load_once[s], [&] {
      if (ptr[s].load()) return;
      auto reader = (*db)->segment(game.endgame(s).name);
      auto arr = reader ? LargeArray<std::uint8_t>::allocate(game.segment_size(s))
                        : Result<LargeArray<std::uint8_t>>(reader.error());
      Status st = arr ? (*reader)->read_all(arr->span(), opt.threads) : Status(arr.error());
      if (!st) {
        load_errors[s] = st.error();
        load_failed[s] = true;
        return;
      }
      kept[s] = std::move(*arr);
      ptr[s] = kept[s].data();
    });
    if (load_failed[s]) return load_errors[s];
    return {};
  };
  auto fail = [&](Error e) {
    std::lock_guard l(mu);
    if (!failure) failure = std::move(e);
    failed = true;
  };

  auto run = [&](int s) {
    if (failed) return;
    const Endgame& eg = game.endgame(s);
    const std::uint64_t entries = game.segment_size(s);
    if (!todo[s]) {
      if (requested.count(eg.name)) {
        const auto* rec = (*db)->manifest().find(eg.name);
        EndgameReport r;
        r.name = eg.name;
        r.index_size = entries / 2;
        r.paper_index_size = eg.indexer->paper_size();
        r.scheme = eg.indexer->scheme();
        r.skipped = true;
        r.metric = rec->stats.value("metric", "dtm");
        r.levels = rec->build.value("levels", 0);
        r.kernel_seconds = rec->build.value("kernel_seconds", 0.0);
        r.seconds = rec->build.value("seconds", 0.0);
        r.rss_bytes = rec->build.value("rss_bytes", std::uint64_t{0});
        r.file_bytes = rec->file_bytes;
        r.raw_bytes = rec->raw_bytes;
        r.stats = rec->stats;
        std::lock_guard l(mu);
        if (opt.on_endgame) opt.on_endgame(r);
        reports.push_back(std::move(r));
      }
      return;
    }
    for (int d : game.dependencies(s))
      if (Status st = load(d); !st) return fail(st.error());
    // Small endgames run on one thread beside others; large ones get every thread.
    const int threads = entries < (4u << 20) ? 1 : opt.threads;
    pool.acquire(threads);
    const auto t0 = Clock::now();  // the endgame's own time, not its wait for threads
    EndgameReport r;
    r.name = eg.name;
    r.index_size = entries / 2;
    r.paper_index_size = eg.indexer->paper_size();
    r.scheme = eg.indexer->scheme();
    r.threads = threads;
    auto values = LargeArray<std::uint8_t>::allocate(entries, opt.tuning.huge_pages);
    if (!values) {
      pool.release(threads);
      return fail(values.error());
    }
    struct Lower {
      const std::vector<std::atomic<const std::uint8_t*>>& ptr;
      std::uint8_t operator()(int seg, std::uint64_t index) const {
        return seg == Game::kArmless ? static_cast<std::uint8_t>(index)
                                     : ptr[seg].load(std::memory_order_relaxed)[index];
      }
      void prefetch(int seg, std::uint64_t index) const {
        if (seg != Game::kArmless)
          __builtin_prefetch(ptr[seg].load(std::memory_order_relaxed) + index);
      }
    } lower{ptr};
    kernels::KernelOptions ko;
    ko.threads = threads;
    ko.chunk = opt.block_entries;
    ko.progress = opt.progress;
    ko.label = eg.name;
    ko.tuning = opt.tuning;
    const auto tk = Clock::now();
    ko.dtc = opt.dtc;
    r.metric = opt.dtc ? "dtc" : "dtm";
    auto st = kernels::backward(game, s, values->span(), lower, ko);
    if (!st && !opt.dtc && st.error().cause() == Cause::distance_overflow) {
      // A distance beyond 254 plies: distance to conversion instead (Fang 3.3).
      ko.dtc = true;
      r.metric = "dtc";
      st = kernels::backward(game, s, values->span(), lower, ko);
    }
    if (!st) {
      pool.release(threads);
      return fail(st.error());
    }
    r.kernel_seconds = std::chrono::duration<double>(Clock::now() - tk).count();
    r.rss_bytes = current_rss_bytes();
    r.levels = st->levels;
    const auto ts = Clock::now();
    r.stats = endgame_stats(game, s, values->data(), threads);
    const double stats_seconds = std::chrono::duration<double>(Clock::now() - ts).count();
    r.stats["metric"] = r.metric;
    format::SegmentInfo info{std::string(Game::kName),
                             std::string(kVariant),
                             std::string(kIndexerName),
                             std::string(kValueEncoding),
                             eg.name,
                             entries,
                             1,
                             opt.block_entries};
    auto written = format::write_segment((*db)->segment_path(eg.name), info, values->span(),
                                         {opt.zstd_level, threads});
    pool.release(threads);
    if (!written) return fail(written.error());
    r.file_bytes = written->file_bytes;
    r.raw_bytes = written->raw_bytes;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    format::SegmentRecord rec;
    rec.name = eg.name;
    rec.file = (*db)->segment_path(eg.name).filename().string();
    rec.entries = entries;
    rec.file_bytes = written->file_bytes;
    rec.raw_bytes = written->raw_bytes;
    rec.header_checksum = written->header_checksum;
    rec.build = {{"kernel", "backward"},
                 {"threads", threads},
                 {"levels", r.levels},
                 {"kernel_seconds", r.kernel_seconds},
                 {"init_seconds", st->init_seconds},
                 {"propagate_seconds", st->propagate_seconds},
                 {"scan_seconds", st->scan_seconds},
                 {"stats_seconds", stats_seconds},
                 {"predecessors", st->predecessors},
                 {"seconds", r.seconds},
                 {"rss_bytes", r.rss_bytes},
                 {"max_frontier", st->max_frontier},
                 {"block_entries", opt.block_entries},
                 {"zstd_level", opt.zstd_level},
                 {"tuning", opt.tuning.to_string()},
                 {"tool_version", std::string(kVersion)},
                 {"finished", format::utc_now_iso8601()}};
    rec.stats = r.stats;
    {
      std::lock_guard l(mu);
      if (Status c = (*db)->commit_segment(std::move(rec)); !c) {
        failure = c.error();
        failed = true;
        return;
      }
      if (opt.on_endgame) opt.on_endgame(r);
      reports.push_back(r);
    }
    // Keep the values while later builds read them; free dependencies nobody needs any more.
    if (users[s].load() > 0) {
      kept[s] = std::move(*values);
      ptr[s] = kept[s].data();
    }
    for (int d : game.dependencies(s))
      if (--users[d] == 0) {
        ptr[d] = nullptr;
        kept[d] = {};
      }
  };

#ifdef RETRA_NO_TBB
  for (int s = 0; s < n; ++s) run(s);  // the closure is in dependency order
#else
  // The flow graph: one node per endgame, an edge from each dependency.
  tbb::task_arena arena(std::max(1, opt.jobs > 0 ? opt.jobs : opt.threads));
  arena.execute([&] {
    tbb::flow::graph graph;
    tbb::flow::broadcast_node<tbb::flow::continue_msg> start(graph);
    std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg>>> nodes;
    for (int s = 0; s < n; ++s)
      nodes.push_back(std::make_unique<tbb::flow::continue_node<tbb::flow::continue_msg>>(
          graph, [&run, s](const tbb::flow::continue_msg&) { run(s); }));
    for (int s = 0; s < n; ++s) {
      const auto deps = game.dependencies(s);
      if (deps.empty()) tbb::flow::make_edge(start, *nodes[s]);
      for (int d : deps) tbb::flow::make_edge(*nodes[d], *nodes[s]);
    }
    start.try_put(tbb::flow::continue_msg());
    graph.wait_for_all();
  });
#endif
  if (failure) return *failure;
  // Report in dependency order, whatever order they finished in.
  std::vector<EndgameReport> ordered;
  for (int s = 0; s < n; ++s)
    for (auto& r : reports)
      if (r.name == game.endgame(s).name) ordered.push_back(std::move(r));
  return ordered;
}

}  // namespace retra::xiangqi
