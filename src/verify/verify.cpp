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
  const GameModule* m = find_module(db.manifest().game);
  if (!m)
    return Error(Errc::mismatch,
                 fmt::format("'{}' holds a database of game '{}', which this retra does not know "
                             "(known: {})",
                             db.dir().string(), db.manifest().game, module_names()));
  return m->verify(db, opt);
}

}  // namespace retra
