// Exit codes, error output, the progress bar and helpers for the CLI. Thread safety: see cli.hpp.
#include "cli.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "src/util/json.hpp"

namespace retra::cli {

int exit_code(Errc code) {
  switch (code) {
    case Errc::invalid_argument:
      return kUsage;
    case Errc::not_found:
      return kNotFound;
    case Errc::mismatch:
      return kNotFound;
    case Errc::corrupt:
      return kCorrupt;
    case Errc::io:
      return kIo;
    case Errc::resource:
      return kResource;
    case Errc::verify_failed:
      return kVerifyFailed;
    case Errc::internal:
      return kInternal;
  }
  return kInternal;
}

int Common::resolved_threads() const {
  if (threads > 0) return threads;
  const unsigned h = std::thread::hardware_concurrency();
  int n = h ? static_cast<int>(h) : 1;
  // Ranks of one build on the same machine share its hardware threads (Open MPI says how many
  // ranks run on this node).
  if (cluster)
    if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
      n = std::max(1, n / std::max(1, std::atoi(local)));
  return n;
}

void print_json(const nlohmann::json& j) { std::cout << dump_json(j) << std::endl; }

int report_error(const Common& c, const Error& e) {
  // A rank of a cluster build that stopped because another failed: that one says why.
  if (e.cause() == Cause::peer_failed && c.cluster && c.cluster->rank() != 0)
    return exit_code(e.code());
  if (c.cluster && c.cluster->rank() != 0)
    std::cerr << "retra: rank " << c.cluster->rank() << ": error: " << e.message() << std::endl;
  else
    std::cerr << "retra: error: " << e.message() << std::endl;
  if (c.json) print_json(error_json(errc_name(e.code()), e.message()));
  return exit_code(e.code());
}

namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProgressBar::ProgressBar(Progress& p, bool enabled) : p_(p), enabled_(enabled && ::isatty(2)) {
  if (enabled_) thread_ = std::thread([this] { run(); });
}

ProgressBar::~ProgressBar() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (enabled_) {
    std::lock_guard lock(out_mu_);
    std::cerr << "\r" << std::string(last_width_, ' ') << "\r" << std::flush;
  }
}

void ProgressBar::println(const std::string& line) {
  std::lock_guard lock(out_mu_);
  if (enabled_) std::cerr << "\r" << std::string(last_width_, ' ') << "\r";
  last_width_ = 0;
  std::cout << line << std::endl;
}

void ProgressBar::run() {
  while (!stop_) {
    draw(false);
    for (int i = 0; i < 4 && !stop_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void ProgressBar::draw(bool) {
  const auto s = p_.snapshot();
  if (s.generation != generation_) {
    generation_ = s.generation;
    phase_start_ = now_seconds();
  }
  const double frac =
      s.total ? std::min(1.0, static_cast<double>(s.done) / static_cast<double>(s.total)) : 0.0;
  const int width = 30;
  const int filled = static_cast<int>(frac * width);
  std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '.');
  std::string line = fmt::format("[{}] {:5.1f}%  {}  {:.1f} s", bar, frac * 100, s.label,
                                 now_seconds() - phase_start_);
  if (const std::string job = job_estimate(s); !job.empty()) line += "  |  " + job;
  // A line wider than the terminal wraps, and "\r" then redraws only its last part.
  winsize ws{};
  if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.size() >= ws.ws_col)
    line.resize(ws.ws_col - 1u);
  std::lock_guard lock(out_mu_);
  std::cerr << "\r" << line;
  if (line.size() < last_width_) std::cerr << std::string(last_width_ - line.size(), ' ');
  std::cerr << std::flush;
  last_width_ = line.size();
}

std::unique_ptr<Database> open_db(const Common& c, const GameModule*& game, int& exit) {
  if (c.db.empty()) {
    exit = report_error(c, Error(Errc::invalid_argument, "--db DIR is required"));
    return nullptr;
  }
  auto db = Database::open(c.db);
  if (!db) {
    exit = report_error(c, db.error());
    return nullptr;
  }
  auto module = module_of(**db);
  if (!module) {
    exit = report_error(c, module.error());
    return nullptr;
  }
  game = *module;
  return std::move(*db);
}

}  // namespace retra::cli
