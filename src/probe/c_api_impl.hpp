// Helpers of the C ABI (include/retra/retra.h), shared by its game-blind entry points
// (src/probe/c_api.cpp) and the thin typed ones each game adds in its own folder: the handle
// shell, status and message plumbing, and the guard that keeps exceptions from crossing the ABI.
// Thread safety: the per-thread message is thread_local; a shell's magic is atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "retra/probe.hpp"
#include "retra/retra.h"

struct retra_db {
  static constexpr std::uint32_t kLive = 0x52545241;    // "RTRA"
  static constexpr std::uint32_t kClosed = 0x434C5344;  // "CLSD"
  std::atomic<std::uint32_t> magic{kLive};
  std::unique_ptr<retra::probe::Prober> prober;
  std::string game;
};

namespace retra::capi {

// Sets the calling thread's message and returns the status as an int.
int fail(probe::Status s, std::string msg);
// RETRA_OK for an ok value, else its status (and message).
int finish(const probe::Value& v);
// The live prober of a handle, or a status for a null or closed one.
int check(const retra_db* db, const probe::Prober** out);
// Copies a batch's results out; the first failure's status (and message) is the return value.
int store_batch(const std::vector<probe::Value>& out, int* values, int* statuses);

template <class F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(probe::Status::resource, "out of memory");
  } catch (const std::exception& e) {
    return fail(probe::Status::internal, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(probe::Status::internal, "internal error");
  }
}

}  // namespace retra::capi
