// The Awari verifier: an independent one-pass check of every stored value against the best over
// its legal moves, with all values read back from the segment files. It deliberately shares
// nothing with kernels/ (only the rules in board.hpp and the index), so a kernel bug cannot hide
// itself. Thread safety: uses opt.threads threads internally; reentrant.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "src/games/awari/database.hpp"
#include "src/games/awari/index.hpp"
#include "src/memory.hpp"

namespace retra::awari {

namespace {

bool parse_stones(const std::string& name, int& n) {
  if (name.empty() || name.size() > 2) return false;
  n = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  return n <= kMaxStones && segment_name(n) == name;
}

}  // namespace

Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt) {
  using Clock = std::chrono::steady_clock;
  const auto t_all = Clock::now();
  if (db.manifest().game != "awari")
    return Error(Errc::mismatch, fmt::format("'{}' holds a {} database, not awari",
                                             db.dir().string(), db.manifest().game));
  VerifyReport rep;
  auto fail = [&](VerifyFailure f) {
    rep.ok = false;
    rep.failure = std::move(f);
    rep.seconds = std::chrono::duration<double>(Clock::now() - t_all).count();
    return rep;
  };

  std::map<int, LargeArray<std::int8_t>> loaded;  // segments read back from disk
  auto load = [&](int n) -> Result<const std::int8_t*> {
    if (auto it = loaded.find(n); it != loaded.end()) return it->second.data();
    auto seg = db.segment(segment_name(n));
    if (!seg) return std::move(seg).error();
    auto arr = LargeArray<std::int8_t>::allocate(positions(n));
    if (!arr) return std::move(arr).error();
    RETRA_TRY(
        (*seg)->read_all({reinterpret_cast<std::uint8_t*>(arr->data()), arr->size()}, opt.threads));
    const std::int8_t* p = arr->data();
    loaded.emplace(n, std::move(*arr));
    return p;
  };
  auto failure_from = [&](const std::string& segment, const Error& e) {
    return failure_from_error(segment, e);
  };

  for (const auto& rec : db.manifest().segments) {
    const auto t0 = Clock::now();
    int n = 0;
    if (!parse_stones(rec.name, n))
      return fail({rec.name, {}, {}, {}, {}, {}, "segment name is not a stone count 0..48"});
    if (rec.entries != positions(n))
      return fail({rec.name,
                   {},
                   {},
                   {},
                   {},
                   {},
                   fmt::format("manifest lists {} entries, {} stones have {} positions",
                               rec.entries, n, positions(n))});
    progress_phase(opt.progress, fmt::format("verify {} stones", n), positions(n));
    auto self = load(n);
    if (!self) return fail(failure_from(rec.name, self.error()));
    std::array<const std::int8_t*, kMaxStones + 1> seg{};
    seg[n] = *self;
    for (int m = std::max(0, n - 15); m <= n - 2; ++m) {
      auto lower = load(m);
      if (!lower) {
        VerifyFailure f = failure_from(segment_name(m), lower.error());
        f.message =
            fmt::format("segment {} (needed by captures from {} stones): {}", m, n, f.message);
        return fail(f);
      }
      seg[m] = *lower;
    }
    // Segments below n - 15 are not needed any more.
    for (auto it = loaded.begin(); it != loaded.end();)
      it = it->first < n - 15 ? loaded.erase(it) : std::next(it);

    const std::uint64_t size = positions(n);
    const std::uint64_t block = db.segment(rec.name).value()->info().block_entries;
    const std::uint64_t blocks = (size + block - 1) / block;
    std::atomic<std::uint64_t> first_bad{size};
    std::vector<std::uint64_t> counts(2 * static_cast<std::size_t>(n) + 1, 0);
    std::mutex mu;
#pragma omp parallel num_threads(std::max(1, opt.threads))
    {
      std::vector<std::uint64_t> local(counts.size(), 0);
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t begin = b * block, end = std::min(size, begin + block);
        if (begin > first_bad.load(std::memory_order_relaxed)) continue;
        Board p = unrank(n, begin);
        for (std::uint64_t i = begin; i < end; ++i, next(p)) {
          const int stored = seg[n][i];
          int best = -1000;
          const int legal = for_each_legal_move(p, [&](int, const MoveResult& m) {
            const int child = seg[n - m.captured][rank(m.child)];
            best = std::max(best, m.captured - child);
          });
          if (legal == 0) best = no_move_value(p);
          if (stored != best || stored < -n || stored > n) {
            std::uint64_t cur = first_bad.load();
            while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
            }
            break;
          }
          ++local[static_cast<std::size_t>(stored + n)];
        }
        progress_advance(opt.progress, end - begin);
      }
      std::lock_guard lock(mu);
      for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += local[k];
    }
    if (const std::uint64_t i = first_bad.load(); i < size) {
      const Board p = unrank(n, i);
      int best = -1000;
      const int legal = for_each_legal_move(p, [&](int, const MoveResult& m) {
        best = std::max(best, m.captured - seg[n - m.captured][rank(m.child)]);
      });
      if (legal == 0) best = no_move_value(p);
      VerifyFailure f{rec.name, i / block, i, format_board(p), seg[n][i], best, {}};
      f.message = fmt::format(
          "segment {} block {} index {} position {}: stored value {}, but "
          "the best move is worth {}",
          rec.name, i / block, i, f.position, seg[n][i], best);
      return fail(f);
    }
    const auto want = rec.stats.value("counts", nlohmann::json::array());
    if (want != nlohmann::json(counts))
      return fail({rec.name,
                   {},
                   {},
                   {},
                   {},
                   {},
                   fmt::format("segment {}: the value histogram in the manifest differs from the "
                               "values on disk",
                               rec.name)});
    rep.segments.push_back(
        {rec.name, size, std::chrono::duration<double>(Clock::now() - t0).count()});
  }
  rep.seconds = std::chrono::duration<double>(Clock::now() - t_all).count();
  return rep;
}

}  // namespace retra::awari
