// POSIX implementation of atomic files, memory maps and directory locks.
// Thread safety: see include/retra/io/file.hpp.
#include "src/io/file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace retra::io {

std::string system_error_text(int err) { return std::strerror(err); }

namespace {
Error sys_error(std::string_view what, const fs::path& p, int err) {
  // A full disk, quota or file size limit: say what to do, as the build can simply be rerun.
  const bool space = err == ENOSPC || err == EDQUOT || err == EFBIG;
  return Error(err == ENOENT ? Errc::not_found : Errc::io,
               fmt::format("{} '{}': {}{}", what, p.string(), system_error_text(err),
                           space ? "; free space there (or raise the limit) and run the same "
                                   "command again: finished segments are kept"
                                 : ""));
}

Status fsync_directory(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return sys_error("cannot fsync directory", dir, err);
  return {};
}
}  // namespace

Result<AtomicFile> AtomicFile::create(const fs::path& target) {
  AtomicFile f;
  f.target_ = target;
  f.temp_ = target;
  f.temp_ += fmt::format(".tmp-{}", ::getpid());
  f.fd_ = ::open(f.temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f.fd_ < 0) return sys_error("cannot create", f.temp_, errno);
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      size_(o.size_) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
  if (this != &o) {
    // Abandon the current file only: the destructor would end the paths' lifetimes too.
    if (fd_ >= 0) {
      ::close(fd_);
      ::unlink(temp_.c_str());
    }
    fd_ = std::exchange(o.fd_, -1);
    target_ = std::move(o.target_);
    temp_ = std::move(o.temp_);
    size_ = o.size_;
  }
  return *this;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

Status AtomicFile::write(const void* data, std::size_t n) {
  RETRA_TRY(pwrite(data, n, size_));
  return {};
}

Status AtomicFile::pwrite(const void* data, std::size_t n, std::uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return sys_error("cannot write", temp_, errno);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
    if (offset > size_) size_ = offset;
  }
  return {};
}

Status AtomicFile::commit() {
  if (::fsync(fd_) != 0) return sys_error("cannot fsync", temp_, errno);
  if (::close(fd_) != 0) {
    fd_ = -1;
    ::unlink(temp_.c_str());
    return sys_error("cannot close", temp_, errno);
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    return sys_error("cannot rename into place", target_, err);
  }
  return fsync_directory(target_.parent_path());
}

Status write_file_atomic(const fs::path& target, std::string_view content) {
  auto f = AtomicFile::create(target);
  if (!f) return std::move(f).error();
  RETRA_TRY(f->write(content.data(), content.size()));
  return f->commit();
}

Result<std::string> read_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open", path, errno);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return sys_error("cannot read", path, err);
    }
    if (r == 0) break;
    out.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  return out;
}

Result<MappedFile> MappedFile::open(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return sys_error("cannot stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(Errc::io, fmt::format("'{}' is not a regular file", path.string()));
  }
  MappedFile m;
  m.path_ = path;
  m.size_ = static_cast<std::size_t>(st.st_size);
  if (m.size_ > 0) {
    void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return sys_error("cannot map", path, err);
    }
    m.data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  return m;
}

void MappedFile::drop_resident_pages() const noexcept { drop_resident_pages(0, size_); }

void MappedFile::drop_resident_pages(std::uint64_t offset, std::uint64_t bytes) const noexcept {
  if (!data_ || offset >= size_) return;
  constexpr std::uint64_t kPage = 4096;  // whole pages around the range: read-only, shared
  const std::uint64_t begin = offset / kPage * kPage;
  const std::uint64_t end = std::min<std::uint64_t>(size_, offset + bytes);
  ::madvise(const_cast<std::byte*>(data_) + begin, end - begin, MADV_DONTNEED);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      path_(std::move(o.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    // Unmap only: calling the destructor here would end path_'s lifetime before it is assigned.
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    path_ = std::move(o.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

namespace {
// "<pid> <host>" of the process holding a lock, as it wrote it (empty if it has not yet).
std::string lock_holder(int fd) {
  char buf[256];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return {};
  std::string text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown-host";
  return host;
}

// Temporary files ("<name>.tmp-<pid>") of writers that died without committing: only called
// under the lock, so no live retra process on this host is writing them; a pid that is alive
// (another host's writer on shared storage, or a reused pid) keeps its file.
void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const auto at = name.rfind(".tmp-");
    if (at == std::string::npos || at + 5 == name.size()) continue;
    const std::string digits = name.substr(at + 5);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    fs::remove(e.path(), ec);
  }
}
}  // namespace

Result<DirectoryLock> DirectoryLock::acquire(const fs::path& dir) {
  const fs::path lock = dir / ".retra.lock";
  DirectoryLock l;
  l.fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (l.fd_ < 0) {
    const int err = errno;
    std::error_code ec;
    if (err == ENOENT && !fs::is_directory(dir, ec))  // the directory, not the lock, is missing
      return Error(Errc::not_found,
                   fmt::format("database directory '{}' does not exist", dir.string()));
    return sys_error("cannot open lock file", lock, err);
  }
  if (::flock(l.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string holder = lock_holder(l.fd_);
      std::string who = "another retra process";
      if (const auto sp = holder.find(' '); !holder.empty())
        who = sp == std::string::npos ? fmt::format("retra process {}", holder)
                                      : fmt::format("retra process {} on {}", holder.substr(0, sp),
                                                    holder.substr(sp + 1));
      return Error(Errc::io, fmt::format("database '{}' is locked by {} (lock file '{}'); wait for "
                                         "it to finish, or stop it",
                                         dir.string(), who, lock.string()));
    }
    return sys_error("cannot lock", lock, err);
  }
  // Who holds it, for the message above; a failure to record that is not an error.
  const std::string me = fmt::format("{} {}\n", ::getpid(), host_name());
  if (::ftruncate(l.fd_, 0) == 0) (void)!::pwrite(l.fd_, me.data(), me.size(), 0);
  remove_stale_temporaries(dir);
  return l;
}

DirectoryLock::DirectoryLock(DirectoryLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

std::uint64_t free_disk_bytes(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  struct statvfs st {};
  if (p.empty() || ::statvfs(p.c_str(), &st) != 0) return ~std::uint64_t{0};
  return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
}

}  // namespace retra::io
