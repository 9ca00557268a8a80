// The web explorer (`retra serve`): request handling apart from any socket, so that tests and
// fuzzers drive it directly, and the HTTP server around it (src/serve/http.cpp).
// Thread safety: an Explorer is immutable after open(); get() may run on any number of threads
// (probes go through Database, whose segment readers are shared and locked).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "retra/error.hpp"
#include "src/database.hpp"
#include "src/module/module.hpp"

namespace retra::serve {

// Bounds on what a request may ask, so that no request can make the server do unbounded work.
inline constexpr std::size_t kMaxPositionBytes = 256;  // longer than any game's notation
inline constexpr std::size_t kMaxNameBytes = 128;

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// One database the server was started with, named by its directory's last component (made unique
// with -2, -3, ... when two directories share it). Requests name databases only by these names,
// never by path.
struct Served {
  std::string name;
  std::filesystem::path dir;
  std::unique_ptr<Database> db;
  const GameModule* game = nullptr;
  nlohmann::json stats;  // the game's statistics report, computed once at start
};

class Explorer {
 public:
  // Opens every directory (read-only). Errors: a directory that is missing or not a database.
  static Result<std::unique_ptr<Explorer>> open(const std::vector<std::filesystem::path>& dirs);

  // Answers GET `path` with the (decoded) query parameters. Routes:
  //   /                      the page listing the databases
  //   /explore               the explorer page (?db=NAME[&position=TEXT])
  //   /static/FILE           the page's scripts and style sheet (compiled into the binary)
  //   /api/databases         the databases: name, game, segments, coverage
  //   /api/probe             ?db=NAME&position=TEXT: exactly what `retra probe --json` prints
  //   /api/stats             ?db=NAME: exactly what `retra stats --json` prints
  // Errors are JSON ({"ok": false, "error": {"code", "message"}}) with status 400 (bad request),
  // 404 (no such route, database or segment) or 500 (a damaged file).
  Response get(std::string_view path, const std::multimap<std::string, std::string>& params) const;

  const std::vector<Served>& databases() const noexcept { return dbs_; }

 private:
  Explorer() = default;
  const Served* find(const std::multimap<std::string, std::string>& params, Response& error) const;
  std::vector<Served> dbs_;
  nlohmann::json listing_;
};

// A JSON error response in the CLI's --json shape.
Response error_response(const Error& e);

struct ServeOptions {
  std::string bind = "127.0.0.1";  // loopback only unless the user says otherwise
  int port = 8080;                 // 0: any free port
  int threads = 0;                 // connection threads (0: 4 per hardware thread, at least 32)
  int read_timeout_s = 5;          // a client that sends nothing for this long is dropped
  int keep_alive_s = 5;
};

// The HTTP server around an Explorer: GET only, bounded request sizes and timeouts.
class Server {
 public:
  Server(const Explorer& explorer, const ServeOptions& opt);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Binds the socket; returns the port (the chosen one when opt.port is 0). Errors: the address
  // is in use or cannot be bound.
  Result<int> bind();
  // Serves until stop() (from another thread or a signal handler's helper thread).
  Status run();
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace retra::serve
