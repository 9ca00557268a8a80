// Random-access roofline: random byte reads per second over a large array (default 4 GiB, set
// RETRA_ROOFLINE_MIB to change), on 4 KiB pages and on transparent huge pages, with and without
// software prefetching, on one thread and on all. Kernel speeds are stated as a fraction of these.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace {

std::size_t array_bytes() {
  const char* e = std::getenv("RETRA_ROOFLINE_MIB");
  const std::size_t mib = e ? std::strtoull(e, nullptr, 10) : 4096;
  std::size_t b = 1;
  while (b < (mib << 20)) b <<= 1;  // a power of two, so that indices are masks
  return b;
}

struct Array {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  bool huge = false;
};

Array& array(bool huge) {
  static Array a;
  if (a.data && a.huge == huge) return a;
  if (a.data) munmap(a.data, a.size);
  a.size = array_bytes();
  a.huge = huge;
  void* p = mmap(nullptr, a.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  madvise(p, a.size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  a.data = static_cast<std::uint8_t*>(p);
  std::memset(a.data, 1, a.size);  // fault every page in before timing
  return a;
}

inline std::uint64_t xorshift(std::uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// state.range(0): 1 = huge pages; state.range(1): prefetch distance (0 = none).
void BM_RandomReads(benchmark::State& st) {
  const bool huge = st.range(0) != 0;
  const int distance = static_cast<int>(st.range(1));
  static Array* shared = nullptr;
  if (st.thread_index() == 0) shared = &array(huge);
  // Google Benchmark starts all threads' loops together, after thread 0's setup above.
  std::uint64_t seed = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(st.thread_index() + 1);
  std::uint64_t sum = 0;
  constexpr int kBatch = 4096;
  std::uint64_t idx[kBatch];
  for (auto _ : st) {
    const Array& a = *shared;
    const std::uint64_t mask = a.size - 1;
    for (int i = 0; i < kBatch; ++i) idx[i] = xorshift(seed) & mask;
    if (distance == 0) {
      for (int i = 0; i < kBatch; ++i) sum += a.data[idx[i]];
    } else {
      for (int i = 0; i < distance; ++i) __builtin_prefetch(a.data + idx[i]);
      for (int i = 0; i < kBatch; ++i) {
        if (i + distance < kBatch) __builtin_prefetch(a.data + idx[i + distance]);
        sum += a.data[idx[i]];
      }
    }
  }
  benchmark::DoNotOptimize(sum);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * kBatch);
}

const int kThreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
BENCHMARK(BM_RandomReads)
    ->ArgNames({"huge", "prefetch"})
    ->Args({0, 0})
    ->Args({0, 16})
    ->Args({1, 0})
    ->Args({1, 16})
    ->Threads(1)
    ->Threads(kThreads)
    ->UseRealTime();

}  // namespace
