// EntryOrder's checks and set-up (see entry_order.hpp). Thread safety: reentrant.
#include "src/format/entry_order.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace retra::format {

Result<EntryOrder> EntryOrder::make(std::vector<std::uint64_t> radices,
                                    std::vector<std::uint8_t> stored, std::uint64_t entries) {
  if (radices.size() > kMaxOrderDigits)
    return Error(Errc::invalid_argument, fmt::format("an entry order has at most {} digits, not {}",
                                                     kMaxOrderDigits, radices.size()));
  if (stored.size() != radices.size())
    return Error(Errc::invalid_argument, "an entry order needs one stored place per digit");
  std::vector<bool> seen(radices.size(), false);
  for (const auto d : stored) {
    if (d >= radices.size() || seen[d])
      return Error(Errc::invalid_argument, "an entry order's stored digits are not a permutation");
    seen[d] = true;
  }
  std::uint64_t product = 1;
  for (const auto r : radices) {
    if (r == 0 || __builtin_mul_overflow(product, r, &product))
      return Error(Errc::invalid_argument, "an entry order's radices overflow or are zero");
  }
  if (!radices.empty() && product != entries)
    return Error(Errc::invalid_argument,
                 fmt::format("an entry order's radices multiply to {}, the segment has {} entries",
                             product, entries));
  EntryOrder o;
  o.radices_ = std::move(radices);
  o.stored_ = std::move(stored);
  const std::size_t k = o.radices_.size();
  o.index_place_.assign(k, 1);
  o.stored_place_.assign(k, 1);
  for (std::size_t j = k; j-- > 1;) o.index_place_[j - 1] = o.index_place_[j] * o.radices_[j];
  std::uint64_t place = 1;
  for (std::size_t t = k; t-- > 0;) {
    o.stored_place_[o.stored_[t]] = place;
    place *= o.radices_[o.stored_[t]];
  }
  o.narrow_ = product < (std::uint64_t{1} << 32);
  if (o.narrow_)
    for (const auto r : o.radices_) o.radices32_.push_back(static_cast<std::uint32_t>(r));
  // Digits of radix 1 never move anything: their place does not matter.
  o.identity_ = true;
  std::size_t expect = 0;
  for (const auto d : o.stored_) {
    if (o.radices_[d] == 1) continue;
    while (expect < k && o.radices_[expect] == 1) ++expect;
    if (d != expect) o.identity_ = false;
    ++expect;
  }
  return o;
}

EntryOrder::Walk::Walk(const EntryOrder& o, std::uint64_t start, bool by_index) {
  const std::size_t k = o.radices_.size();
  radix_ = o.radices_;
  digit_.assign(k, 0);
  if (by_index) {
    for (std::size_t j = 0; j < k; ++j) order_.push_back(static_cast<std::uint8_t>(j));
    other_place_ = o.stored_place_;
  } else {
    order_ = o.stored_;
    other_place_ = o.index_place_;
  }
  if (k == 0) {  // no digits: positions are indices
    other_ = start;
    return;
  }
  // The digits of start, least significant first in the walked order.
  for (std::size_t t = k; t-- > 0;) {
    const std::size_t j = order_[t];
    digit_[j] = start % radix_[j];
    start /= radix_[j];
    other_ += digit_[j] * other_place_[j];
  }
}

EntryOrder::Tiles::Tiles(const EntryOrder& o, bool by_stored) {
  const std::size_t k = o.radices_.size();
  // The fastest digit of each side that moves anything (radix 1 digits have no place).
  std::size_t l = k, s = k;
  for (std::size_t j = k; j-- > 0;)
    if (o.radices_[j] > 1) {
      l = j;
      break;
    }
  for (std::size_t t = k; t-- > 0;)
    if (o.radices_[o.stored_[t]] > 1) {
      s = o.stored_[t];
      break;
    }
  if (o.identity_ || l == k || s == k || l == s) return;
  if (o.radices_[l] < kMinRadix || o.radices_[s] < kMinRadix) return;
  r_index_ = o.radices_[l];
  stored_place_ = o.stored_place_[l];
  r_stored_ = o.radices_[s];
  index_place_ = o.index_place_[s];
  count_ = 1;
  for (std::size_t t = 0; t < k; ++t) {
    const std::size_t j = by_stored ? o.stored_[t] : t;
    if (j == l || j == s || o.radices_[j] == 1) continue;
    rest_.push_back({o.radices_[j], o.index_place_[j], o.stored_place_[j]});
    count_ *= o.radices_[j];
  }
  usable_ = true;
}

std::string EntryOrder::describe() const {
  if (radices_.empty()) return {};
  return fmt::format("{} stored {}", fmt::join(radices_, "x"), fmt::join(stored_, ","));
}

}  // namespace retra::format
