// Typed errors for recoverable failures (user input, I/O, corrupt files) and a small Result<T>.
// Thread safety: value types; no shared state.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace retra {

// Every recoverable failure has one of these codes. The CLI maps them to exit codes
// (docs/CLI.md), so scripts can tell a bad argument from a corrupt database.
enum class Errc {
  invalid_argument,  // the caller asked for something impossible (bad option, bad position)
  not_found,         // a file, directory, segment or game that does not exist
  io,                // the operating system refused a read, write, map or rename
  corrupt,           // a file exists but fails a magic, version or checksum test
  mismatch,          // a file is valid but belongs to another game, variant or indexer
  resource,          // the job would exceed a memory or size limit
  verify_failed,     // a database value disagrees with the verifier
  internal,          // a bug: an invariant that should hold did not
};

std::string_view errc_name(Errc code) noexcept;

// Why a kernel or reader failed, where a caller reacts to the cause (a build that falls back to
// another metric, a verifier that names the damaged block): callers test these, never messages.
enum class Cause : std::uint8_t {
  none,
  distance_overflow,  // a distance does not fit the value encoding
  counter_overflow,   // a position has more moves than the kernel's counters hold
  bad_block,          // a segment block failed its checksum or decompression (block() says which)
  peer_failed,        // another rank of a cluster build failed (that rank says why)
};

class Error {
 public:
  Error(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  Error(Errc code, Cause cause, std::string message)
      : code_(code), cause_(cause), message_(std::move(message)) {}
  Errc code() const noexcept { return code_; }
  Cause cause() const noexcept { return cause_; }
  const std::string& message() const noexcept { return message_; }
  // The damaged block of a segment file, when the error is about one.
  std::optional<std::uint64_t> block() const noexcept { return block_; }
  Error& at_block(std::uint64_t b) {
    block_ = b;
    return *this;
  }
  // Prefixes context ("reading db/x-12.rseg: ") so messages say where things went wrong.
  Error& context(std::string_view prefix) {
    message_.insert(0, std::string(prefix) + ": ");
    return *this;
  }

 private:
  Errc code_;
  Cause cause_ = Cause::none;
  std::optional<std::uint64_t> block_;
  std::string message_;
};

// Result<T> holds either a T or an Error. It is std::expected in miniature (GCC 12 lacks it).
template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;
  Result(const T& v) : data_(v) {}          // NOLINT: implicit by design, like std::expected
  Result(T&& v) : data_(std::move(v)) {}    // NOLINT
  Result(Error e) : data_(std::move(e)) {}  // NOLINT

  bool has_value() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(data_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(data_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(data_));
  }
  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(data_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(data_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> data_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : error_(std::move(e)), ok_(false) {}  // NOLINT
  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error&& error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  Error error_{Errc::internal, {}};
  bool ok_ = true;
};

using Status = Result<void>;

// Propagates an error from an expression returning Result<...>; usable in functions returning any
// Result type. Deliberately a macro: it must `return` from the caller.
#define RETRA_TRY(expr)                            \
  do {                                             \
    auto&& retra_try_result_ = (expr);             \
    if (!retra_try_result_) {                      \
      return std::move(retra_try_result_).error(); \
    }                                              \
  } while (false)

// Exception carrying an Error; thrown only at the CLI boundary (never inside kernels).
class Failure : public std::exception {
 public:
  explicit Failure(Error e) : error_(std::move(e)) {}
  const char* what() const noexcept override { return error_.message().c_str(); }
  const Error& error() const noexcept { return error_; }

 private:
  Error error_;
};

}  // namespace retra
