// Fuzz target: the readers of files a user may hand us damaged: a manifest (JSON) and a segment
// file (header, block table, blocks). The first byte picks which; the rest is the file. Whatever
// opens must read every entry or fail with an error, never crash or read out of bounds.
// Thread safety: single-threaded (libFuzzer).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string_view>
#include <vector>

#include "fuzz_util.hpp"
#include "src/format/manifest.hpp"
#include "src/format/segment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using namespace retra;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    // Sealed (the checksum checked) and unsealed, so that the field checks behind the seal are
    // reached by inputs the fuzzer cannot checksum.
    (void)format::manifest_from_json(body, "fuzz");
    auto m = format::manifest_from_json(body, "fuzz", /*check_seal=*/false);
    if (m) {
      // What parses writes back to a manifest that parses to the same records.
      auto again = format::manifest_from_json(format::manifest_text(*m), "fuzz");
      FUZZ_CHECK(again && again->segments.size() == m->segments.size() && again->game == m->game &&
                 again->building == m->building);
    }
    return 0;
  }
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("retra-fuzz-segment-" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
  }
  auto r = format::SegmentReader::open(path, 4);
  if (r) {
    const auto& info = (*r)->info();
    // A header may claim any size: read a bounded number of entries, through both paths.
    if (info.entry_bytes == 1 && info.entries <= (1u << 20)) {
      std::vector<std::uint8_t> all(info.entries);
      (void)(*r)->read_all(all, 1);
      for (std::uint64_t i = 0; i < info.entries; i += 1 + info.entries / 64)
        (void)(*r)->byte_at(i);
    }
  }
  std::filesystem::remove(path);
  return 0;
}
