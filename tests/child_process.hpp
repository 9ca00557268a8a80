// Test helpers for checks that change the process itself (its resource limits): they run in a
// forked child, so the test binary keeps its own limits. Thread safety: call from one thread.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace retra::test {

// Runs body() in a forked child and returns its exit code: body's result, or -1 where the fork
// failed or the child did not exit normally (a crash).
template <class Body>
int in_child(Body body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) ::_exit(body());
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Lowers this process's address space limit (ulimit -v) to what it maps now and `headroom`
// bytes more; false where it cannot (an unreadable /proc/self/statm, a refused setrlimit).
inline bool limit_address_space(std::uint64_t headroom) {
  unsigned long long pages = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  const bool read = f && std::fscanf(f, "%llu", &pages) == 1;
  if (f) std::fclose(f);
  struct rlimit as {};
  if (!read || ::getrlimit(RLIMIT_AS, &as) != 0) return false;
  as.rlim_cur = std::min<rlim_t>(as.rlim_max,
                                 pages * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + headroom);
  return ::setrlimit(RLIMIT_AS, &as) == 0;
}

}  // namespace retra::test
