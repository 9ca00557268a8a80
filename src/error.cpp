// Names of error codes (used in --json output and messages). Thread safety: pure functions.
#include "retra/error.hpp"

namespace retra {

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::not_found:
      return "not_found";
    case Errc::io:
      return "io";
    case Errc::corrupt:
      return "corrupt";
    case Errc::mismatch:
      return "mismatch";
    case Errc::resource:
      return "resource";
    case Errc::verify_failed:
      return "verify_failed";
    case Errc::internal:
      return "internal";
  }
  return "unknown";
}

}  // namespace retra
