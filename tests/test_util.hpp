// Helpers shared by the tests: temporary directories, build requests, reading whole segments.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "src/build/build.hpp"
#include "src/database.hpp"
#include "src/format/segment.hpp"
#include "src/io/file.hpp"

namespace retra::test {

// The predecessor lists of an explicit graph of n nodes given by its (child, parent) edges, for
// the tests' reference solvers: the parents of node c are of(c), all lists in one array (a
// counting sort of the edges), where a vector per node cost the solvers most of their time.
class Predecessors {
 public:
  Predecessors(std::size_t n, std::span<const std::pair<std::uint32_t, std::uint32_t>> edges)
      : at_(n + 1, 0), parents_(edges.size()) {
    for (const auto& e : edges) ++at_[e.first + 1];
    for (std::size_t i = 0; i < n; ++i) at_[i + 1] += at_[i];
    std::vector<std::uint32_t> fill(at_.begin(), at_.end() - 1);
    for (const auto& e : edges) parents_[fill[e.first]++] = e.second;
  }
  std::span<const std::uint32_t> of(std::size_t child) const {
    return {parents_.data() + at_[child], parents_.data() + at_[child + 1]};
  }

 private:
  std::vector<std::uint32_t> at_, parents_;
};

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "retra-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& s) const { return path_ / s; }

 private:
  std::filesystem::path path_;
};

// A build of `targets` of `game` into `db` with the suite's defaults (two threads).
inline BuildRequest build_request(std::string game, std::vector<std::string> targets,
                                  const std::filesystem::path& db) {
  BuildRequest r;
  r.game = std::move(game);
  r.targets = std::move(targets);
  r.db = db;
  r.threads = 2;
  return r;
}

inline std::vector<std::int8_t> read_segment(const Database& db, const std::string& name) {
  auto seg = db.segment(name);
  EXPECT_TRUE(seg) << (seg ? "" : seg.error().message());
  if (!seg) return {};
  std::vector<std::int8_t> v((*seg)->info().entries);
  auto s = (*seg)->read_all({reinterpret_cast<std::uint8_t*>(v.data()), v.size()}, 2);
  EXPECT_TRUE(s) << (s ? "" : s.error().message());
  return v;
}

// Replaces a committed segment by `values` (and `far`, values beyond a byte; valid file,
// checksums and manifest entry): a wrong value that only the verifier can find.
// moves: the don't-care flag's moves to record instead of the file's (kDontCareCaptures).
inline void rewrite_segment(Database& db, const std::string& name,
                            const std::vector<std::int8_t>& values,
                            std::span<const format::FarValue> far = {},
                            std::optional<format::DontCareMoves> moves = {}) {
  auto seg = db.segment(name);
  ASSERT_TRUE(seg) << seg.error().message();
  const format::SegmentInfo info = (*seg)->info();
  format::SegmentRecord rec = *db.manifest().find(name);
  format::WriteOptions wo;
  wo.far = far;
  wo.class_half = (*seg)->class_half();  // the values read back hold its classes
  format::DontCare keep;                 // and its don't-care entries' bytes, as stored
  keep.moves = moves.value_or((*seg)->dont_care_moves());
  if ((*seg)->dont_care()) wo.dont_care = &keep;
  auto w = format::write_segment(
      db.dir() / rec.file, info,  // the manifest's file (`recompress` may have named it .z.rseg)
      {reinterpret_cast<const std::uint8_t*>(values.data()), values.size()}, wo);
  ASSERT_TRUE(w) << w.error().message();
  rec.file_bytes = w->file_bytes;
  rec.header_checksum = w->header_checksum;
  ASSERT_TRUE(db.commit_segment(rec));
}

// Overwrites a byte in the middle of block b of a segment file (its checksum no longer matches).
inline void damage_block(const std::filesystem::path& path, std::uint64_t b) {
  std::uint64_t offset;
  {
    auto m = io::MappedFile::open(path);
    ASSERT_TRUE(m) << m.error().message();
    format::BlockEntry e;
    std::memcpy(&e, m->bytes().data() + sizeof(format::SegmentHeader) + b * sizeof e, sizeof e);
    offset = e.offset + e.compressed_bytes / 2;
  }
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put('\x7f');
}

// Every segment file in `a` equals its namesake in `b`, byte for byte; returns how many there are.
inline int expect_same_segment_files(const std::filesystem::path& a, const std::filesystem::path& b,
                                     const std::string& what) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(a)) {
    if (e.path().extension() != ".rseg") continue;
    ++files;
    EXPECT_EQ(io::read_file(e.path()).value(), io::read_file(b / e.path().filename()).value())
        << what << " " << e.path().filename();
  }
  return files;
}

}  // namespace retra::test
