// Verifying databases, for every game: the options and report of the one-pass verifier, and
// verify() itself, which finds the database's module and runs the generic driver
// (src/verify/driver.hpp). The verifier shares nothing with the kernels but the rules and the
// index. Thread safety: verify() runs opt.threads threads; reports are value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "src/progress.hpp"

namespace retra {

class Database;

struct VerifyOptions {
  int threads = 1;
  Progress* progress = nullptr;
  // Also prove the values are the game's values where the one-pass check cannot (score games,
  // whose equations have other solutions on cycles): each such segment is recomputed from its
  // verified supporting segments by the kernel its build did not use, and compared entry by entry.
  bool full = false;
  // Check only the segments these select (empty: all). A pattern selects a segment whose name
  // equals it, begins with it followed by '_' or '.' (a table's segments), or matches it as a
  // shell glob. The segments they read are read, not checked: the result holds if those are
  // right (docs/VERIFY.md). A pattern that selects nothing is an error.
  std::vector<std::string> only{};
};

struct VerifyFailure {
  std::string segment;
  std::optional<std::uint64_t> block;
  std::optional<std::uint64_t> index;
  std::string position;
  std::optional<int> stored, expected;
  std::string message;
  // Positions of the segment whose stored value disagrees with their moves (0 for file errors).
  // One wrong value also upsets its parents; the failure names a position whose children all
  // agree (so its own value is the wrong one) where there is one.
  std::uint64_t wrong_positions = 0;
};

struct VerifySegment {
  std::string name;
  std::uint64_t positions = 0;
  double seconds = 0;
  // What proved the values: "one-pass" (complete for distance values, docs/VERIFY.md), or
  // "one-pass+<kernel>" when --full recomputed the segment with that kernel.
  std::string check;
};

struct VerifyReport {
  bool ok = true;
  std::vector<VerifySegment> segments;
  std::optional<VerifyFailure> failure;
  double seconds = 0;
  bool full = false;
  // With VerifyOptions::only: the supporting segments read but not checked.
  std::vector<std::string> unchecked;
};

// The failure for an error met while reading `segment` (with its block, when a block is damaged).
VerifyFailure failure_from_error(const std::string& segment, const Error& e);

// Checks every block checksum, every stored value against the best over its moves (children read
// back from the files), and the manifest's statistics; with opt.full also recomputes score
// segments with the other kernel (what each mode proves: docs/VERIFY.md). A report with
// ok = false names the first wrong segment and in it a wrong block and position; an Error only
// when the check cannot even start.
Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt);

}  // namespace retra
