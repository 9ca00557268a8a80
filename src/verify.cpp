// Shared helpers of the verifiers. Thread safety: pure functions.
#include "src/verify.hpp"

namespace retra {

VerifyFailure failure_from_error(const std::string& segment, const std::string& message) {
  VerifyFailure f;
  f.segment = segment;
  f.message = message;
  // Segment readers name the block in their messages; keep the number for --json users.
  const auto pos = message.find(" block ");
  if (pos != std::string::npos && pos + 7 < message.size() && message[pos + 7] >= '0' &&
      message[pos + 7] <= '9')
    f.block = std::stoull(message.substr(pos + 7));
  return f;
}

}  // namespace retra
