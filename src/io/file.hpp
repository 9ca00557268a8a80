// Files that are written atomically (temp file, fsync, rename, directory fsync), read-only memory
// maps, and an exclusive directory lock. Thread safety: each object is used by one thread at a
// time; MappedFile's bytes may be read concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "retra/error.hpp"

namespace retra::io {

namespace fs = std::filesystem;

// A file that becomes visible under its final name only when commit() succeeds. Until then the
// data lives in "<name>.tmp-<pid>" next to the target, so a crash never leaves a half-written
// file under the final name and never destroys the previous version.
class AtomicFile {
 public:
  static Result<AtomicFile> create(const fs::path& target);
  AtomicFile(AtomicFile&& o) noexcept;
  AtomicFile& operator=(AtomicFile&& o) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file if commit() was not reached

  Status write(const void* data, std::size_t n);                         // append
  Status pwrite(const void* data, std::size_t n, std::uint64_t offset);  // overwrite in place
  std::uint64_t size() const noexcept { return size_; }
  Status commit();  // fsync file, rename over target, fsync directory

 private:
  AtomicFile() = default;
  int fd_ = -1;
  fs::path target_, temp_;
  std::uint64_t size_ = 0;
};

Status write_file_atomic(const fs::path& target, std::string_view content);
Result<std::string> read_file(const fs::path& path);

// Read-only shared mapping of a whole file.
class MappedFile {
 public:
  MappedFile() = default;  // empty
  static Result<MappedFile> open(const fs::path& path);
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  const fs::path& path() const noexcept { return path_; }
  // Drops the mapping's pages from this process's resident set; reading faults them back in from
  // the page cache. Safe at any time: the mapping is read-only and shared.
  void drop_resident_pages() const noexcept;
  void drop_resident_pages(std::uint64_t offset, std::uint64_t bytes) const noexcept;

 private:
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  fs::path path_;
};

// Exclusive advisory lock (flock) on "<dir>/.retra.lock" so two builds never write one database.
// The holder writes "<pid> <host>" into the file so that a refused writer's message names it,
// and, holding the lock, removes the temporary files of writers that died (kill -9, power loss).
class DirectoryLock {
 public:
  static Result<DirectoryLock> acquire(const fs::path& dir);
  DirectoryLock(DirectoryLock&& o) noexcept;
  DirectoryLock& operator=(DirectoryLock&&) = delete;
  DirectoryLock(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  DirectoryLock() = default;
  int fd_ = -1;
};

// Bytes free for an unprivileged writer on the file system of `path`, or of its nearest existing
// ancestor when it does not exist yet (UINT64_MAX when that cannot be found out).
std::uint64_t free_disk_bytes(const fs::path& path);

// "errno text" helper for messages.
std::string system_error_text(int err);

}  // namespace retra::io
