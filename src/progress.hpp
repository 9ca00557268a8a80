// Progress of a long job, published by library code and rendered by whoever watches (the CLI's
// progress bar). Thread safety: every member may be called from any thread; advance() is one
// relaxed atomic add so it is cheap enough for per-chunk calls inside kernels.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

namespace retra {

class Progress {
 public:
  struct Snapshot {
    std::string label;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
    std::uint64_t generation = 0;  // changes whenever a new phase starts
  };

  // Starts a new phase: a label ("16 stones: sweep 3") and the amount of work in it.
  void phase(std::string label, std::uint64_t total) {
    std::lock_guard lock(mu_);
    label_ = std::move(label);
    total_.store(total, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_relaxed);
  }
  void advance(std::uint64_t n) noexcept { done_.fetch_add(n, std::memory_order_relaxed); }
  // A one-line message to print above the bar (for example a finished segment's summary).
  void message(std::string line) {
    std::lock_guard lock(mu_);
    messages_ += line;
    messages_ += '\n';
  }
  std::string take_messages() {
    std::lock_guard lock(mu_);
    return std::exchange(messages_, {});
  }
  Snapshot snapshot() const {
    std::lock_guard lock(mu_);
    return {label_, done_.load(std::memory_order_relaxed), total_.load(std::memory_order_relaxed),
            generation_.load(std::memory_order_relaxed)};
  }

 private:
  mutable std::mutex mu_;
  std::string label_;
  std::string messages_;
  std::atomic<std::uint64_t> done_{0}, total_{0}, generation_{0};
};

// Null-safe helpers for library code that takes an optional Progress*.
inline void progress_phase(Progress* p, std::string label, std::uint64_t total) {
  if (p) p->phase(std::move(label), total);
}
inline void progress_advance(Progress* p, std::uint64_t n) noexcept {
  if (p) p->advance(n);
}

}  // namespace retra
