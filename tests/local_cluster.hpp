// kernels::Cluster with threads as ranks, for the tests: every rank runs in its own thread of
// this process and the collectives meet at a barrier. Thread safety: one LocalCluster per rank
// thread; the shared Hub is only touched between barriers.
#pragma once

#include <algorithm>
#include <barrier>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "kernels/kernel_options.hpp"

namespace retra::test {

class LocalCluster final : public kernels::Cluster {
 public:
  // What the ranks of one job share: each rank's contribution to the collective in progress.
  struct Hub {
    explicit Hub(int n)
        : ranks(n),
          meet(n),
          numbers(static_cast<std::size_t>(n)),
          batches(static_cast<std::size_t>(n)),
          arrays(static_cast<std::size_t>(n)) {}
    int ranks;
    std::barrier<> meet;
    std::vector<std::vector<std::uint64_t>> numbers;
    std::vector<std::vector<std::span<const std::uint8_t>>> batches;
    std::vector<std::uint8_t*> arrays;
  };

  LocalCluster(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_.ranks; }
  void sum(std::span<std::uint64_t> v) override {
    reduce(v, [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
  void max(std::span<std::uint64_t> v) override {
    reduce(v, [](std::uint64_t a, std::uint64_t b) { return std::max(a, b); });
  }
  void exchange(std::span<const std::span<const std::uint8_t>> out, std::vector<std::uint8_t>& in,
                const std::function<void()>& meanwhile) override {
    hub_.batches[me()].assign(out.begin(), out.end());
    hub_.meet.arrive_and_wait();
    meanwhile();
    in.clear();
    for (std::size_t r = 0; r < hub_.batches.size(); ++r)
      if (r != me())
        in.insert(in.end(), hub_.batches[r][me()].begin(), hub_.batches[r][me()].end());
    hub_.meet.arrive_and_wait();  // the senders' buffers are read
  }
  void share(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) override {
    copy_parts(bytes, bounds, true);
  }
  void gather(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) override {
    copy_parts(bytes, bounds, rank_ == 0);
  }

 private:
  void copy_parts(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds,
                  bool receive) {
    hub_.arrays[me()] = bytes.data();
    hub_.meet.arrive_and_wait();
    for (std::size_t r = 0; r < hub_.arrays.size() && receive; ++r)
      if (r != me() && bounds[r + 1] > bounds[r])
        std::memcpy(bytes.data() + bounds[r], hub_.arrays[r] + bounds[r],
                    bounds[r + 1] - bounds[r]);
    hub_.meet.arrive_and_wait();
  }
  std::size_t me() const { return static_cast<std::size_t>(rank_); }
  template <class Op>
  void reduce(std::span<std::uint64_t> v, Op op) {
    hub_.numbers[me()].assign(v.begin(), v.end());
    hub_.meet.arrive_and_wait();
    for (std::size_t r = 0; r < hub_.numbers.size(); ++r)
      if (r != me())
        for (std::size_t k = 0; k < v.size(); ++k) v[k] = op(v[k], hub_.numbers[r][k]);
    hub_.meet.arrive_and_wait();
  }
  Hub& hub_;
  int rank_;
};

// Runs fn(cluster) on `ranks` threads, one rank each, and waits for all of them.
inline void run_ranks(int ranks, const std::function<void(kernels::Cluster&)>& fn) {
  LocalCluster::Hub hub(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&hub, &fn, r] {
      LocalCluster c(hub, r);
      fn(c);
    });
  for (auto& t : threads) t.join();
}

}  // namespace retra::test
