// Checkpoint files (src/build/checkpoint.hpp): what is saved reads back exactly; a damaged,
// truncated, foreign or missing file is never used (the kernel then starts from the beginning);
// a save that cannot be written leaves the build going; saves are spaced by the interval.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "src/build/checkpoint.hpp"
#include "src/io/file.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

using builder::FileCheckpoints;

struct Saved {
  std::vector<std::uint8_t> meta{1, 2, 3, 4, 5};
  std::vector<std::vector<std::uint8_t>> arrays{
      std::vector<std::uint8_t>(1000, 7), {}, std::vector<std::uint8_t>(333, 9)};
  Saved() {
    for (std::size_t i = 0; i < arrays[0].size(); ++i) arrays[0][i] = static_cast<std::uint8_t>(i);
  }
  Status save(FileCheckpoints& f) const {
    std::vector<std::span<const std::uint8_t>> a(arrays.begin(), arrays.end());
    return f.save(meta, a, {"level 3", 42});
  }
};

struct Notes {
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& l) { lines.push_back(l); };
  }
  bool has(std::string_view s) const {
    for (const auto& l : lines)
      if (l.find(s) != std::string::npos) return true;
    return false;
  }
};

// Reads the arrays back into buffers of the saved sizes.
Status load_into(FileCheckpoints& f, std::vector<std::vector<std::uint8_t>>& out,
                 const Saved& like) {
  out.clear();
  for (const auto& a : like.arrays) out.emplace_back(a.size(), 0);
  std::vector<std::span<std::uint8_t>> spans(out.begin(), out.end());
  return f.load_arrays(spans);
}

TEST(FileCheckpoints, WhatIsSavedReadsBackExactly) {
  test::TempDir dir;
  const Saved s;
  Notes notes;
  FileCheckpoints w(dir / "x.ckpt", "key one", 1, notes.sink());
  ASSERT_TRUE(s.save(w));
  w.flush();  // the commit runs on a thread of its own
  EXPECT_EQ(w.saves(), 1);
  FileCheckpoints r(dir / "x.ckpt", "key one", 1, notes.sink());
  const auto meta = r.load_meta();
  ASSERT_TRUE(meta);
  EXPECT_EQ(*meta, s.meta);
  std::vector<std::vector<std::uint8_t>> back;
  ASSERT_TRUE(load_into(r, back, s));
  EXPECT_EQ(back, s.arrays);
  EXPECT_TRUE(notes.has("resuming from checkpoint x.ckpt"));
  // A second save replaces the first, atomically: no temporary file is left.
  Saved t;
  t.meta = {9};
  ASSERT_TRUE(t.save(w));
  w.flush();
  FileCheckpoints r2(dir / "x.ckpt", "key one", 1, {});
  EXPECT_EQ(r2.load_meta().value(), t.meta);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(FileCheckpoints, MissingForeignDamagedOrTruncatedFilesAreNotUsed) {
  test::TempDir dir;
  const Saved s;
  const auto path = dir / "x.ckpt";
  {
    Notes notes;
    FileCheckpoints none(path, "k", 1, notes.sink());
    EXPECT_FALSE(none.load_meta());
    EXPECT_TRUE(notes.lines.empty());  // nothing to say: a first build
  }
  FileCheckpoints w(path, "k", 1, {});
  ASSERT_TRUE(s.save(w));
  w.flush();
  {
    Notes notes;
    FileCheckpoints other(path, "another segment", 1, notes.sink());
    EXPECT_FALSE(other.load_meta());
    EXPECT_TRUE(notes.has("it belongs to 'k'")) << notes.lines.at(0);
  }
  const std::string good = io::read_file(path).value();
  // Every byte changed in turn (a sample: every 7th) is caught, and every truncation.
  for (std::size_t i = 0; i < good.size(); i += 7) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    ASSERT_TRUE(io::write_file_atomic(path, bad));
    Notes notes;
    FileCheckpoints r(path, "k", 1, notes.sink());
    EXPECT_FALSE(r.load_meta()) << "byte " << i;
    EXPECT_TRUE(notes.has("not used")) << "byte " << i;
  }
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{40}, good.size() - 1}) {
    ASSERT_TRUE(io::write_file_atomic(path, good.substr(0, n)));
    FileCheckpoints r(path, "k", 1, {});
    EXPECT_FALSE(r.load_meta()) << n << " bytes";
  }
  // Arrays of other sizes than saved: refused, nothing copied.
  ASSERT_TRUE(io::write_file_atomic(path, good));
  FileCheckpoints r(path, "k", 1, {});
  ASSERT_TRUE(r.load_meta());
  Saved other;
  other.arrays[2].resize(10);
  std::vector<std::vector<std::uint8_t>> back;
  EXPECT_FALSE(load_into(r, back, other));
}

TEST(FileCheckpoints, AFailedSaveLeavesTheBuildGoingWithoutCheckpoints) {
  test::TempDir dir;
  Notes notes;
  FileCheckpoints f(dir / "no-such-dir" / "x.ckpt", "k", 0.001, notes.sink());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(f.due());
  EXPECT_TRUE(Saved{}.save(f));  // success: the kernel goes on
  EXPECT_TRUE(notes.has("checkpoint not saved, the build goes on without checkpoints"));
  EXPECT_EQ(f.saves(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(f.due());  // and does not try again
}

// While a save is being committed no other is due; the destructor waits for the commit.
TEST(FileCheckpoints, ASaveIsCommittedBeforeTheNextAndBeforeTheEnd) {
  test::TempDir dir;
  {
    FileCheckpoints f(dir / "x.ckpt", "k", 0.001, {});
    ASSERT_TRUE(Saved{}.save(f));
    ASSERT_TRUE(Saved{}.save(f));  // waits for the first commit
    f.flush();
    EXPECT_EQ(f.saves(), 2);
    ASSERT_TRUE(Saved{}.save(f));
  }
  FileCheckpoints r(dir / "x.ckpt", "k", 1, {});
  EXPECT_EQ(r.load_meta().value(), Saved{}.meta);
}

TEST(FileCheckpoints, SavesAreSpacedByTheInterval) {
  test::TempDir dir;
  FileCheckpoints never(dir / "a.ckpt", "k", 0, {});
  EXPECT_FALSE(never.due());
  FileCheckpoints hour(dir / "b.ckpt", "k", 3600, {});
  EXPECT_FALSE(hour.due());
  FileCheckpoints often(dir / "c.ckpt", "k", 0.001, {});
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(often.due());
}

}  // namespace
}  // namespace retra
