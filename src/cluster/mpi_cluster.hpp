// The MPI transport of a cluster build (kernels::Cluster over Open MPI): one rank per process
// started by mpirun. Thread safety: the collectives are called by one thread per rank, the one
// that started MPI (MPI_THREAD_FUNNELED), never inside a parallel region.
#pragma once

#include <memory>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"

namespace retra::cluster {

class MpiCluster final : public kernels::Cluster {
 public:
  // Starts MPI when this process was started by mpirun (its environment says so) and returns
  // its rank's view of the job; null when it runs alone, so the same binary works without
  // mpirun. Ends MPI when destroyed. An error: started by mpirun as one of several processes,
  // but built without MPI (each would build alone).
  static Result<std::unique_ptr<MpiCluster>> from_environment(int* argc, char*** argv);
  // Whether this binary was built with MPI at all (the set-up installs Open MPI).
  static bool available();
  ~MpiCluster() override;
  MpiCluster(const MpiCluster&) = delete;
  MpiCluster& operator=(const MpiCluster&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::span<std::uint64_t> v) override;
  void max(std::span<std::uint64_t> v) override;
  void exchange(std::span<const std::span<const std::uint8_t>> out, std::vector<std::uint8_t>& in,
                const std::function<void()>& meanwhile) override;
  void share(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) override;
  void gather(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) override;
  // Ends every rank of the job with exit code `code` (a rank that cannot go on while the
  // others may be waiting for it in a collective).
  [[noreturn]] void abort(int code);

 private:
  MpiCluster(int rank, int size) : rank_(rank), size_(size) {}
  int rank_, size_;
};

}  // namespace retra::cluster
