// The explorer's HTTP server: cpp-httplib (Debian's libcpp-httplib-dev) around Explorer::get.
// GET only, bounded request sizes and timeouts, a fixed pool of connection threads.
// Thread safety: run() blocks its caller; stop() may be called from any thread.
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

// Debian builds httplib as a library (libcpp-httplib.so) with its size limits compiled in: request
// lines up to 8 KiB, headers up to 8 KiB each and 100 in all.
#include <httplib.h>

#include "src/serve/explorer.hpp"

namespace retra::serve {

struct Server::Impl {
  explicit Impl(const ServeOptions& o) : opt(o) {}
  ServeOptions opt;
  httplib::Server http;
  int port = -1;
  // httplib's stop() does nothing before the listener runs, so a stop() that comes first would
  // be lost and run() would never return. Both sides publish, then look (sequentially
  // consistent): either run() sees the request, or stop() sees run() active and waits until
  // httplib is listening before it stops it.
  std::atomic<bool> stop_requested{false}, active{false};
  int listen_fd = -1;
};

Server::Server(const Explorer& explorer, const ServeOptions& opt)
    : impl_(std::make_unique<Impl>(opt)) {
  auto& http = impl_->http;
  int threads = opt.threads;
  if (threads <= 0) {
    // Each keep-alive connection holds a thread while it is open, so there are many more threads
    // than cores; they sleep on their sockets.
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::max(32, 4 * hw);
  }
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http.set_read_timeout(opt.read_timeout_s, 0);
  http.set_write_timeout(opt.read_timeout_s, 0);
  http.set_keep_alive_timeout(opt.keep_alive_s);
  http.set_keep_alive_max_count(100000);
  // Answers are small: without TCP_NODELAY, Nagle's algorithm and the client's delayed ACK add
  // 40 ms to every keep-alive request.
  http.set_tcp_nodelay(true);
  http.set_payload_max_length(4096);  // GET requests carry no body worth reading
  // httplib's default also sets SO_REUSEPORT, which would let a second `retra serve` share the
  // port silently and take half the requests; SO_REUSEADDR alone only allows a quick restart.
  Impl* self = impl_.get();
  http.set_socket_options([self](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    self->listen_fd = sock;  // the listening socket, for its backlog (bind())
  });
  const Explorer* ex = &explorer;
  http.Get(".*", [ex](const httplib::Request& req, httplib::Response& res) {
    const Response r = ex->get(req.path, req.params);
    res.status = r.status;
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_content(r.body, r.content_type.c_str());
  });
  // Every other method: the explorer is read-only.
  auto refuse = [](const httplib::Request&, httplib::Response& res) {
    const Response r = error_response(
        Error(Errc::invalid_argument, "the explorer is read-only: only GET requests are served"));
    res.status = 405;
    res.set_content(r.body, r.content_type.c_str());
  };
  http.Post(".*", refuse);
  http.Put(".*", refuse);
  http.Delete(".*", refuse);
  http.Patch(".*", refuse);
  // Requests httplib itself rejects (too long, malformed) still get a JSON answer.
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const Response r = error_response(
        Error(res.status >= 500 ? Errc::internal : Errc::invalid_argument,
              fmt::format("HTTP {}: the request was refused (malformed or over the size limits)",
                          res.status)));
    res.set_content(r.body, r.content_type.c_str());
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        const Response r = error_response(Error(Errc::internal, "internal error"));
        res.status = 500;
        res.set_content(r.body, r.content_type.c_str());
      });
}

Server::~Server() = default;

Result<int> Server::bind() {
  Impl& s = *impl_;
  if (s.opt.port < 0 || s.opt.port > 65535)
    return Error(Errc::invalid_argument,
                 fmt::format("--port {}: not a port (0..65535)", s.opt.port));
  if (s.opt.port == 0) {
    s.port = s.http.bind_to_any_port(s.opt.bind.c_str());
  } else if (s.http.bind_to_port(s.opt.bind.c_str(), s.opt.port)) {
    s.port = s.opt.port;
  }
  if (s.port <= 0)
    return Error(Errc::io, fmt::format("cannot listen on {}:{} (in use, or not an address of this "
                                       "machine); choose another --port or --bind",
                                       s.opt.bind, s.opt.port));
  // httplib listens with a backlog of 5: clients connecting at once beyond it lose their SYN and
  // retry a second later. Listening again on the bound socket raises the backlog (Linux).
  if (s.listen_fd >= 0) ::listen(s.listen_fd, SOMAXCONN);
  return s.port;
}

Status Server::run() {
  Impl& s = *impl_;
  if (s.port <= 0) return Error(Errc::internal, "Server::run before a successful bind");
  s.active = true;
  const bool ok = s.stop_requested || s.http.listen_after_bind();
  s.active = false;
  if (!ok) return Error(Errc::io, "the server stopped: the listening socket failed");
  return {};
}

void Server::stop() {
  Impl& s = *impl_;
  s.stop_requested = true;
  while (s.active && !s.http.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s.http.stop();
}

}  // namespace retra::serve
