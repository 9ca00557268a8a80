// The C++ API from an outside project: open an Awari database, probe an 8-stone position.
// Usage: consumer_cpp DB_DIR
#include <retra/probe.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  retra::probe::Value err;
  auto db = retra::probe::Prober::open(argv[1], {}, &err);
  if (!db) {
    std::fprintf(stderr, "%s\n", err.message.c_str());
    return 1;
  }
  const auto v = db->awari({1, 1, 1, 1, 1, 2, 1, 0, 0, 0, 0, 0});
  if (!v) {
    std::fprintf(stderr, "%s\n", v.message.c_str());
    return 1;
  }
  std::printf("value %d\n", v.value);
  return 0;
}
