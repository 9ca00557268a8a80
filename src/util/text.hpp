// Number formatting for reports. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace retra {

// 1234567 -> "1,234,567".
inline std::string grouped(std::uint64_t v) {
  const std::string d = std::to_string(v);
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) s += ',';
    s += d[i];
  }
  return s;
}

}  // namespace retra
