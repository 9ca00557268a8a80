// Static order-1 rANS entropy coder, the segment format's second block codec (docs/FORMAT.md):
// one model per segment gives each byte's probability given the byte before it, and every block
// is coded on its own with that model, so a probe still decodes exactly one block.
// Thread safety: a Model is immutable once built; encode/decode are reentrant.
//
// Why: database values are noisy small numbers with few long repeats (Awari scores), where
// zstd's order-0 literal coding stays near the order-0 entropy; conditioning on the previous
// value is worth ~20% there (20 stones: order-0 4.22, order-1 3.34 bits per position), at a
// fraction of zstd -19's compression time. Where values repeat in long runs (xiangqi's draws)
// zstd stays better; the writer keeps whichever codec is smaller for each segment.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "retra/error.hpp"

namespace retra::format::rans {

inline constexpr int kProbBits = 12;
inline constexpr std::uint32_t kProbScale = 1u << kProbBits;
// Context of a block's first byte: a block must decode without the block before it.
inline constexpr std::uint8_t kStartContext = 0;

// Per context (previous byte) that occurs: the quantized frequencies of the next byte, their
// cumulative starts, and the slot table the decoder indexes with the state's low bits.
//
//   context_slot[prev] --> k (or -1: context never occurs)
//   freq[k * 256 + s], start[k * 256 + s]    uint16, sum over s of freq == kProbScale
//   slot[k * kProbScale + slot]              uint32: symbol (bits 0-7), frequency - 1 (8-19),
//                                            the slot's offset in the symbol's range (20-31)
class Model {
 public:
  // Order-1 statistics: counts[prev * 256 + byte], 65,536 counters.
  using Counts = std::vector<std::uint64_t>;
  // Adds one block's statistics (its first byte in kStartContext).
  static void count_block(std::span<const std::uint8_t> block, Counts& counts);
  // Quantizes counts (at least one nonzero) into a model.
  static Model from_counts(const Counts& counts);
  // count_block over data cut into blocks of block_bytes, then from_counts.
  static Model build(std::span<const std::uint8_t> data, std::uint64_t block_bytes);
  // The serialized model: u16 contexts, then per context u8 context, u16 symbols (1..256) and
  // per symbol u8 symbol, u16 frequency (little-endian). Validated on parsing: every context's
  // frequencies sum to kProbScale, no context or symbol repeats, nothing trails.
  std::vector<std::uint8_t> serialize() const;
  static Result<Model> parse(std::span<const std::uint8_t> bytes);

  std::size_t contexts() const noexcept { return contexts_; }
  // Bits the model spends on data with these statistics (the order-1 cross entropy at
  // kProbBits precision), before each block's 4-byte state flush; infinity if some byte has no
  // code under this model.
  double cost_bits(const Counts& counts) const;

  // Encodes one block. Returns false if a byte has no code under this model (a model built
  // from other data).
  bool encode(std::span<const std::uint8_t> in, std::vector<std::uint8_t>& out) const;
  // Decodes exactly out.size() bytes; false if `in` is not an encoding of that many bytes
  // under this model (every read is bounds-checked, so damaged input is never a crash).
  bool decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const;

 private:
  void finish();  // fills start and symbol from freq
  std::array<std::int16_t, 256> context_slot_{};
  std::size_t contexts_ = 0;
  std::vector<std::uint8_t> context_of_;  // k -> previous byte
  std::vector<std::uint16_t> freq_, start_;
  std::vector<std::uint32_t> slot_;
};

}  // namespace retra::format::rans
