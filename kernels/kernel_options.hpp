// Options shared by the retrograde kernels. Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "src/progress.hpp"
#include "src/tuning.hpp"

namespace retra::kernels {

// Where a saved state stands, for people: the level's progress label and the positions decided.
struct CheckpointPoint {
  std::string at;
  std::uint64_t decided = 0;
};

// Where the backward kernel keeps its state at level boundaries, so that a run that is killed
// resumes at the last saved boundary instead of at the start (src/build/checkpoint.hpp keeps it
// in a file; the tests keep it in memory). The kernel asks due() at every level boundary and
// saves when told to; at its start it asks for a saved state. The kernel's scalars (`meta`) are
// opaque here; the arrays are its values, its counters and its frontier.
class Checkpoints {
 public:
  virtual ~Checkpoints() = default;
  virtual bool due() = 0;
  // An error stops the kernel (a store that can live without a checkpoint returns success).
  virtual Status save(std::span<const std::uint8_t> meta,
                      std::span<const std::span<const std::uint8_t>> arrays,
                      const CheckpointPoint& point) = 0;
  // The saved scalars, or nothing when no usable state was saved.
  virtual std::optional<std::vector<std::uint8_t>> load_meta() = 0;
  // Fills the arrays (sizes as saved; the kernel sized them from its scalars).
  virtual Status load_arrays(std::span<const std::span<std::uint8_t>> arrays) = 0;
  // Out of core: called with each piece of an array once it is saved or loaded, so that the
  // kernel can release its pages (empty: nothing to do).
  std::function<void(const void*, std::uint64_t)> done_with;
};

// Where an out-of-core run of the backward kernel keeps its arrays and its update batches
// (src/build/out_of_core.hpp keeps them in files in the database directory). The arrays are
// mapped into memory and the kernel says which parts it is done with for now (release), so that
// what stays resident is what it works on: one partition per thread, the most recently used
// partitions up to resident_bytes(). Its frontiers, and the partitions a level applies (in a
// copy per thread), go through write() and read(). Updates to a
// partition are appended to that partition's spill file and read back (drained) when the
// partition is applied. Thread safety: array() is called by one thread before the others;
// reserve(), release(), write(), read(), append() and drain() from many at once
// (drain() of one partition by one thread at a time; write() and read() of disjoint bytes).
class OutOfCore {
 public:
  virtual ~OutOfCore() = default;
  // A zeroed array of `bytes` in storage, mapped for reading and writing; `name` tells the
  // arrays of a run apart ("cells", "frontier-a", "frontier-b"). Storage for all of it is
  // reserved unless `grows`: then only what reserve() asked for may be written (a frontier,
  // sized for every position, rarely holds a tenth of them).
  virtual Result<std::span<std::uint8_t>> array(const std::string& name, std::uint64_t bytes,
                                                bool grows) = 0;
  // Reserves storage for the first `bytes` of an array array() returned.
  virtual Status reserve(const void* array, std::uint64_t bytes) = 0;
  // Gives back what reserve() took for an array that grows: its contents are gone, and it is
  // reserved afresh as it grows again. A frontier's storage is given back once it is consumed,
  // so that the two frontiers together never take more than the positions they hold (each
  // position enters one frontier in a run): the bound that the plan's disk figure counts on.
  virtual Status discard(const void* array) = 0;
  // Drops the pages of [p, p + bytes) from the process's memory; their contents stay in storage
  // and come back on the next access.
  virtual void release(const void* p, std::uint64_t bytes) = 0;
  // Copies bytes into (write) or out of (read) an array array() returned, at p, through
  // storage: the pages need not be mapped, nor released after. The frontiers and the applied
  // partitions go this way: a page of a shared file mapping that a write faults in cost
  // 12-26 us in a virtual machine where measured (docs/PERFORMANCE.md, out of core).
  virtual Status write(void* p, std::span<const std::uint8_t> bytes) = 0;
  virtual Status read(const void* p, std::span<std::uint8_t> out) = 0;
  // Whether [p, p + bytes) lies within an array array() returned (a run's values may instead
  // be the caller's memory).
  virtual bool holds(const void* p, std::uint64_t bytes) const = 0;
  // Bytes of the kernel's arrays it may keep resident, and of update batches held before a spill.
  virtual std::uint64_t resident_bytes() const = 0;
  virtual std::uint64_t batch_bytes() const = 0;
  virtual Status append(std::size_t partition, std::span<const std::uint8_t> bytes) = 0;
  // Calls fn with the partition's spilled bytes in order, read into the caller's `buffer` in
  // pieces of whole records of `record` bytes (the buffer holds one at least; fn's span is its
  // beginning), then empties its spill file. The caller's buffer lives from level to level: a
  // buffer allocated per call was zeroed and faulted in each time, most of the quarter of an
  // out-of-core build's page faults that were anonymous memory where counted
  // (docs/PERFORMANCE.md, out of core).
  virtual Status drain(std::size_t partition, std::size_t record, std::span<std::uint8_t> buffer,
                       const std::function<void(std::span<const std::uint8_t>)>& fn) = 0;
  virtual std::uint64_t spilled_bytes() const = 0;  // appended so far, for the statistics
  // The most bytes the spill files may hold at once (0: no limit). A level whose updates would
  // spill more is applied in rounds, each of a part of its frontier: the same values (the order
  // of a level's updates does not matter), more passes over the partitions.
  virtual std::uint64_t spill_budget() const = 0;
  // The most storage the arrays, reservations and spill files held at once, for the statistics.
  virtual std::uint64_t disk_peak_bytes() const = 0;
};

// The processes one build runs over (src/cluster/: MPI ranks, or threads in the tests). Each
// rank owns a contiguous range of whole chunks of a segment: its counters, its part of the
// frontier, the updates addressed to it. Every rank calls the collectives below in the same
// order, from the one thread that runs its kernel (never inside a parallel region); a transport
// failure ends the whole job (MPI's default), so they return nothing.
class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise sum / maximum over the ranks, in place: every rank gets the result.
  virtual void sum(std::span<std::uint64_t> v) = 0;
  virtual void max(std::span<std::uint64_t> v) = 0;
  // One round of update batches: out[r] goes to rank r (out[rank()] is not sent). meanwhile()
  // runs while the batches travel; then `in` holds what every other rank sent here, in rank
  // order.
  virtual void exchange(std::span<const std::span<const std::uint8_t>> out,
                        std::vector<std::uint8_t>& in, const std::function<void()>& meanwhile) = 0;
  // bytes[bounds[r], bounds[r + 1]) is rank r's: afterwards every rank has every part.
  virtual void share(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) = 0;
  // The same parts, to rank 0 only (the others keep their own).
  virtual void gather(std::span<std::uint8_t> bytes, std::span<const std::uint64_t> bounds) = 0;
  // Helpers over sum(): one number, and whether every rank says yes.
  std::uint64_t total(std::uint64_t x) {
    sum(std::span(&x, 1));
    return x;
  }
  bool all(bool ok) { return total(ok ? 0 : 1) == 0; }
};

// The status every rank agrees on: this rank's error, or when it succeeded and another rank
// failed, an error of the failing rank's code with Cause::peer_failed. Without a cluster: st.
inline Status agree(Cluster* cluster, Status st) {
  if (!cluster) return st;
  std::uint64_t code = st ? 0 : static_cast<std::uint64_t>(st.error().code()) + 1;
  cluster->max(std::span(&code, 1));
  if (code == 0 || !st) return st;
  return Error(static_cast<Errc>(code - 1), Cause::peer_failed,
               "another rank of the build failed (its message says why)");
}

struct KernelOptions {
  int threads = 1;
  std::uint64_t chunk = 1u << 16;  // positions per parallel task; equal to the block size
  Progress* progress = nullptr;
  std::string label;  // prefix of the progress phases, e.g. "16 stones"
  Tuning tuning;
  // Distance-to-mate games only: compute distance to conversion instead (Fang 3.3): a converting
  // move to a lost position is a win now (1), one to a won position a loss (2).
  bool dtc = false;
  // Forward kernel only: bytes its explicit graph of quiet moves may take beyond the planned
  // arrays (0: sweep the whole segment every time instead).
  std::uint64_t graph_bytes = 0;
  // Backward kernel only: owner-computes partitions of the index range (0 or 1: none). The
  // values do not depend on it (kernels/backward.hpp, expand_partitioned).
  std::uint64_t partitions = 0;
  // Backward kernel only: the entries a thread keeps before they go to a frontier that many
  // threads append to at once (Frontier::concurrent), and a sixteenth of the least slice a level
  // in memory is read in (expand). The tests make it tiny so that pieces go from every thread
  // all the time and small levels go in slices.
  std::uint64_t frontier_piece = std::uint64_t{1} << 16;
  // Backward kernel in memory: the entries each frontier has address space for at first, grown
  // as a level needs (0: every position, or under ulimit -v or -d the plan's share). The tests
  // make it tiny so that threads grow it while others copy into it.
  std::uint64_t frontier_room = 0;
  // Backward kernel only: saves and restores its state at level boundaries (null: never).
  Checkpoints* checkpoints = nullptr;
  // Backward kernel only: keep the counters and frontiers in storage, partitioned, with update
  // batches spilled per partition (null: everything in memory). The values array the kernel is
  // given should live there too (the caller maps it from the same storage).
  OutOfCore* out_of_core = nullptr;
  // Backward kernel only: run over the ranks of a cluster, each owning a range of the segment
  // (null: this process alone). Not with out_of_core.
  Cluster* cluster = nullptr;
  // Over a cluster: every rank ends with all the values (true), or rank 0 alone (false: the
  // others hold their own range only).
  bool cluster_share = true;
  // Over a cluster: frontier entries per rank per round of update batches (bounds the batches
  // in memory; the tests make it tiny so that ranks need different numbers of rounds).
  std::uint64_t cluster_round = std::uint64_t{1} << 18;
  // Backward kernel only: one zeroed bit per position of the segment (bit i % 64 of word
  // i / 64), which the kernel sets where the game says the index is a hole (HasValidity) while it
  // counts moves, so that the writer's rule entries and the statistics need not step through
  // every position again. Marked only when this process initializes the whole segment
  // (BackwardStats::holes_marked: not after a resume from a checkpoint, not over a cluster).
  std::uint64_t* holes = nullptr;
};

}  // namespace retra::kernels
