// Files of out-of-core backward kernel runs (src/build/out_of_core.hpp).
// Thread safety: see the header.
#include "src/build/out_of_core.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "src/io/file.hpp"

namespace retra::builder {

namespace {

Error sys_error(const char* what, const std::filesystem::path& p, int err) {
  return Error(Errc::io, fmt::format("{} '{}': {}", what, p.string(), io::system_error_text(err)));
}

constexpr std::uint64_t kPage = 4096;

// All of [data, data + n) at `at` in the file (pwrite until done; a short write is retried).
Status write_at(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t at,
                const std::filesystem::path& p) {
  for (std::size_t done = 0; done < n;) {
    const ssize_t w = ::pwrite(fd, data + done, n - done, static_cast<off_t>(at + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return sys_error("cannot write", p, w < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(w);
  }
  return {};
}

// n bytes from `at` in the file into data; the file's end before them is an error.
Status read_at(int fd, std::uint8_t* data, std::size_t n, std::uint64_t at,
               const std::filesystem::path& p) {
  for (std::size_t got = 0; got < n;) {
    const ssize_t r = ::pread(fd, data + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return sys_error("cannot read", p, r < 0 ? errno : EIO);
    got += static_cast<std::size_t>(r);
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<FileOutOfCore>> FileOutOfCore::create(std::filesystem::path dir,
                                                             std::uint64_t resident,
                                                             std::uint64_t batch,
                                                             std::uint64_t spill) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // a killed build's: nothing in it is reusable
  if (!std::filesystem::create_directories(dir, ec) || ec)
    return Error(Errc::io, fmt::format("cannot create the out-of-core directory '{}': {}",
                                       dir.string(), ec ? ec.message() : "it exists"));
  return std::unique_ptr<FileOutOfCore>(new FileOutOfCore(std::move(dir), resident, batch, spill));
}

FileOutOfCore::~FileOutOfCore() {
  for (const Mapping& m : maps_) {
    ::munmap(m.data, m.bytes);
    ::close(m.fd);
  }
  for (auto& s : spills_)
    if (s && s->fd >= 0) ::close(s->fd);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Result<std::span<std::uint8_t>> FileOutOfCore::array(const std::string& name, std::uint64_t bytes,
                                                     bool grows) {
  if (bytes == 0) return std::span<std::uint8_t>{};
  const auto path = dir_ / name;
  // An array of the same name from an earlier run on this store (a rerun with another metric)
  // loses its blocks to O_TRUNC: they no longer count.
  for (Mapping& m : maps_)
    if (m.path == path) {
      std::lock_guard lock(disk_mu_);
      count_disk(-static_cast<std::int64_t>(std::exchange(m.reserved, 0)));
    }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error("cannot create", path, errno);
  // Sized sparse, then the blocks reserved (all of them, or as reserve() asks): a page of a
  // shared mapping that the file system cannot back is a SIGBUS, a failed reservation an error.
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    return sys_error("cannot size", path, err);
  }
  if (!grows)
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
      ::close(fd);
      return sys_error("cannot reserve disk space for", path, err);
    }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return sys_error("cannot map", path, err);
  }
  maps_.push_back({p, bytes, fd, path, grows ? 0 : bytes});
  if (!grows) count_disk(static_cast<std::int64_t>(bytes));
  return std::span<std::uint8_t>(static_cast<std::uint8_t*>(p), bytes);
}

FileOutOfCore::Mapping* FileOutOfCore::array_at(const void* p) {
  for (Mapping& m : maps_)
    if (m.data == p) return &m;
  return nullptr;
}

void FileOutOfCore::count_disk(std::int64_t bytes) {
  const std::int64_t now = disk_.fetch_add(bytes) + bytes;
  if (now <= 0) return;
  std::uint64_t peak = disk_peak_.load();
  while (static_cast<std::uint64_t>(now) > peak &&
         !disk_peak_.compare_exchange_weak(peak, static_cast<std::uint64_t>(now))) {
  }
}

Status FileOutOfCore::reserve(const void* array, std::uint64_t bytes) {
  Mapping* m = array_at(array);
  if (!m) return Error(Errc::internal, "reserve: not an array of this out-of-core store");
  const std::uint64_t n = std::min(bytes, m->bytes);
  if (const int err = ::posix_fallocate(m->fd, 0, static_cast<off_t>(n)); err != 0)
    return sys_error("cannot reserve disk space for", m->path, err);
  std::lock_guard lock(disk_mu_);
  if (n > m->reserved) {
    count_disk(static_cast<std::int64_t>(n - m->reserved));
    m->reserved = n;
  }
  return {};
}

// Emptied, then sized again: every block goes back, on any file system (a hole punched with
// fallocate is not supported everywhere). Nothing maps the array's pages meanwhile: a frontier
// is written and read through pwrite and pread.
Status FileOutOfCore::discard(const void* array) {
  Mapping* m = array_at(array);
  if (!m) return Error(Errc::internal, "discard: not an array of this out-of-core store");
  if (::ftruncate(m->fd, 0) != 0 || ::ftruncate(m->fd, static_cast<off_t>(m->bytes)) != 0)
    return sys_error("cannot empty", m->path, errno);
  std::lock_guard lock(disk_mu_);
  count_disk(-static_cast<std::int64_t>(m->reserved));
  m->reserved = 0;
  return {};
}

const FileOutOfCore::Mapping* FileOutOfCore::holding(const void* p, std::uint64_t bytes) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const Mapping& m : maps_) {
    const auto base = reinterpret_cast<std::uintptr_t>(m.data);
    if (a >= base && a + bytes <= base + m.bytes) return &m;
  }
  return nullptr;
}

void FileOutOfCore::advise(const void* p, std::uint64_t bytes, int advice) const {
  if (bytes == 0) return;
  // Whole pages around the range, within the mapping that holds it. Memory that is not ours
  // (the caller's values in memory) is left alone: there MADV_DONTNEED would zero private
  // pages.
  const Mapping* m = holding(p, bytes);
  if (!m) return;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto base = reinterpret_cast<std::uintptr_t>(m->data);
  const std::uintptr_t begin = a / kPage * kPage;
  const std::uintptr_t end = std::min(base + m->bytes, (a + bytes + kPage - 1) / kPage * kPage);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

// The page cache is the mapping's, so readers through the mapping see what pwrite wrote.
Status FileOutOfCore::write(void* p, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return {};
  const Mapping* m = holding(p, bytes.size());
  if (!m) return Error(Errc::internal, "write: not within an array of this out-of-core store");
  const auto at = static_cast<std::uint64_t>(static_cast<const std::uint8_t*>(p) -
                                             static_cast<const std::uint8_t*>(m->data));
  return write_at(m->fd, bytes.data(), bytes.size(), at, m->path);
}

Status FileOutOfCore::read(const void* p, std::span<std::uint8_t> out) {
  if (out.empty()) return {};
  const Mapping* m = holding(p, out.size());
  if (!m) return Error(Errc::internal, "read: not within an array of this out-of-core store");
  const auto at = static_cast<std::uint64_t>(static_cast<const std::uint8_t*>(p) -
                                             static_cast<const std::uint8_t*>(m->data));
  return read_at(m->fd, out.data(), out.size(), at, m->path);
}

// A shared mapping loses nothing by it: the pages' contents are the file's, and a thread still
// using one faults it back in.
void FileOutOfCore::release(const void* p, std::uint64_t bytes) { advise(p, bytes, MADV_DONTNEED); }

void FileOutOfCore::release_all() {
  for (const Mapping& m : maps_) ::madvise(m.data, m.bytes, MADV_DONTNEED);
}

FileOutOfCore::Spill& FileOutOfCore::spill(std::size_t partition) {
  std::lock_guard lock(spills_mu_);
  if (spills_.size() <= partition) spills_.resize(partition + 1);
  if (!spills_[partition]) spills_[partition] = std::make_unique<Spill>();
  return *spills_[partition];
}

Status FileOutOfCore::append(std::size_t partition, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return {};
  Spill& s = spill(partition);
  std::lock_guard lock(s.mu);
  const auto path = dir_ / fmt::format("spill-{}", partition);
  if (s.fd < 0) {
    s.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s.fd < 0) return sys_error("cannot create", path, errno);
  }
  RETRA_TRY(write_at(s.fd, bytes.data(), bytes.size(), s.size, path));
  s.size += bytes.size();
  spilled_ += bytes.size();
  count_disk(static_cast<std::int64_t>(bytes.size()));
  return {};
}

Status FileOutOfCore::drain(std::size_t partition, std::size_t record, std::span<std::uint8_t> buf,
                            const std::function<void(std::span<const std::uint8_t>)>& fn) {
  Spill& s = spill(partition);
  std::lock_guard lock(s.mu);
  if (s.fd < 0 || s.size == 0) return {};
  const auto path = dir_ / fmt::format("spill-{}", partition);
  const std::size_t piece = buf.size() / record * record;
  if (piece == 0)
    return Error(Errc::internal, fmt::format("drain: a buffer of {} bytes holds no record of {}",
                                             buf.size(), record));
  for (std::uint64_t at = 0; at < s.size;) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(piece, s.size - at));
    RETRA_TRY(read_at(s.fd, buf.data(), want, at, path));
    fn(std::span<const std::uint8_t>(buf.data(), want));
    at += want;
  }
  // Emptied, so that the next level appends from the start and the disk holds one level's
  // spills at most.
  if (::ftruncate(s.fd, 0) != 0) return sys_error("cannot empty", path, errno);
  count_disk(-static_cast<std::int64_t>(s.size));
  s.size = 0;
  return {};
}

void FileOutOfCore::copy_out(const std::uint8_t* from, std::uint64_t bytes, std::uint8_t* to) {
  constexpr std::uint64_t kSlice = 16u << 20;
  for (std::uint64_t at = 0; at < bytes; at += kSlice) {
    const std::uint64_t n = std::min(kSlice, bytes - at);
    std::memcpy(to + at, from + at, n);
    release(from + at, n);
  }
}

Trimmer::Trimmer(FileOutOfCore& store, std::chrono::milliseconds every)
    : thread_([this, &store, every] {
        std::unique_lock lock(mu_);
        while (!cv_.wait_for(lock, every, [this] { return stop_; })) store.release_all();
      }) {}

Trimmer::~Trimmer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace retra::builder
