// Binomial coefficients for the combinatorial indexers, computed at compile time.
// Thread safety: constexpr data and pure functions only.
#pragma once

#include <cstdint>

namespace retra {

// C(n, k) for n <= 66 without overflow (C(66, 33) < 2^63); 0 when k > n.
constexpr std::uint64_t binomial(unsigned n, unsigned k) noexcept {
  if (k > n) return 0;
  if (k > n - k) k = n - k;
  __extension__ using Wide = unsigned __int128;  // r * (n - k + i) can exceed 64 bits
  Wide r = 1;
  for (unsigned i = 1; i <= k; ++i) r = r * (n - k + i) / i;  // exact at every step
  return static_cast<std::uint64_t>(r);
}

static_assert(binomial(59, 11) == 279'871'768'995ULL);  // 64-bit exact near the top of its range
static_assert(binomial(23, 11) == 1'352'078ULL);        // 12 stones (spec)

}  // namespace retra
