// The explorer's HTTP server in a statically linked retra: Debian ships cpp-httplib only as a
// shared library, so the static build (x86-64-v3, for other machines) has none and says so.
// Thread safety: no state.
#include "src/serve/explorer.hpp"

namespace retra::serve {

struct Server::Impl {};

Server::Server(const Explorer&, const ServeOptions&) {}
Server::~Server() = default;

namespace {
Error unavailable() {
  return Error(Errc::invalid_argument,
               "this retra is the static build, which has no HTTP server (Debian ships "
               "cpp-httplib only as a shared library); run `retra serve` from the release build "
               "(scripts/build.sh release)");
}
}  // namespace

Result<int> Server::bind() { return unavailable(); }
Status Server::run() { return unavailable(); }
void Server::stop() {}

}  // namespace retra::serve
