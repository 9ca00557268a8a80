// The cgroup memory limit the planner takes as a ceiling, read from directories laid out like
// /proc and /sys: the process's own group and its ancestors count (v2 and v1), a container's
// subtree mount, escaped mount points, and "no limit" in either version's spelling. Also the
// reserved large arrays (LargeArray::reserve, discard, grow) and address_space_limited().
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "child_process.hpp"
#include "src/memory.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

namespace fs = std::filesystem;

// A fake root: /proc/self/{mountinfo,cgroup} and limit files under it.
class FakeRoot {
 public:
  void put(const std::string& path, const std::string& text) const {
    const fs::path p = dir_.path() / path.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::optional<CgroupLimit> limit() const { return cgroup_memory_limit(dir_.path().string()); }

 private:
  test::TempDir dir_;
};

// The limit found in r is `bytes`, set by `file`.
void expect_limit(const FakeRoot& r, std::uint64_t bytes, const std::string& file) {
  const auto l = r.limit();
  ASSERT_TRUE(l);
  EXPECT_EQ(l->bytes, bytes);
  EXPECT_EQ(l->file, file);
}

constexpr const char* kRootAndV2Mounts =
    "22 1 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
    "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
constexpr const char* kV1Mounts =
    "30 23 0:27 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n"
    "31 23 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n";

TEST(CgroupLimit, AParentGroupsLimitBindsItsChildren) {
  FakeRoot r;
  r.put("/proc/self/mountinfo", kRootAndV2Mounts);
  r.put("/proc/self/cgroup", "0::/system.slice/retra.scope\n");
  r.put("/sys/fs/cgroup/system.slice/retra.scope/memory.max", "max\n");
  r.put("/sys/fs/cgroup/system.slice/retra.scope/memory.high", "max\n");
  r.put("/sys/fs/cgroup/system.slice/memory.max", "1073741824\n");
  expect_limit(r, 1u << 30, "/sys/fs/cgroup/system.slice/memory.max");

  // The group's own limit, and memory.high below it, win where they are lower.
  r.put("/sys/fs/cgroup/system.slice/retra.scope/memory.max", "536870912\n");
  EXPECT_EQ(r.limit()->bytes, 512u << 20);
  r.put("/sys/fs/cgroup/system.slice/retra.scope/memory.high", "268435456\n");
  expect_limit(r, 256u << 20, "/sys/fs/cgroup/system.slice/retra.scope/memory.high");
}

TEST(CgroupLimit, V1MemoryControllerOfANonRootGroup) {
  FakeRoot r;
  r.put("/proc/self/mountinfo", kV1Mounts);
  r.put("/proc/self/cgroup", "5:cpu:/\n4:memory:/retra_test\n0::/\n");
  r.put("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  r.put("/sys/fs/cgroup/memory/retra_test/memory.limit_in_bytes", "268435456\n");
  expect_limit(r, 256u << 20, "/sys/fs/cgroup/memory/retra_test/memory.limit_in_bytes");
}

TEST(CgroupLimit, AContainersSubtreeMountAndEscapedMountPoints) {
  FakeRoot r;
  // The container sees its own group at the mount's top; /proc/self/cgroup names it in full.
  r.put("/proc/self/mountinfo",
        "40 30 0:26 /docker/abc /sys/fs/cgroup\\040v2 ro - cgroup2 cgroup2 rw\n");
  r.put("/proc/self/cgroup", "0::/docker/abc/worker\n");
  r.put("/sys/fs/cgroup v2/memory.max", "2147483648\n");
  r.put("/sys/fs/cgroup v2/worker/memory.max", "max\n");
  expect_limit(r, 2u << 30, "/sys/fs/cgroup v2/memory.max");

  // A group outside the mount's subtree is read at the mount's top.
  r.put("/proc/self/cgroup", "0::/elsewhere/x\n");
  EXPECT_EQ(r.limit()->bytes, 2u << 30);
  r.put("/proc/self/cgroup", "0::odd\n0:\n");  // malformed lines: no crash
  EXPECT_EQ(r.limit()->bytes, 2u << 30);
}

TEST(CgroupLimit, NoneWhereNothingLimitsOrNothingCanBeRead) {
  FakeRoot r;
  EXPECT_FALSE(r.limit());  // no /proc at all
  r.put("/proc/self/mountinfo", kRootAndV2Mounts);
  r.put("/proc/self/cgroup", "0::/user.slice\n");
  r.put("/sys/fs/cgroup/user.slice/memory.max", "max\n");
  r.put("/sys/fs/cgroup/user.slice/memory.high", "max\n");
  EXPECT_FALSE(r.limit());
  r.put("/sys/fs/cgroup/user.slice/memory.max", "garbage\n");
  EXPECT_FALSE(r.limit());
  // Without mountinfo, the usual mount point.
  r.put("/proc/self/mountinfo", "");
  r.put("/sys/fs/cgroup/user.slice/memory.max", "4294967296\n");
  ASSERT_TRUE(r.limit());
  EXPECT_EQ(r.limit()->bytes, 4ull << 30);
}

// Address space reserved for a worst case costs what is written, and discard() gives it back:
// the backward kernel's frontiers rely on both (kernels/backward.hpp, Frontier).
TEST(LargeArray, AReservationHoldsWhatIsWrittenAndDiscardGivesItBack) {
  constexpr std::size_t kEntries = std::size_t{1} << 27;  // 1 GiB of address space
  constexpr std::size_t kWritten = std::size_t{1} << 24;  // 128 MiB of it written
  auto a = LargeArray<std::uint64_t>::reserve(kEntries);
  ASSERT_TRUE(a) << a.error().message();
  ASSERT_EQ(a->size(), kEntries);
  const std::uint64_t before = current_rss_bytes();
  ASSERT_GT(before, 0u) << "/proc/self/statm unreadable";
  for (std::size_t i = 0; i < kWritten; ++i) (*a)[i] = i + 1;
  const std::uint64_t written = current_rss_bytes();
  EXPECT_GE(written, before + (100ull << 20));
  EXPECT_LT(written, before + (512ull << 20)) << "pages beyond the written ones were taken";
  a->discard(kWritten);
  EXPECT_LE(current_rss_bytes() + (100ull << 20), written);
  EXPECT_EQ((*a)[0], 0u);
  EXPECT_EQ((*a)[kWritten - 1], 0u);
  (*a)[kWritten] = 7;  // the array stays usable
  EXPECT_EQ((*a)[kWritten], 7u);
}

// discard_below gives back whole 2 MiB pieces below an element and keeps the rest: a frontier
// read in slices gives back what it has read while its other entries are still to be read.
TEST(LargeArray, DiscardBelowKeepsTheElementsFromItsBoundOn) {
  constexpr std::size_t kEntries = std::size_t{1} << 24;  // 128 MiB
  auto a = LargeArray<std::uint64_t>::reserve(kEntries);
  ASSERT_TRUE(a) << a.error().message();
  for (std::size_t i = 0; i < kEntries; ++i) (*a)[i] = i + 1;
  const std::uint64_t written = current_rss_bytes();
  const std::size_t bound = kEntries / 2 + 12345;  // not on a page boundary
  a->discard_below(bound);
  EXPECT_LE(current_rss_bytes() + (50ull << 20), written) << "less than 50 MiB given back";
  for (std::size_t i = bound; i < kEntries; ++i) ASSERT_EQ((*a)[i], i + 1) << i;
  // Everything more than 2 MiB below the bound is given back.
  constexpr std::size_t kHuge = (std::size_t{2} << 20) / sizeof(std::uint64_t);
  EXPECT_EQ((*a)[0], 0u);
  EXPECT_EQ((*a)[bound - kHuge - 1], 0u);
}

// grow() keeps the elements, where the mapping moves as well as where it was shrunk before, and
// the new ones read as zeros: a frontier under ulimit -v starts small and grows as a level needs.
TEST(LargeArray, GrowKeepsTheElements) {
  auto a = LargeArray<std::uint32_t>::reserve(1000);
  ASSERT_TRUE(a) << a.error().message();
  for (std::uint32_t i = 0; i < 1000; ++i) (*a)[i] = i + 1;
  auto b = LargeArray<std::uint32_t>::reserve(1000);  // likely right after a: a moves to grow
  ASSERT_TRUE(b) << b.error().message();
  (*b)[0] = 5;
  for (const std::size_t n : {std::size_t{5000}, std::size_t{3} << 20}) {
    ASSERT_TRUE(a->grow(n));
    ASSERT_EQ(a->size(), n);
    for (std::uint32_t i = 0; i < 1000; ++i) ASSERT_EQ((*a)[i], i + 1) << i;
    EXPECT_EQ((*a)[n - 1], 0u);
    (*a)[n - 1] = 9;
  }
  a->shrink(700);
  ASSERT_TRUE(a->grow(std::size_t{1} << 20));
  for (std::uint32_t i = 0; i < 700; ++i) ASSERT_EQ((*a)[i], i + 1) << i;
  EXPECT_EQ((*a)[4999], 0u);  // given back by shrink() (a page past 700): zeros again
  EXPECT_EQ((*b)[0], 5u);
  LargeArray<std::uint32_t> empty;
  ASSERT_TRUE(empty.grow(10));
  EXPECT_EQ(empty.size(), 10u);
}

// A growth the address space limit refuses is an error, and the array stays as it was. In a
// child, which lowers its own limit to what it maps now and 256 MiB.
TEST(LargeArray, AGrowthPastTheAddressSpaceLimitIsAnError) {
  EXPECT_EQ(test::in_child([] {
              auto a = LargeArray<std::uint64_t>::reserve(1000);
              if (!a) return 2;
              (*a)[999] = 3;
              if (!test::limit_address_space(256u << 20)) return 3;
              const Status st = a->grow(std::size_t{1} << 27);  // 1 GiB
              const bool ok = !st &&
                              st.error().message().find("cannot grow") != std::string::npos &&
                              a->size() == 1000 && (*a)[999] == 3;
              return ok ? 0 : 1;
            }),
            0);
}

// Where ulimit -v or -d is set, reserved address space counts as used: the kernel's frontiers
// then start at the plan's share and grow. Checked in a child, which lowers its own limit.
TEST(LargeArray, AnAddressSpaceLimitIsSeen) {
  struct rlimit as {
  }, data{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &as), 0);
  ASSERT_EQ(::getrlimit(RLIMIT_DATA, &data), 0);
  EXPECT_EQ(address_space_limited(),
            as.rlim_cur != RLIM_INFINITY || data.rlim_cur != RLIM_INFINITY);
  EXPECT_EQ(test::in_child([data] {
              struct rlimit lowered = data;
              lowered.rlim_cur = std::min<rlim_t>(data.rlim_max, rlim_t{1} << 40);
              return ::setrlimit(RLIMIT_DATA, &lowered) == 0 && address_space_limited() ? 0 : 1;
            }),
            0);
}

}  // namespace
}  // namespace retra
