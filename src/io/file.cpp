// POSIX implementation of atomic files, memory maps and directory locks.
// Thread safety: see include/retra/io/file.hpp.
#include "src/io/file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace retra::io {

std::string system_error_text(int err) { return std::strerror(err); }

namespace {
Error sys_error(std::string_view what, const fs::path& p, int err) {
  return Error(err == ENOENT ? Errc::not_found : Errc::io,
               fmt::format("{} '{}': {}", what, p.string(), system_error_text(err)));
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
    this->~AtomicFile();
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

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      path_(std::move(o.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    this->~MappedFile();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    path_ = std::move(o.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

Result<DirectoryLock> DirectoryLock::acquire(const fs::path& dir) {
  const fs::path lock = dir / ".retra.lock";
  DirectoryLock l;
  l.fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (l.fd_ < 0) return sys_error("cannot open lock file", lock, errno);
  if (::flock(l.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK)
      return Error(Errc::io, fmt::format("database '{}' is locked by another retra process; wait "
                                         "for it to finish",
                                         dir.string()));
    return sys_error("cannot lock", lock, err);
  }
  return l;
}

DirectoryLock::DirectoryLock(DirectoryLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace retra::io
