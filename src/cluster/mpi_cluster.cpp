// Open MPI behind kernels::Cluster: allreduce for the counts, point-to-point non-blocking
// messages for the update batches, broadcasts for the values. Thread safety: see the header.
#include "src/cluster/mpi_cluster.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

#ifdef RETRA_MPI
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace retra::cluster {
namespace {
// mpirun (Open MPI) sets this in every process it starts; PMI_SIZE: other launchers.
const char* launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return v;
  return nullptr;
}
}  // namespace

#ifdef RETRA_MPI
namespace {

// MPI counts are ints: large arrays travel in messages of at most 1 GiB.
constexpr std::uint64_t kMessageBytes = std::uint64_t{1} << 30;

void reduce(std::span<std::uint64_t> v, MPI_Op op) {
  // A span of uint64 in one call: the spans here are short (a level's counts, a histogram).
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, op,
                MPI_COMM_WORLD);
}

}  // namespace

bool MpiCluster::available() { return true; }

Result<std::unique_ptr<MpiCluster>> MpiCluster::from_environment(int* argc, char*** argv) {
  if (!launcher_size()) return std::unique_ptr<MpiCluster>();
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiCluster>(new MpiCluster(rank, size));
}

MpiCluster::~MpiCluster() { MPI_Finalize(); }

void MpiCluster::sum(std::span<std::uint64_t> v) { reduce(v, MPI_SUM); }
void MpiCluster::max(std::span<std::uint64_t> v) { reduce(v, MPI_MAX); }

void MpiCluster::exchange(std::span<const std::span<const std::uint8_t>> out,
                          std::vector<std::uint8_t>& in, const std::function<void()>& meanwhile) {
  const auto n = static_cast<std::size_t>(size_);
  const auto me = static_cast<std::size_t>(rank_);
  // Sizes first, so that every receive is posted with its buffer; then all the batches move at
  // once while this rank applies its own updates.
  std::vector<std::uint64_t> sending(n, 0), receiving(n, 0);
  for (std::size_t r = 0; r < n; ++r)
    if (r != me) sending[r] = out[r].size();
  MPI_Alltoall(sending.data(), 1, MPI_UINT64_T, receiving.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  std::vector<std::uint64_t> at(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) at[r + 1] = at[r] + receiving[r];
  in.resize(at[n]);
  std::vector<MPI_Request> requests;
  for (std::size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    for (std::uint64_t off = 0, piece = 0; off < receiving[r]; off += kMessageBytes, ++piece) {
      requests.emplace_back();
      MPI_Irecv(in.data() + at[r] + off,
                static_cast<int>(std::min(kMessageBytes, receiving[r] - off)), MPI_BYTE,
                static_cast<int>(r), static_cast<int>(piece), MPI_COMM_WORLD, &requests.back());
    }
    for (std::uint64_t off = 0, piece = 0; off < sending[r]; off += kMessageBytes, ++piece) {
      requests.emplace_back();
      MPI_Isend(out[r].data() + off, static_cast<int>(std::min(kMessageBytes, sending[r] - off)),
                MPI_BYTE, static_cast<int>(r), static_cast<int>(piece), MPI_COMM_WORLD,
                &requests.back());
    }
  }
  meanwhile();
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

void MpiCluster::share(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) {
  for (int r = 0; r < size_; ++r) {
    const std::uint64_t b = bounds[static_cast<std::size_t>(r)];
    const std::uint64_t e = bounds[static_cast<std::size_t>(r) + 1];
    for (std::uint64_t off = b; off < e; off += kMessageBytes)
      MPI_Bcast(bytes.data() + off, static_cast<int>(std::min(kMessageBytes, e - off)), MPI_BYTE, r,
                MPI_COMM_WORLD);
  }
}

void MpiCluster::gather(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) {
  for (int r = 1; r < size_; ++r) {
    if (rank_ != 0 && rank_ != r) continue;
    const std::uint64_t b = bounds[static_cast<std::size_t>(r)];
    const std::uint64_t e = bounds[static_cast<std::size_t>(r) + 1];
    for (std::uint64_t off = b, piece = 0; off < e; off += kMessageBytes, ++piece) {
      const int n = static_cast<int>(std::min(kMessageBytes, e - off));
      if (rank_ == 0)
        MPI_Recv(bytes.data() + off, n, MPI_BYTE, r, static_cast<int>(piece), MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      else
        MPI_Send(bytes.data() + off, n, MPI_BYTE, 0, static_cast<int>(piece), MPI_COMM_WORLD);
    }
  }
}

void MpiCluster::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // MPI_Abort does not return; the compiler cannot know
}

#else  // built without MPI: always one process

bool MpiCluster::available() { return false; }
Result<std::unique_ptr<MpiCluster>> MpiCluster::from_environment(int*, char***) {
  if (const char* n = launcher_size(); n && std::atoi(n) > 1)
    return Error(Errc::invalid_argument,
                 "started by mpirun, but this retra was built without MPI (RETRA_MPI=OFF); "
                 "build it with Open MPI installed (scripts/setup.sh) or run it alone");
  return std::unique_ptr<MpiCluster>();
}
MpiCluster::~MpiCluster() = default;
void MpiCluster::sum(std::span<std::uint64_t>) {}
void MpiCluster::max(std::span<std::uint64_t>) {}
void MpiCluster::exchange(std::span<const std::span<const std::uint8_t>>,
                          std::vector<std::uint8_t>& in, const std::function<void()>& meanwhile) {
  in.clear();
  meanwhile();
}
void MpiCluster::share(std::span<std::uint8_t>, std::span<const std::uint64_t>) {}
void MpiCluster::gather(std::span<std::uint8_t>, std::span<const std::uint64_t>) {}
void MpiCluster::abort(int code) { std::exit(code); }

#endif

}  // namespace retra::cluster
