// Load test of `retra serve` (bounded, loopback only): collects positions by following the
// `child` of every move from a start position through the API itself (so it works for every
// game), then keep-alive clients probe them for a fixed time; prints requests per second and
// latency percentiles, then sends a thousand malformed requests and checks the server still
// answers correctly. Usage: serve_load PORT DB START [--clients N] [--seconds S] [--malformed M]
// Thread safety: one httplib::Client per client thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;

std::string probe_path(const std::string& db, const std::string& position) {
  return "/api/probe?db=" + httplib::detail::encode_query_param(db) +
         "&position=" + httplib::detail::encode_query_param(position);
}

httplib::Client client(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  c.set_read_timeout(10, 0);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: serve_load PORT DB START [--clients N] [--seconds S] [--malformed M]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const std::string db = argv[2], start = argv[3];
  int clients = 8, malformed = 1000;
  double seconds = 10;
  for (int i = 4; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--clients") clients = std::atoi(argv[i + 1]);
    if (k == "--seconds") seconds = std::atof(argv[i + 1]);
    if (k == "--malformed") malformed = std::atoi(argv[i + 1]);
  }

  // Positions: breadth first from the start through the moves' children, up to 2000.
  std::vector<std::string> positions;
  {
    auto c = client(port);
    std::deque<std::string> queue{start};
    std::set<std::string> seen{start};
    while (!queue.empty() && positions.size() < 2000) {
      const std::string p = queue.front();
      queue.pop_front();
      auto r = c.Get(probe_path(db, p));
      if (!r || r->status != 200) {
        std::fprintf(stderr, "serve_load: probe of %s failed: %s\n", p.c_str(),
                     r ? r->body.c_str() : httplib::to_string(r.error()).c_str());
        return 1;
      }
      positions.push_back(p);
      for (const auto& m : nlohmann::json::parse(r->body)["moves"])
        if (m.contains("child") && m["child"].is_string() && seen.insert(m["child"]).second)
          queue.push_back(m["child"]);
    }
  }

  std::atomic<std::uint64_t> errors{0};
  std::vector<std::vector<double>> latency(static_cast<std::size_t>(clients));
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t)
    threads.emplace_back([&, t] {
      auto c = client(port);
      std::mt19937 rng(static_cast<unsigned>(t));
      auto& lat = latency[static_cast<std::size_t>(t)];
      while (Clock::now() < deadline) {
        const std::string& p = positions[rng() % positions.size()];
        const auto a = Clock::now();
        auto r = c.Get(probe_path(db, p));
        lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
        if (!r || r->status != 200) ++errors;
      }
    });
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double q) {
    return all.empty() ? 0.0
                       : all[std::min(all.size() - 1, static_cast<std::size_t>(q * all.size()))];
  };
  const double rps = static_cast<double>(all.size()) / wall;
  std::printf("%-8s %8d %10zu %8llu %12.0f %8.3f %8.3f %8.3f %8.3f\n", db.c_str(), clients,
              all.size(), static_cast<unsigned long long>(errors.load()), rps, pct(0.5), pct(0.9),
              pct(0.99), all.empty() ? 0.0 : all.back());

  // Malformed requests, then one correct probe: the server must still answer it.
  int refused = 0;
  {
    auto c = client(port);
    std::mt19937 rng(1);
    for (int k = 0; k < malformed; ++k) {
      std::string junk;
      for (int i = 0, n = static_cast<int>(rng() % 80); i < n; ++i)
        junk += static_cast<char>(rng() % 256);
      httplib::Result r =
          k % 3 == 0   ? c.Get(probe_path(db, junk))
          : k % 3 == 1 ? c.Get("/api/probe?db=" + std::to_string(k) + "&position=%%")
                       : c.Get("/api/probe?db=" + db + "&position=" + std::string(9000, 'x'));
      if (r && r->status >= 400 && r->status < 500) ++refused;
    }
    auto r = client(port).Get(probe_path(db, positions.front()));
    const bool alive = r && r->status == 200;
    std::fprintf(stderr, "malformed: %d sent, %d refused with a 4xx answer; then a probe: %s\n",
                 malformed, refused, alive ? "answered" : "FAILED");
    if (!alive) return 1;
  }
  return errors ? 1 : 0;
}
