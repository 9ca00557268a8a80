// The backward kernel's arrays and update batches out of core (kernels::OutOfCore): one
// directory per segment build next to the segment, "<segment file>.ooc/", holding each array as a
// sparse file mapped shared (its pages come and go; their contents stay in the file) and one spill
// file of updates per partition. Removed when the object goes; create() empties one a killed
// build left (and the build driver removes those of segments finished since). Thread safety: as
// kernels::OutOfCore says; array() from one thread; release_all() from any, while array() is not
// called.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"

namespace retra::builder {

class FileOutOfCore final : public kernels::OutOfCore {
 public:
  // dir: created (and emptied) here. resident: bytes of arrays the kernel may keep resident;
  // batch: bytes of update batches held in memory before they are spilled; spill: the most bytes
  // the spill files may hold at once (0: no limit; OutOfCore::spill_budget).
  static Result<std::unique_ptr<FileOutOfCore>> create(std::filesystem::path dir,
                                                       std::uint64_t resident, std::uint64_t batch,
                                                       std::uint64_t spill = 0);
  ~FileOutOfCore() override;  // unmaps everything and removes the directory
  FileOutOfCore(const FileOutOfCore&) = delete;
  FileOutOfCore& operator=(const FileOutOfCore&) = delete;

  Result<std::span<std::uint8_t>> array(const std::string& name, std::uint64_t bytes,
                                        bool grows) override;
  Status reserve(const void* array, std::uint64_t bytes) override;
  Status discard(const void* array) override;  // the file emptied and sized again, sparse
  void release(const void* p, std::uint64_t bytes) override;
  Status write(void* p, std::span<const std::uint8_t> bytes) override;  // pwrite
  Status read(const void* p, std::span<std::uint8_t> out) override;     // pread
  bool holds(const void* p, std::uint64_t bytes) const override {
    return holding(p, bytes) != nullptr;
  }
  std::uint64_t resident_bytes() const override { return resident_; }
  std::uint64_t batch_bytes() const override { return batch_; }
  Status append(std::size_t partition, std::span<const std::uint8_t> bytes) override;
  Status drain(std::size_t partition, std::size_t record, std::span<std::uint8_t> buffer,
               const std::function<void(std::span<const std::uint8_t>)>& fn) override;
  std::uint64_t spilled_bytes() const override { return spilled_.load(); }
  std::uint64_t spill_budget() const override { return spill_budget_; }
  // Arrays' reserved bytes and spill files' bytes together, at their most.
  std::uint64_t disk_peak_bytes() const override { return disk_peak_.load(); }

  // Releases every mapped array from memory (the kernel is done; readers fault back what they
  // read).
  void release_all();
  // Copies `bytes` of a mapped array from `from` to `to` (memory of the caller's), in order,
  // releasing what it has read behind it: the file's pages pass through this process a slice at
  // a time.
  void copy_out(const std::uint8_t* from, std::uint64_t bytes, std::uint8_t* to);
  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  FileOutOfCore(std::filesystem::path dir, std::uint64_t resident, std::uint64_t batch,
                std::uint64_t spill)
      : dir_(std::move(dir)), resident_(resident), batch_(batch), spill_budget_(spill) {}
  struct Mapping {
    void* data;
    std::uint64_t bytes;
    int fd;
    std::filesystem::path path;
    std::uint64_t reserved;  // bytes with blocks behind them (under disk_mu_)
  };
  struct Spill {
    std::mutex mu;
    int fd = -1;
    std::uint64_t size = 0;
  };
  Spill& spill(std::size_t partition);
  // madvise(advice) on the whole pages around [p, p + bytes) in the mapping that holds them;
  // nothing where no mapping of this store holds them all.
  void advise(const void* p, std::uint64_t bytes, int advice) const;
  // The mapping that holds all of [p, p + bytes); null where none does.
  const Mapping* holding(const void* p, std::uint64_t bytes) const;
  // The array array() returned at p; null if none.
  Mapping* array_at(const void* p);
  // Counts storage taken (positive) or given back (negative) toward disk_peak_bytes().
  void count_disk(std::int64_t bytes);
  std::filesystem::path dir_;
  std::uint64_t resident_, batch_, spill_budget_;
  std::vector<Mapping> maps_;
  std::mutex spills_mu_;
  std::vector<std::unique_ptr<Spill>> spills_;  // by partition, created on first use
  std::atomic<std::uint64_t> spilled_{0};
  std::mutex disk_mu_;  // the mappings' `reserved`
  std::atomic<std::int64_t> disk_{0};
  std::atomic<std::uint64_t> disk_peak_{0};
};

// Releases every array of a store every 2 ms until it is destroyed: for readers of
// the values after the kernel (statistics, the segment writer), which know nothing of the store.
// What they read comes back from the file; what they hold resident stays a few milliseconds of
// reading.
class Trimmer {
 public:
  explicit Trimmer(FileOutOfCore& store,
                   std::chrono::milliseconds every = std::chrono::milliseconds(2));
  ~Trimmer();
  Trimmer(const Trimmer&) = delete;
  Trimmer& operator=(const Trimmer&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace retra::builder
