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
};

struct VerifyFailure {
  std::string segment;
  std::optional<std::uint64_t> block;
  std::optional<std::uint64_t> index;
  std::string position;
  std::optional<int> stored, expected;
  std::string message;
};

struct VerifySegment {
  std::string name;
  std::uint64_t positions = 0;
  double seconds = 0;
};

struct VerifyReport {
  bool ok = true;
  std::vector<VerifySegment> segments;
  std::optional<VerifyFailure> failure;
  double seconds = 0;
};

// The failure for an error met while reading `segment` (with its block, when a block is damaged).
VerifyFailure failure_from_error(const std::string& segment, const Error& e);

// Checks every block checksum, every stored value against the best over its moves (children read
// back from the files), and the manifest's statistics. A report with ok = false names the first
// wrong segment, block and position; an Error only when the check cannot even start.
Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt);

}  // namespace retra
