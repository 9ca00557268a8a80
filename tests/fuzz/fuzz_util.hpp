// Shared by the fuzz targets: an invariant check that aborts (so libFuzzer keeps the input), and
// small databases of every game built once per process in a temporary directory.
// Thread safety: the databases are built on first use from the fuzzing thread.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "src/build/build.hpp"

// Aborts with a message: a broken invariant is a bug the fuzzer reports like a crash.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (false)

namespace retra::fuzz {

// Awari 0..4 stones, xiangqi KRK and chess KRvK, built once; removed at exit.
inline const std::filesystem::path& databases() {
  static const std::filesystem::path root = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "retra-fuzz-XXXXXX").string();
    std::filesystem::path dir = ::mkdtemp(tmpl.data());
    for (auto [game, target, name] : {std::tuple{"awari", "4", "awari"},
                                      {"xiangqi", "KRK", "xq"},
                                      {"chess", "KRvK", "chess"}}) {
      BuildRequest r;
      r.game = game;
      r.targets = {target};
      r.db = dir / name;
      r.threads = 1;
      auto res = build(r);
      if (!res) {
        std::fprintf(stderr, "fuzz: building %s failed: %s\n", name, res.error().message().c_str());
        std::abort();
      }
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(databases(), ec);
    });
    return dir;
  }();
  return root;
}

}  // namespace retra::fuzz
