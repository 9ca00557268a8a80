// verify(): the database's module runs the generic verify driver. Thread safety: reentrant.
#include "src/verify/verify.hpp"

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/module/module.hpp"

namespace retra {

VerifyFailure failure_from_error(const std::string& segment, const Error& e) {
  VerifyFailure f;
  f.segment = segment;
  f.message = e.message();
  f.block = e.block();
  return f;
}

Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt) {
  auto m = module_of(db);
  if (!m) return m.error();
  return (*m)->verify(db, opt);
}

}  // namespace retra
