// The C ABI (include/retra/retra.h) over retra::probe::Prober. Every entry point catches
// everything: no exception crosses the ABI. Handles are shells that are never freed while the
// process lives (a closed shell only drops its Prober), so a closed handle is reported as closed
// instead of being a use-after-free. Thread safety: as Prober; the shell registry is locked.
#include "retra/retra.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "retra/probe.hpp"
#include "src/version.hpp"

struct retra_db {
  static constexpr std::uint32_t kLive = 0x52545241;    // "RTRA"
  static constexpr std::uint32_t kClosed = 0x434C5344;  // "CLSD"
  std::atomic<std::uint32_t> magic{kLive};
  std::unique_ptr<retra::probe::Prober> prober;
  std::string game;
};

namespace {

using retra::probe::Status;
using retra::probe::Value;

thread_local std::string t_error;

int fail(Status s, std::string msg) {
  t_error = std::move(msg);
  return static_cast<int>(s);
}

int finish(const Value& v) {
  if (v) return RETRA_OK;
  return fail(v.status, v.message);
}

// Shells live until exit, reachable from here (so leak checkers do not report them).
std::mutex g_mu;
std::vector<std::unique_ptr<retra_db>>& shells() {
  static auto* v = new std::vector<std::unique_ptr<retra_db>>();
  return *v;
}

// The live prober of a handle, or a status for a null or closed one.
int check(const retra_db* db, const retra::probe::Prober** out) {
  if (!db) return fail(Status::null_handle, "the handle is null; open one with retra_open");
  const std::uint32_t m = db->magic.load(std::memory_order_acquire);
  if (m == retra_db::kClosed)
    return fail(Status::closed_handle, "the handle was closed with retra_close");
  if (m != retra_db::kLive || !db->prober)
    return fail(Status::null_handle, "not a handle returned by retra_open");
  *out = db->prober.get();
  return RETRA_OK;
}

// Copies a batch's results out; the first failure's status (and message) is the return value.
int store_batch(const std::vector<Value>& out, int* values, int* statuses) {
  int first = RETRA_OK;
  for (size_t i = 0; i < out.size(); ++i) {
    values[i] = out[i] ? out[i].value : 0;
    if (statuses) statuses[i] = static_cast<int>(out[i].status);
    if (!out[i] && first == RETRA_OK) first = finish(out[i]);
  }
  return first;
}

template <class F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(Status::resource, "out of memory");
  } catch (const std::exception& e) {
    return fail(Status::internal, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(Status::internal, "internal error");
  }
}

}  // namespace

extern "C" {

int retra_open(const char* dir, size_t cache_bytes, retra_db** out) {
  return guarded([&] {
    if (!out) return fail(Status::null_handle, "the output pointer is null");
    *out = nullptr;
    if (!dir) return fail(Status::invalid_argument, "the directory is null");
    retra::probe::Options opt;
    if (cache_bytes) opt.cache_bytes = cache_bytes;
    Value err;
    auto p = retra::probe::Prober::open(dir, opt, &err);
    if (!p) return finish(err);
    auto shell = std::make_unique<retra_db>();
    shell->game = std::string(p->game());
    shell->prober = std::move(p);
    std::lock_guard lock(g_mu);
    shells().push_back(std::move(shell));
    *out = shells().back().get();
    return static_cast<int>(RETRA_OK);
  });
}

int retra_close(retra_db* db) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    std::lock_guard lock(g_mu);
    db->magic.store(retra_db::kClosed, std::memory_order_release);
    db->prober.reset();
    return static_cast<int>(RETRA_OK);
  });
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

int retra_awari_probe(const retra_db* db, const int pits[12], int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!pits || !value) return fail(Status::null_handle, "pits or value is null");
    std::array<int, 12> a;
    std::copy(pits, pits + 12, a.begin());
    const Value v = p->awari(a);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_awari_probe_batch(const retra_db* db, const int* pits, size_t n, int* values,
                            int* statuses) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (n == 0) return static_cast<int>(RETRA_OK);
    if (!pits || !values) return fail(Status::null_handle, "pits or values is null");
    std::vector<std::array<int, 12>> pos(n);
    for (size_t i = 0; i < n; ++i) std::copy(pits + 12 * i, pits + 12 * i + 12, pos[i].begin());
    std::vector<Value> out(n);
    p->awari_batch(pos, out);
    return store_batch(out, values, statuses);
  });
}

int retra_xiangqi_probe(const retra_db* db, const char* fen, int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!fen || !value) return fail(Status::null_handle, "fen or value is null");
    const Value v = p->xiangqi(fen);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_xiangqi_probe_board(const retra_db* db, const unsigned char board[90], int side_to_move,
                              int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!board || !value) return fail(Status::null_handle, "board or value is null");
    const Value v = p->xiangqi_board(std::span<const std::uint8_t, 90>(board, 90), side_to_move);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_xiangqi_probe_batch(const retra_db* db, const char* const* fens, size_t n, int* values,
                              int* statuses) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (n == 0) return static_cast<int>(RETRA_OK);
    if (!fens || !values) return fail(Status::null_handle, "fens or values is null");
    std::vector<std::string_view> f(n);
    for (size_t i = 0; i < n; ++i) {
      if (!fens[i]) return fail(Status::null_handle, "a FEN in the batch is null");
      f[i] = fens[i];
    }
    std::vector<Value> out(n);
    p->xiangqi_batch(f, out);
    return store_batch(out, values, statuses);
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

const char* retra_last_error(void) { return t_error.c_str(); }

const char* retra_status_name(int status) {
  if (status < 0 || status > static_cast<int>(Status::closed_handle)) return "unknown";
  return retra::probe::status_name(static_cast<Status>(status)).data();
}

const char* retra_version(void) { return retra::kVersion.data(); }

}  // extern "C"
