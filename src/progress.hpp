// Progress of a long job, published by library code and rendered by whoever watches (the CLI's
// progress bar). Thread safety: every member may be called from any thread; advance() and
// job_advance() are one relaxed atomic add each, cheap enough for per-chunk calls in kernels.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace retra {

class Progress {
 public:
  struct Snapshot {
    std::string label;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
    std::uint64_t generation = 0;  // changes whenever a new phase starts
    // The whole job, for jobs of many phases (a build of many segments): work done and in all,
    // and seconds since job() started it; job_total 0: no such count.
    std::uint64_t job_done = 0;
    std::uint64_t job_total = 0;
    double job_seconds = 0;
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
  // Starts the whole job's count (in any unit: a build counts the positions of the segments it
  // builds, advanced as each one finishes), from which the bar estimates the time left.
  void job(std::uint64_t total) {
    std::lock_guard lock(mu_);
    job_start_ = std::chrono::steady_clock::now();
    job_total_.store(total, std::memory_order_relaxed);
    job_done_.store(0, std::memory_order_relaxed);
  }
  void job_advance(std::uint64_t n) noexcept { job_done_.fetch_add(n, std::memory_order_relaxed); }
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
    Snapshot s;
    s.label = label_;
    s.done = done_.load(std::memory_order_relaxed);
    s.total = total_.load(std::memory_order_relaxed);
    s.generation = generation_.load(std::memory_order_relaxed);
    s.job_done = job_done_.load(std::memory_order_relaxed);
    s.job_total = job_total_.load(std::memory_order_relaxed);
    if (s.job_total)
      s.job_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - job_start_).count();
    return s;
  }

 private:
  mutable std::mutex mu_;
  std::string label_;
  std::string messages_;
  std::atomic<std::uint64_t> done_{0}, total_{0}, generation_{0};
  std::atomic<std::uint64_t> job_done_{0}, job_total_{0};
  std::chrono::steady_clock::time_point job_start_{};
};

// A duration for people: "45 s", "27 min 03 s", "2 h 31 min".
inline std::string format_duration(double seconds) {
  // Negative and NaN read as 0, and the cast stays defined for any input (1e12 s: 31,700 years).
  const double clamped = seconds > 0 ? std::min(seconds, 1e12) : 0.0;
  const auto s = static_cast<std::uint64_t>(clamped + 0.5);
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
}

// The whole job's part of a progress line: "all 14.5%, about 2 h 31 min left", or "" while
// nothing of it is done (so a job of one phase never shows it). The time left assumes that the
// rest goes at the pace so far, per unit of work (a build: per position), and is left out below
// 1% done, where that pace says little.
inline std::string job_estimate(const Progress::Snapshot& s) {
  if (s.job_total == 0 || s.job_done == 0) return {};
  const double frac =
      std::min(1.0, static_cast<double>(s.job_done) / static_cast<double>(s.job_total));
  std::string out = fmt::format("all {:.1f}%", frac * 100);
  if (frac >= 0.01 && frac < 1.0)
    out += fmt::format(", about {} left", format_duration(s.job_seconds * (1 - frac) / frac));
  return out;
}

// Null-safe helpers for library code that takes an optional Progress*.
inline void progress_phase(Progress* p, std::string label, std::uint64_t total) {
  if (p) p->phase(std::move(label), total);
}
inline void progress_advance(Progress* p, std::uint64_t n) noexcept {
  if (p) p->advance(n);
}
inline void progress_job(Progress* p, std::uint64_t total) {
  if (p) p->job(total);
}
inline void progress_job_advance(Progress* p, std::uint64_t n) noexcept {
  if (p) p->job_advance(n);
}

}  // namespace retra
