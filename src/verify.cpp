// Shared helpers of the verifiers. Thread safety: pure functions.
#include "src/verify.hpp"

namespace retra {

VerifyFailure failure_from_error(const std::string& segment, const Error& e) {
  VerifyFailure f;
  f.segment = segment;
  f.message = e.message();
  f.block = e.block();
  return f;
}

}  // namespace retra
