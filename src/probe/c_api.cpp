// The C ABI's game-blind entry points (include/retra/retra.h) over retra::probe::Prober. Every
// entry point catches everything: no exception crosses the ABI. Handles are shells that are never
// freed while the process lives (a closed shell only drops its Prober), so a closed handle is
// reported as closed instead of being a use-after-free. Thread safety: as Prober; the shell
// registry is locked.
#include <mutex>
#include <string_view>

#include "src/probe/c_api_impl.hpp"
#include "src/version.hpp"

namespace retra::capi {

using probe::Status;
using probe::Value;

namespace {

thread_local std::string t_error;

// Shells live until exit, reachable from here (so leak checkers do not report them).
std::mutex g_mu;
std::vector<std::unique_ptr<retra_db>>& shells() {
  static auto* v = new std::vector<std::unique_ptr<retra_db>>();
  return *v;
}

}  // namespace

int fail(Status s, std::string msg) {
  t_error = std::move(msg);
  return static_cast<int>(s);
}

int finish(const Value& v) {
  if (v) return RETRA_OK;
  return fail(v.status, v.message);
}

int check(const retra_db* db, const probe::Prober** out) {
  if (!db) return fail(Status::null_handle, "the handle is null; open one with retra_open");
  const std::uint32_t m = db->magic.load(std::memory_order_acquire);
  if (m == retra_db::kClosed)
    return fail(Status::closed_handle, "the handle was closed with retra_close");
  if (m != retra_db::kLive || !db->prober)
    return fail(Status::null_handle, "not a handle returned by retra_open");
  *out = db->prober.get();
  return RETRA_OK;
}

int store_batch(const std::vector<Value>& out, int* values, int* statuses) {
  int first = RETRA_OK;
  for (size_t i = 0; i < out.size(); ++i) {
    values[i] = out[i] ? out[i].value : 0;
    if (statuses) statuses[i] = static_cast<int>(out[i].status);
    if (!out[i] && first == RETRA_OK) first = finish(out[i]);
  }
  return first;
}

const char* last_error() { return t_error.c_str(); }

int open_handle(const char* dir, size_t cache_bytes, retra_db** out) {
  if (!out) return fail(Status::null_handle, "the output pointer is null");
  *out = nullptr;
  if (!dir) return fail(Status::invalid_argument, "the directory is null");
  probe::Options opt;
  if (cache_bytes) opt.cache_bytes = cache_bytes;
  Value err;
  auto p = probe::Prober::open(dir, opt, &err);
  if (!p) return finish(err);
  auto shell = std::make_unique<retra_db>();
  shell->game = std::string(p->game());
  shell->prober = std::move(p);
  std::lock_guard lock(g_mu);
  shells().push_back(std::move(shell));
  *out = shells().back().get();
  return static_cast<int>(RETRA_OK);
}

int close_handle(retra_db* db) {
  const probe::Prober* p = nullptr;
  if (int st = check(db, &p); st != RETRA_OK) return st;
  std::lock_guard lock(g_mu);
  db->magic.store(retra_db::kClosed, std::memory_order_release);
  db->prober.reset();
  return static_cast<int>(RETRA_OK);
}

}  // namespace retra::capi

using namespace retra::capi;
using retra::probe::Status;
using retra::probe::Value;

extern "C" {

int retra_open(const char* dir, size_t cache_bytes, retra_db** out) {
  return guarded([&] { return open_handle(dir, cache_bytes, out); });
}

int retra_close(retra_db* db) {
  return guarded([&] { return close_handle(db); });
}

int retra_game(const retra_db* db, const char** game) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!game) return fail(Status::null_handle, "the output pointer is null");
    *game = db->game.c_str();
    return static_cast<int>(RETRA_OK);
  });
}

int retra_probe(const retra_db* db, const char* position, int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!position || !value) return fail(Status::null_handle, "position or value is null");
    const Value v = p->probe(position);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_probe_batch(const retra_db* db, const char* const* positions, size_t n, int* values,
                      int* statuses) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (n == 0) return static_cast<int>(RETRA_OK);
    if (!positions || !values) return fail(Status::null_handle, "positions or values is null");
    std::vector<std::string_view> texts(n);
    for (size_t i = 0; i < n; ++i) {
      if (!positions[i]) return fail(Status::null_handle, "a position in the batch is null");
      texts[i] = positions[i];
    }
    std::vector<Value> out(n);
    p->probe_batch(texts, out);
    return store_batch(out, values, statuses);
  });
}

int retra_coverage(const retra_db* db, int* largest, int* complete) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    const auto c = p->coverage();
    if (largest) *largest = c.largest;
    if (complete) *complete = c.complete;
    return static_cast<int>(RETRA_OK);
  });
}

int retra_cache_stats(const retra_db* db, unsigned long long* hits, unsigned long long* misses,
                      unsigned long long* bytes) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    const auto c = p->cache_stats();
    if (hits) *hits = c.hits;
    if (misses) *misses = c.misses;
    if (bytes) *bytes = c.bytes;
    return static_cast<int>(RETRA_OK);
  });
}

const char* retra_last_error(void) { return last_error(); }

const char* retra_status_name(int status) {
  if (status < 0 || status > static_cast<int>(Status::closed_handle)) return "unknown";
  return retra::probe::status_name(static_cast<Status>(status)).data();
}

const char* retra_version(void) { return retra::kVersion.data(); }

}  // extern "C"
