// A backward kernel run's checkpoints in a file next to the segment it builds (docs/FORMAT.md,
// "Checkpoint files"): written atomically, so that a kill during a save leaves the previous
// checkpoint, and sealed by a checksum over every byte. Thread safety: one kernel run uses one
// object; distinct objects may work on distinct files at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/kernel_options.hpp"
#include "retra/error.hpp"
#include "src/io/file.hpp"

namespace retra::builder {

class FileCheckpoints final : public kernels::Checkpoints {
 public:
  // key names what the state belongs to (game, segment, value kind, tool version): a file with
  // another key is not used. interval_seconds: the least time between two saves (0: never save,
  // but still resume from a file found). note: one-line messages for the user (may be empty).
  // committed: called (on the committing thread) when a save is on disk, with its point.
  FileCheckpoints(std::filesystem::path path, std::string key, double interval_seconds,
                  std::function<void(const std::string&)> note,
                  std::function<void(const kernels::CheckpointPoint&)> committed = {});
  ~FileCheckpoints() override;  // waits for the last save's commit
  FileCheckpoints(const FileCheckpoints&) = delete;
  FileCheckpoints& operator=(const FileCheckpoints&) = delete;

  // Due when the interval has passed, and at least 10 times the last save's duration, so that
  // saving never takes more than about 10% of a run.
  bool due() override;
  // A save that fails (a full disk) is reported through note and the run goes on without
  // checkpoints: losing the ability to resume must not lose the build itself. The kernel waits
  // only while the bytes are copied into the file; the commit (fsync, which dominates: 9 s of a
  // 3.4 GB save here, then the rename) runs on a thread of its own, as the arrays may change
  // once copied. The next save, flush() or the destructor waits for it.
  Status save(std::span<const std::uint8_t> meta,
              std::span<const std::span<const std::uint8_t>> arrays,
              const kernels::CheckpointPoint& point) override;
  std::optional<std::vector<std::uint8_t>> load_meta() override;
  Status load_arrays(std::span<const std::span<std::uint8_t>> arrays) override;

  // Waits until the last save is committed (or has failed, which is noted).
  void flush();
  const std::filesystem::path& path() const noexcept { return path_; }
  int saves() const noexcept { return saves_; }  // committed ones, as of the last flush

 private:
  using Clock = std::chrono::steady_clock;
  void give_up(const Error& e);  // a save failed: say so, and save no more
  std::filesystem::path path_;
  std::string key_;
  double interval_;
  std::function<void(const std::string&)> note_;
  std::function<void(const kernels::CheckpointPoint&)> committed_callback_;
  Clock::time_point last_ = Clock::now();
  double last_save_seconds_ = 0;
  bool disabled_ = false;
  int saves_ = 0;
  std::thread committing_;
  std::atomic<bool> committed_{true};
  std::optional<Error> commit_error_;  // written by committing_, read after joining it
  // Between load_meta() and load_arrays(): the mapped file and where its arrays lie.
  io::MappedFile map_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> arrays_;  // offset, bytes
};

}  // namespace retra::builder
