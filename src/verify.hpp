// Reports of the one-pass verifiers (every game has its own, sharing nothing with the kernels but
// move generation). Thread safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "src/progress.hpp"

namespace retra {

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

}  // namespace retra
