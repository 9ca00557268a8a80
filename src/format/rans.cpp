// Static order-1 rANS (docs/FORMAT.md, "rans-o1"). Thread safety: see the header.
// The coder is byte-renormalizing rANS with a 32-bit state in [2^23, 2^31): the encoder walks
// a block backwards and writes bytes backwards, so the decoder reads forwards.
#include "src/format/rans.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace retra::format::rans {

namespace {

constexpr std::uint32_t kLow = 1u << 23;

// Quantizes counts (sum > 0) to frequencies summing to kProbScale, every occurring byte >= 1.
void quantize(const std::uint64_t* count, std::uint16_t* freq) {
  std::uint64_t total = 0;
  for (int s = 0; s < 256; ++s) total += count[s];
  std::int64_t sum = 0;
  for (int s = 0; s < 256; ++s) {
    if (!count[s]) {
      freq[s] = 0;
      continue;
    }
    const auto f = static_cast<std::int64_t>(
        std::llround(static_cast<double>(count[s]) * kProbScale / static_cast<double>(total)));
    freq[s] = static_cast<std::uint16_t>(std::max<std::int64_t>(1, f));
    sum += freq[s];
  }
  // Rounding leaves the sum a little off: take from (or give to) the byte where a step costs
  // the fewest bits, count * log(f / (f - 1)); at most 256 steps of 256.
  while (sum != kProbScale) {
    int best = -1;
    double best_cost = 0;
    for (int s = 0; s < 256; ++s) {
      if (!count[s] || (sum > kProbScale && freq[s] <= 1)) continue;
      const double f = freq[s];
      const double c = sum > kProbScale ? static_cast<double>(count[s]) * std::log2(f / (f - 1))
                                        : -static_cast<double>(count[s]) * std::log2((f + 1) / f);
      if (best < 0 || c < best_cost) {
        best = s;
        best_cost = c;
      }
    }
    if (sum > kProbScale) {
      --freq[best];
      --sum;
    } else {
      ++freq[best];
      ++sum;
    }
  }
}

std::uint16_t load16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
void store16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}

}  // namespace

void Model::count_block(std::span<const std::uint8_t> block, Counts& counts) {
  counts.resize(256 * 256, 0);
  std::uint8_t prev = kStartContext;
  for (const std::uint8_t b : block) {
    ++counts[prev * 256u + b];
    prev = b;
  }
}

Model Model::from_counts(const Counts& count) {
  Model m;
  m.context_slot_.fill(-1);
  for (int c = 0; c < 256; ++c) {
    const std::uint64_t* row = &count[c * 256u];
    if (std::none_of(row, row + 256, [](std::uint64_t n) { return n != 0; })) continue;
    m.context_slot_[c] = static_cast<std::int16_t>(m.contexts_++);
    m.context_of_.push_back(static_cast<std::uint8_t>(c));
    m.freq_.resize(m.contexts_ * 256);
    quantize(row, &m.freq_[(m.contexts_ - 1) * 256]);
  }
  m.finish();
  return m;
}

Model Model::build(std::span<const std::uint8_t> data, std::uint64_t block_bytes) {
  Counts counts(256 * 256, 0);
  for (std::uint64_t at = 0; at < data.size(); at += block_bytes)
    count_block(data.subspan(at, std::min<std::uint64_t>(block_bytes, data.size() - at)), counts);
  return from_counts(counts);
}

void Model::finish() {
  start_.assign(contexts_ * 256, 0);
  slot_.assign(contexts_ * kProbScale, 0);
  for (std::size_t k = 0; k < contexts_; ++k) {
    std::uint32_t at = 0;
    for (std::uint32_t s = 0; s < 256; ++s) {
      const std::uint32_t f = freq_[k * 256 + s];
      start_[k * 256 + s] = static_cast<std::uint16_t>(at);
      for (std::uint32_t j = 0; j < f; ++j)
        slot_[k * kProbScale + at + j] = s | (f - 1) << 8 | j << 20;
      at += f;
    }
  }
}

std::vector<std::uint8_t> Model::serialize() const {
  std::vector<std::uint8_t> out;
  store16(out, static_cast<std::uint16_t>(contexts_));
  for (std::size_t k = 0; k < contexts_; ++k) {
    out.push_back(context_of_[k]);
    const std::uint16_t* f = &freq_[k * 256];
    store16(out, static_cast<std::uint16_t>(std::count_if(f, f + 256, [](auto x) { return x; })));
    for (int s = 0; s < 256; ++s)
      if (f[s]) {
        out.push_back(static_cast<std::uint8_t>(s));
        store16(out, f[s]);
      }
  }
  return out;
}

Result<Model> Model::parse(std::span<const std::uint8_t> bytes) {
  auto bad = [](const char* what) {
    return Error(Errc::corrupt, std::string("rANS model is damaged: ") + what);
  };
  std::size_t at = 0;
  auto need = [&](std::size_t n) { return at + n <= bytes.size(); };
  if (!need(2)) return bad("shorter than its context count");
  Model m;
  m.context_slot_.fill(-1);
  const std::size_t contexts = load16(&bytes[at]);
  at += 2;
  if (contexts == 0 || contexts > 256) return bad("context count out of range");
  m.freq_.assign(contexts * 256, 0);
  for (std::size_t k = 0; k < contexts; ++k) {
    if (!need(3)) return bad("truncated context");
    const std::uint8_t c = bytes[at];
    const std::size_t symbols = load16(&bytes[at + 1]);
    at += 3;
    if (m.context_slot_[c] >= 0) return bad("a context repeats");
    if (symbols == 0 || symbols > 256 || !need(3 * symbols)) return bad("bad symbol count");
    m.context_slot_[c] = static_cast<std::int16_t>(k);
    m.context_of_.push_back(c);
    std::uint32_t sum = 0;
    for (std::size_t j = 0; j < symbols; ++j, at += 3) {
      const std::uint8_t s = bytes[at];
      const std::uint16_t f = load16(&bytes[at + 1]);
      if (f == 0 || m.freq_[k * 256 + s] != 0) return bad("zero or repeated frequency");
      m.freq_[k * 256 + s] = f;
      sum += f;
    }
    if (sum != kProbScale) return bad("frequencies do not sum to the scale");
  }
  if (at != bytes.size()) return bad("trailing bytes");
  m.contexts_ = contexts;
  m.finish();
  return m;
}

double Model::cost_bits(const Counts& counts) const {
  double bits = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (!counts[i]) continue;
    const int k = context_slot_[i / 256];
    const std::uint16_t f = k < 0 ? 0 : freq_[static_cast<std::size_t>(k) * 256 + i % 256];
    if (!f) return std::numeric_limits<double>::infinity();
    bits += static_cast<double>(counts[i]) * (kProbBits - std::log2(static_cast<double>(f)));
  }
  return bits;
}

bool Model::encode(std::span<const std::uint8_t> in, std::vector<std::uint8_t>& out) const {
  // Bytes come out last-first; they are reversed at the end so the decoder reads forwards.
  out.clear();
  out.reserve(in.size() / 2 + 16);
  std::uint32_t x = kLow;
  for (std::size_t i = in.size(); i-- > 0;) {
    const std::uint8_t prev = i == 0 ? kStartContext : in[i - 1];
    const int k = context_slot_[prev];
    if (k < 0) return false;
    const std::uint32_t f = freq_[k * 256u + in[i]];
    if (!f) return false;
    const std::uint32_t x_max = ((kLow >> kProbBits) << 8) * f;
    while (x >= x_max) {
      out.push_back(static_cast<std::uint8_t>(x));
      x >>= 8;
    }
    x = ((x / f) << kProbBits) + (x % f) + start_[k * 256u + in[i]];
  }
  for (int j = 0; j < 4; ++j) {
    out.push_back(static_cast<std::uint8_t>(x));
    x >>= 8;
  }
  std::reverse(out.begin(), out.end());
  return true;
}

bool Model::decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const {
  if (in.size() < 4) return false;
  const std::uint8_t* p = in.data();
  const std::uint8_t* const end = p + in.size();
  // The encoder flushed its final state most significant byte first (after the reversal).
  std::uint32_t x =
      (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
  p += 4;
  int k = context_slot_[kStartContext];
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (x < kLow || k < 0) return false;  // only damaged input leaves the state's range
    // One load per byte: symbol, frequency and the slot's offset in the symbol's range.
    const std::uint32_t e =
        slot_[static_cast<std::size_t>(k) << kProbBits | (x & (kProbScale - 1))];
    const std::uint8_t s = static_cast<std::uint8_t>(e);
    x = ((e >> 8 & (kProbScale - 1)) + 1) * (x >> kProbBits) + (e >> 20);
    if (end - p >= 2) {
      // At most two bytes per symbol (a frequency >= 1/4096 costs <= 12 bits); without
      // branches, since whether a byte is due is as random as the data.
      const bool a = x < kLow;
      x = a ? (x << 8 | p[0]) : x;
      p += a;
      const bool b = x < kLow;
      x = b ? (x << 8 | p[0]) : x;
      p += b;
    } else {
      while (x < kLow && p != end) x = (x << 8) | *p++;
    }
    out[i] = s;
    k = context_slot_[s];
  }
  // A whole encoding ends exactly where the encoder started: state kLow, every byte read.
  return x == kLow && p == end;
}

}  // namespace retra::format::rans
