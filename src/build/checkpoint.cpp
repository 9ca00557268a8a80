// Checkpoint files of the backward kernel (layout: docs/FORMAT.md, "Checkpoint files").
// Thread safety: see checkpoint.hpp.
#include "src/build/checkpoint.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace retra::builder {

namespace {

constexpr char kMagic[8] = {'R', 'E', 'T', 'R', 'A', 'C', 'K', 'P'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kFixed = 32;  // magic, version, key bytes, meta bytes, arrays, reserved
// Arrays go in pieces of 8 MiB, done_with after each: out of core, what a save or a load holds
// resident at once.
constexpr std::size_t kPiece = std::size_t{8} << 20;

template <class T>
T get(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Appends to the file and to the running checksum.
class SealedWriter {
 public:
  explicit SealedWriter(io::AtomicFile& f) : f_(f) { XXH3_64bits_reset(state_); }
  ~SealedWriter() { XXH3_freeState(state_); }
  SealedWriter(const SealedWriter&) = delete;
  SealedWriter& operator=(const SealedWriter&) = delete;
  Status put(const void* data, std::size_t n) {
    if (n == 0) return {};  // an empty array's data may be null
    XXH3_64bits_update(state_, data, n);
    return f_.write(data, n);
  }
  template <class T>
  Status put_value(T v) {
    return put(&v, sizeof v);
  }
  Status seal() {
    const std::uint64_t sum = XXH3_64bits_digest(state_);
    return f_.write(&sum, sizeof sum);
  }

 private:
  io::AtomicFile& f_;
  XXH3_state_t* state_ = XXH3_createState();
};

}  // namespace

FileCheckpoints::FileCheckpoints(std::filesystem::path path, std::string key,
                                 double interval_seconds,
                                 std::function<void(const std::string&)> note,
                                 std::function<void(const kernels::CheckpointPoint&)> committed)
    : path_(std::move(path)),
      key_(std::move(key)),
      interval_(interval_seconds),
      note_(std::move(note)),
      committed_callback_(std::move(committed)) {}

FileCheckpoints::~FileCheckpoints() { flush(); }

void FileCheckpoints::give_up(const Error& e) {
  disabled_ = true;
  if (note_)
    note_(fmt::format("checkpoint not saved, the build goes on without checkpoints: {}",
                      e.message()));
}

void FileCheckpoints::flush() {
  if (!committing_.joinable()) return;
  committing_.join();
  if (commit_error_) {
    give_up(*commit_error_);
    commit_error_.reset();
  } else {
    ++saves_;
  }
}

bool FileCheckpoints::due() {
  // Not while the last save is still being committed: the kernel would wait for it.
  if (interval_ <= 0 || disabled_ || !committed_.load(std::memory_order_acquire)) return false;
  const double since = std::chrono::duration<double>(Clock::now() - last_).count();
  return since >= std::max(interval_, 10 * last_save_seconds_);
}

Status FileCheckpoints::save(std::span<const std::uint8_t> meta,
                             std::span<const std::span<const std::uint8_t>> arrays,
                             const kernels::CheckpointPoint& point) {
  flush();
  if (disabled_) return {};
  const auto t0 = Clock::now();
  std::optional<io::AtomicFile> file;
  auto write = [&]() -> Status {
    auto f = io::AtomicFile::create(path_);
    if (!f) return std::move(f).error();
    file.emplace(std::move(*f));
    SealedWriter w(*file);
    RETRA_TRY(w.put(kMagic, sizeof kMagic));
    RETRA_TRY(w.put_value(kVersion));
    RETRA_TRY(w.put_value(static_cast<std::uint32_t>(key_.size())));
    RETRA_TRY(w.put_value(static_cast<std::uint64_t>(meta.size())));
    RETRA_TRY(w.put_value(static_cast<std::uint32_t>(arrays.size())));
    RETRA_TRY(w.put_value(std::uint32_t{0}));
    for (const auto& a : arrays) RETRA_TRY(w.put_value(static_cast<std::uint64_t>(a.size())));
    RETRA_TRY(w.put(key_.data(), key_.size()));
    RETRA_TRY(w.put(meta.data(), meta.size()));
    for (const auto& a : arrays)
      for (std::size_t at = 0; at < a.size(); at += kPiece) {
        const std::size_t n = std::min(kPiece, a.size() - at);
        RETRA_TRY(w.put(a.data() + at, n));
        if (done_with) done_with(a.data() + at, n);
      }
    return w.seal();
  };
  if (Status st = write(); !st) {
    give_up(st.error());
    return {};
  }
  last_ = Clock::now();
  last_save_seconds_ = std::chrono::duration<double>(last_ - t0).count();
  committed_.store(false, std::memory_order_relaxed);
  committing_ = std::thread([this, f = std::move(*file), point]() mutable {
    if (Status st = f.commit(); !st)
      commit_error_ = std::move(st).error();
    else if (committed_callback_)
      committed_callback_(point);
    committed_.store(true, std::memory_order_release);
  });
  return {};
}

std::optional<std::vector<std::uint8_t>> FileCheckpoints::load_meta() {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return std::nullopt;
  auto unusable = [&](const std::string& why) -> std::optional<std::vector<std::uint8_t>> {
    map_ = {};
    if (note_)
      note_(fmt::format("checkpoint {} not used ({}); building from the start",
                        path_.filename().string(), why));
    return std::nullopt;
  };
  auto m = io::MappedFile::open(path_);
  if (!m) return unusable(m.error().message());
  map_ = std::move(*m);
  const auto bytes = map_.bytes();
  const std::byte* p = bytes.data();
  const std::uint64_t n = bytes.size();
  if (n < kFixed + 8 || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    return unusable("not a checkpoint file");
  if (get<std::uint32_t>(p + 8) != kVersion) return unusable("written by another version");
  const std::uint64_t key_bytes = get<std::uint32_t>(p + 12);
  const std::uint64_t meta_bytes = get<std::uint64_t>(p + 16);
  const std::uint64_t count = get<std::uint32_t>(p + 24);
  // Every length is checked against what is left before it is added, so nothing overflows.
  std::uint64_t at = kFixed;
  auto take = [&](std::uint64_t k) {
    if (k > n - 8 - at) return false;
    at += k;
    return true;
  };
  if (count > 64 || !take(8 * count)) return unusable("truncated");
  std::vector<std::uint64_t> lengths(count);
  for (std::uint64_t k = 0; k < count; ++k) lengths[k] = get<std::uint64_t>(p + kFixed + 8 * k);
  const std::uint64_t key_at = at;
  if (!take(key_bytes)) return unusable("truncated");
  const std::uint64_t meta_at = at;
  if (!take(meta_bytes)) return unusable("truncated");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> arrays;
  for (std::uint64_t len : lengths) {
    arrays.emplace_back(at, len);
    if (!take(len)) return unusable("truncated");
  }
  if (at != n - 8) return unusable("wrong size");
  if (XXH3_64bits(p, n - 8) != get<std::uint64_t>(p + n - 8)) return unusable("checksum mismatch");
  const std::string_view key(reinterpret_cast<const char*>(p + key_at), key_bytes);
  if (key != key_) return unusable(fmt::format("it belongs to '{}'", key));
  arrays_ = std::move(arrays);
  return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(p + meta_at),
                                   reinterpret_cast<const std::uint8_t*>(p + meta_at + meta_bytes));
}

Status FileCheckpoints::load_arrays(std::span<const std::span<std::uint8_t>> arrays) {
  const auto bytes = map_.bytes();
  bool ok = !bytes.empty() && arrays.size() == arrays_.size();
  for (std::size_t k = 0; ok && k < arrays.size(); ++k) ok = arrays[k].size() == arrays_[k].second;
  if (!ok) {
    map_ = {};
    return Error(Errc::mismatch, fmt::format("checkpoint {}: its arrays do not fit this run",
                                             path_.filename().string()));
  }
  for (std::size_t k = 0; k < arrays.size(); ++k)  // std::copy: an empty array may be null
    for (std::size_t at = 0; at < arrays[k].size(); at += kPiece) {
      const std::size_t n = std::min(kPiece, arrays[k].size() - at);
      std::copy_n(reinterpret_cast<const std::uint8_t*>(bytes.data() + arrays_[k].first + at), n,
                  arrays[k].data() + at);
      if (done_with) done_with(arrays[k].data() + at, n);
    }
  map_ = {};
  if (note_) note_(fmt::format("resuming from checkpoint {}", path_.filename().string()));
  return {};
}

}  // namespace retra::builder
