// Segment writer and reader (docs/FORMAT.md). Thread safety: see the header.
#include "src/format/segment.hpp"

#include <omp.h>
#include <xxhash.h>
#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "src/format/rans.hpp"
#include "src/memory.hpp"

namespace retra::format {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kFarRowBytes = 12;  // u64 index, u32 value

template <std::size_t N>
Status put_field(char (&dst)[N], const std::string& s, std::string_view field) {
  if (s.size() >= N)
    return Error(Errc::internal,
                 fmt::format("segment {} '{}' is longer than {} bytes", field, s, N - 1));
  std::memset(dst, 0, N);
  std::memcpy(dst, s.data(), s.size());
  return {};
}

template <std::size_t N>
std::string get_field(const char (&src)[N]) {
  return std::string(src, strnlen(src, N));
}

std::uint64_t header_hash(const SegmentHeader& h) {
  return XXH3_64bits(&h, offsetof(SegmentHeader, header_checksum));
}

}  // namespace

std::string_view codec_name(Codec c) noexcept {
  switch (c) {
    case Codec::zstd:
      return "zstd";
    case Codec::zstd_dict:
      return "zstd-dict";
    case Codec::rans_o1:
      return "rans-o1";
  }
  return "unknown";
}

std::string_view class_half_name(ClassHalf h) noexcept {
  switch (h) {
    case ClassHalf::none:
      return "none";
    case ClassHalf::lower:
      return "lower";
    case ClassHalf::upper:
      return "upper";
  }
  return "unknown";
}

Result<ClassHalfChoice> parse_class_half_choice(std::string_view text) {
  if (text == "auto") return ClassHalfChoice::automatic;
  if (text == "none") return ClassHalfChoice::none;
  if (text == "lower") return ClassHalfChoice::lower;
  if (text == "upper") return ClassHalfChoice::upper;
  return Error(Errc::invalid_argument,
               fmt::format("class half '{}': use auto, none, lower or upper", text));
}

std::string_view dont_care_moves_name(DontCareMoves m) noexcept {
  return m == DontCareMoves::captures ? "captures" : "conversions";
}

Result<DontCareMoves> parse_dont_care_moves(std::string_view text) {
  if (text == "captures") return DontCareMoves::captures;
  if (text == "conversions") return DontCareMoves::conversions;
  return Error(Errc::invalid_argument,
               fmt::format("don't-care moves '{}': use captures or conversions", text));
}

ClassHalf choose_class_half(std::span<const std::uint8_t> data,
                            const std::array<std::uint8_t, 256>& classes) {
  // 16 runs of 256 KiB per half: enough to tell halves apart whose savings differ by a few
  // percent, a few tens of milliseconds against a write of seconds.
  constexpr std::uint64_t kRuns = 16, kRun = 256 << 10;
  const std::uint64_t half = data.size() / 2;
  std::vector<std::uint8_t> plain, classed, out(ZSTD_compressBound(kRun));
  std::uint64_t saved[2] = {0, 0}, bytes[2] = {0, 0};
  for (int h = 0; h < 2; ++h) {
    const std::uint64_t base = h ? half : 0, len = std::min(kRun, half);
    for (std::uint64_t r = 0; r < kRuns && len; ++r) {
      const std::uint64_t first = base + (half - len) * r / std::max<std::uint64_t>(1, kRuns - 1);
      plain.assign(data.begin() + static_cast<std::ptrdiff_t>(first),
                   data.begin() + static_cast<std::ptrdiff_t>(first + len));
      classed.resize(plain.size());
      for (std::size_t i = 0; i < plain.size(); ++i) classed[i] = classes[plain[i]];
      const std::size_t a = ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 3);
      const std::size_t b =
          ZSTD_compress(out.data(), out.size(), classed.data(), classed.size(), 3);
      if (ZSTD_isError(a) || ZSTD_isError(b)) continue;
      bytes[h] += a;
      if (a > b) saved[h] += a - b;
    }
  }
  // Less than 1% of the half's bytes: its distances cost nothing worth a search per probe.
  const int h = saved[1] > saved[0] ? 1 : 0;
  if (saved[h] * 100 < bytes[h]) return ClassHalf::none;
  return h ? ClassHalf::upper : ClassHalf::lower;
}

ClassHalf resolve_class_half(ClassHalfChoice choice, std::span<const std::uint8_t> data,
                             const std::array<std::uint8_t, 256>& classes) {
  switch (choice) {
    case ClassHalfChoice::none:
      return ClassHalf::none;
    case ClassHalfChoice::lower:
      return ClassHalf::lower;
    case ClassHalfChoice::upper:
      return ClassHalf::upper;
    case ClassHalfChoice::automatic:
      break;
  }
  return choose_class_half(data, classes);
}

void store_class_half(std::span<std::uint8_t> data, ClassHalf half,
                      const std::array<std::uint8_t, 256>& classes, int threads) {
  if (half == ClassHalf::none) return;
  const std::uint64_t n = data.size() / 2, base = half == ClassHalf::upper ? n : 0;
  std::uint8_t* const p = data.data() + base;
#pragma omp parallel for schedule(static) num_threads(std::max(1, threads))
  for (std::uint64_t i = 0; i < n; ++i) p[i] = classes[p[i]];
}

Result<CodecChoice> parse_codec_choice(std::string_view text) {
  if (text == "auto") return CodecChoice::automatic;
  if (text == "zstd") return CodecChoice::zstd;
  if (text == "zstd-dict") return CodecChoice::zstd_dict;
  if (text == "rans-o1") return CodecChoice::rans_o1;
  return Error(Errc::invalid_argument,
               fmt::format("unknown codec '{}': use auto, zstd, zstd-dict or rans-o1", text));
}

Result<OrderChoice> parse_order_choice(std::string_view text) {
  if (text == "auto") return OrderChoice::automatic;
  if (text == "index") return OrderChoice::index;
  return Error(Errc::invalid_argument,
               fmt::format("unknown entry order '{}': use auto or index", text));
}

namespace {

// Per-thread zstd contexts: creating one per block costs more than decoding a small block.
struct ZstdContexts {
  ZSTD_CCtx* c = nullptr;
  ZSTD_DCtx* d = nullptr;
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
  ZSTD_CCtx* cctx() { return c ? c : (c = ZSTD_createCCtx()); }
  ZSTD_DCtx* dctx() { return d ? d : (d = ZSTD_createDCtx()); }
};
ZstdContexts& zstd_contexts() {
  thread_local ZstdContexts z;
  return z;
}

Error rule_mismatch(std::uint64_t index, std::uint8_t held, std::int16_t rule) {
  return Error(Errc::internal, fmt::format("entry {} holds {} but the rules give {}; it cannot be "
                                           "left to the rules",
                                           index, held, rule));
}

// Fills a block as the file stores it: mark(i) is 1 for an entry the rules answer, which takes
// the stored entry before it (the block's first stored entry at its start), so that it extends
// a run instead of breaking it; 2 for a don't-care entry (DontCare), which takes the byte stored
// before it where that ranks no higher than its own, else keeps its own; 0 otherwise. Returns
// how many rule entries it replaced.
template <class Mark>
std::uint64_t fill_entries(std::vector<std::uint8_t>& out, const Mark& mark, const DontCare& dc) {
  std::uint8_t fill = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (mark(i) != 1) {
      fill = out[i];
      break;
    }
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int m = mark(i);
    if (m == 1) {
      out[i] = fill;
      ++n;
    } else if (m == 2 && dc.rank[fill] <= dc.rank[out[i]]) {
      out[i] = fill;
    } else {
      fill = out[i];
    }
  }
  return n;
}

// fill_entries with rule entries only (is_rule(i)).
template <class IsRule>
std::uint64_t fill_rule_entries(std::vector<std::uint8_t>& out, const IsRule& is_rule) {
  static const DontCare kNone;  // no entry is marked 2: the ranks are never read
  return fill_entries(
      out, [&](std::size_t i) { return is_rule(i) ? 1 : 0; }, kNone);
}

// fill_rule_entries where mark[i] (0 or 1) says which entries the rules answer: the same bytes,
// 8 entries a step. In trials of entry orders every order's sample is filled, and there the
// byte loop took 7% of a KBPPvK build (perf): its branch on scattered holes mispredicts, and
// without the branch each entry waits for the one before it.
// A step fills a word's marked bytes from the nearest unmarked byte below them by a segmented
// scan in three shifts (1, 2, 4 bytes: each doubles the stretch a byte has looked back over);
// the bytes with no unmarked byte below them in the word take the last fill of the word before.
std::uint64_t fill_rule_marks(std::vector<std::uint8_t>& out, const std::uint8_t* mark) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  std::uint8_t* const o = out.data();
  const std::size_t size = out.size();
  std::size_t first = 0;
  while (first < size && mark[first]) ++first;
  std::uint8_t fill = first < size ? o[first] : 0;
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t marks;
    std::memcpy(&marks, mark + i, 8);
    if (marks == 0) {  // nothing to fill
      fill = o[i + 7];
      continue;
    }
    n += static_cast<std::uint64_t>(std::popcount(marks));
    std::uint64_t v;
    std::memcpy(&v, o + i, 8);
    std::uint64_t m = marks * 0xff;  // 0xff per byte still to fill
    for (const int s : {8, 16, 32}) {
      v = (v & ~m) | ((v << s) & m);
      m &= (m << s) | ((1ull << s) - 1);  // below the word: still open, for the fill to close
    }
    v = (v & ~m) | (fill * kOnes & m);
    std::memcpy(o + i, &v, 8);
    fill = static_cast<std::uint8_t>(v >> 56);
  }
  for (; i < size; ++i) {
    if (mark[i]) {
      o[i] = fill;
      ++n;
    } else {
      fill = o[i];
    }
  }
  return n;
}

// The block as the file stores it: data's bytes, with the entries the rules answer filled
// (fill_rule_entries). Returns the number of rule entries, or an error if one holds a value
// other than the rules'.
Result<std::uint64_t> prepare_block(std::span<const std::uint8_t> data, std::uint64_t first,
                                    const EntryRules* rules, std::vector<std::uint8_t>& out,
                                    std::vector<std::int16_t>& rule) {
  out.assign(data.begin(), data.end());
  if (!rules) return std::uint64_t{0};
  rule.resize(data.size());
  rules->rule_values(first, rule);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (rule[i] != EntryRules::kStored && out[i] != static_cast<std::uint8_t>(rule[i]))
      return rule_mismatch(first + i, out[i], rule[i]);
  return fill_rule_entries(out, [&](std::size_t i) { return rule[i] != EntryRules::kStored; });
}

// The estimated segment bytes under zstd at `level` (0 unless level > 0) and under order-1 rANS
// (0 unless with_rans), from prepared sample blocks standing for `scale` times their size. rANS is
// estimated exactly from the sample's statistics: its model, its per-block state, its cost in bits.
// compressed (optional, one per prepared block): a block's zstd bytes at `level`, taken as given
// where not empty and filled in where empty (zstd never writes an empty frame).
struct SizeEstimate {
  double zstd = 0, rans = 0;
};
Result<SizeEstimate> estimate_sizes(const std::vector<std::vector<std::uint8_t>>& prepared,
                                    int level, int threads, double scale, bool with_rans,
                                    std::vector<std::vector<std::uint8_t>>* compressed = nullptr) {
  assert(!compressed || compressed->size() == prepared.size());
  std::vector<std::size_t> zsize(prepared.size(), 0);
  int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : failed)
  for (std::size_t k = 0; k < (level > 0 ? prepared.size() : 0); ++k) {
    if (compressed && !(*compressed)[k].empty()) {
      zsize[k] = (*compressed)[k].size();
      continue;
    }
    thread_local std::vector<std::uint8_t> buf;
    buf.resize(ZSTD_compressBound(prepared[k].size()));
    const std::size_t c = ZSTD_compressCCtx(zstd_contexts().cctx(), buf.data(), buf.size(),
                                            prepared[k].data(), prepared[k].size(), level);
    if (ZSTD_isError(c)) {
      ++failed;
      continue;
    }
    zsize[k] = c;
    if (compressed)
      (*compressed)[k].assign(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(c));
  }
  if (failed) return Error(Errc::internal, "zstd failed on a sample block");
  SizeEstimate e;
  for (const auto z : zsize) e.zstd += static_cast<double>(z) * scale;
  if (with_rans) {
    rans::Model::Counts counts(256 * 256, 0);
    for (const auto& p : prepared) rans::Model::count_block(p, counts);
    const rans::Model m = rans::Model::from_counts(counts);
    e.rans = (m.cost_bits(counts) / 8 + 4.0 * static_cast<double>(prepared.size())) * scale +
             static_cast<double>(m.serialize().size());
  }
  return e;
}

// zstd decodes ~9x faster (docs/PERFORMANCE.md): rANS must save at least 2%.
bool rans_pays(const SizeEstimate& e) { return e.rans < 0.98 * e.zstd; }

// Trials of entry orders compress 64 pieces of a block's size (at most 256 Ki entries), one
// drawn from each 64th of the segment (order_trial_pieces), at no more than zstd -3: 4 MiB with
// 64 Ki-entry blocks, 16 MiB with 256 Ki or 1 Mi. Each order puts other positions into the same
// stored ranges, so a few large blocks would compare different parts of the index (4 blocks of 1 Mi
// misjudged xiangqi's KCPMKGMM by 40%); many pieces average that out. The ranking at -3 agreed
// with -19 on xiangqi's largest endgames, but not always with -9 elsewhere (two orders of one
// bench segment 0.7% apart at -3 are 4.0% apart at -9, and no level up to -7 ranks them as -9
// does). -9 trials saved 2.1% of the bench's DTZ bytes (0.3% of all its bytes) for 3.3 times the
// trials' time on the earlier, evenly spaced pieces, but 0.03% of the DTZ bytes for 3.6 times on
// the drawn ones (docs/PERFORMANCE.md, "Writing a segment").
constexpr int kOrderTrialLevel = 3;
constexpr std::uint64_t kOrderTrialPieces = 64;
constexpr std::uint64_t kOrderTrialPiece = 1u << 18;
// The codec of index order is chosen on about 4 MiB of whole blocks at the segment's level.
constexpr std::uint64_t kCodecTrialBytes = 4u << 20;
// Segments of fewer blocks keep index order: a few blocks save too little to pay for the trials
// and for the divisions every probe of an ordered file costs.
constexpr std::uint64_t kOrderMinBlocks = 4;

// Checks that every entry the rules answer holds the rules' value and marks it (one bit per
// entry, index order). In chunks of 64 Ki entries, so no two threads share a word.
Status mark_rule_entries(std::span<const std::uint8_t> data, const EntryRules& rules, int threads,
                         std::vector<std::uint64_t>& bits) {
  constexpr std::uint64_t kChunk = 1u << 16;
  const std::uint64_t n = data.size(), chunks = (n + kChunk - 1) / kChunk;
  const std::uint64_t words = (n + 63) / 64;
  // Where the rules are a bit set (KnownHoles), the bits are copied a word at a time and only
  // their entries checked: rule_values would write 2 bytes per entry to say the same.
  const auto zero = rules.zero_bits();
  const bool as_bits = zero.size() >= words;
  if (as_bits) {
    bits.assign(zero.begin(), zero.begin() + static_cast<std::ptrdiff_t>(words));
    if (n % 64) bits.back() &= (1ull << (n % 64)) - 1;
  } else {
    bits.assign(words, 0);
  }
  struct Mismatch {
    std::uint64_t index;
    std::int16_t rule;
  };
  // Chunk c's first entry that does not hold the rules' value; without the bits, marks the
  // chunk's rule entries up to it.
  auto check = [&](std::uint64_t c) -> std::optional<Mismatch> {
    const std::uint64_t first = c * kChunk, len = std::min(kChunk, n - first);
    if (as_bits) {
      for (std::uint64_t w = first / 64; w < (first + len + 63) / 64; ++w)
        for (std::uint64_t m = bits[w]; m; m &= m - 1) {
          const std::uint64_t x = w * 64 + static_cast<std::uint64_t>(std::countr_zero(m));
          if (data[x] != 0) return Mismatch{x, 0};
        }
      return std::nullopt;
    }
    thread_local std::vector<std::int16_t> rule;
    rule.resize(len);
    rules.rule_values(first, rule);
    for (std::uint64_t i = 0; i < len; ++i) {
      if (rule[i] == EntryRules::kStored) continue;
      if (data[first + i] != static_cast<std::uint8_t>(rule[i]))
        return Mismatch{first + i, rule[i]};
      bits[(first + i) >> 6] |= 1ull << ((first + i) & 63);
    }
    return std::nullopt;
  };
  std::uint64_t bad = chunks;
  std::optional<Error> error;
  std::mutex mu;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const auto m = check(c);
    if (!m) continue;
    std::lock_guard lock(mu);
    if (c < bad) {
      bad = c;
      error = rule_mismatch(m->index, data[m->index], m->rule);
    }
  }
  if (error) return *error;
  return {};
}

// Copies the len entries a walk visits from `from` (at the walk's other()) to `to`, in walk
// order, a run of its fastest digit at a time: that run's entries lie a constant stride apart,
// often thousands of bytes, and a strided loop read them faster than a step() per entry with its
// branch on the digit's wrap (docs/PERFORMANCE.md, "Segment encodings").
void copy_walked(EntryOrder::Walk& w, const std::uint8_t* from, std::uint8_t* to,
                 std::uint64_t len) {
  for (std::uint64_t i = 0; i < len;) {
    const std::uint64_t n = std::min(w.run(), len - i), s = w.stride();
    const std::uint8_t* const src = from + w.other();
    for (std::uint64_t k = 0; k < n; ++k) to[i + k] = src[k * s];
    i += n;
    w.skip(n);
  }
}

// The index's last digit (consecutive indices) read as runs: when a stored order places that
// digit above its fastest one, a walk in stored order reads entries a large index stride apart
// (a cache miss each, 8% of a whole build in a profile), whereas the entries of one value of
// every other digit and all values of the last one are consecutive in the index.
// Calls put(stored offset, index, entries, stored stride) for each such run of stored positions
// [first, first + len), which it covers exactly once, and touch(index, entries) a few runs
// ahead (consecutive runs lie far apart in the index: a prefetch hides the miss of each run's
// first line); false (and no call) when the order does not pay for it: the last digit already
// fastest in storage, too few of its values per block, or a block inside one of its values.
template <class Touch, class Put>
bool for_each_index_run(const EntryOrder& order, std::uint64_t first, std::uint64_t len,
                        Touch&& touch, Put&& put) {
  constexpr std::size_t kAhead = 8;
  constexpr std::uint64_t kMinRun = 16;  // a run costs an index() of k divisions
  const auto& radices = order.radices();
  const auto& stored = order.stored();
  if (order.identity() || radices.empty()) return false;
  const std::size_t last = radices.size() - 1;
  const std::uint64_t r = radices[last];
  std::uint64_t place = 1;  // the last digit's stored place
  std::size_t t = stored.size();
  while (t-- > 0 && stored[t] != last) place *= radices[stored[t]];
  if (place == 1 || r < kMinRun || place * kMinRun > len) return false;
  struct Run {
    std::uint64_t at, index, n;
  };
  thread_local std::vector<Run> runs;
  runs.clear();
  const std::uint64_t cycle = place * r, end = first + len;
  for (std::uint64_t base = first / cycle * cycle; base < end; base += cycle)
    for (std::uint64_t lo = 0; lo < place; ++lo) {
      // Positions base + v * place + lo, v < r, clipped to [first, end).
      const std::uint64_t p0 = base + lo;
      const std::uint64_t v0 = p0 >= first ? 0 : (first - p0 + place - 1) / place;
      const std::uint64_t v1 = p0 >= end ? 0 : std::min(r, (end - p0 + place - 1) / place);
      if (v0 < v1) runs.push_back({p0 + v0 * place - first, order.index(p0 + v0 * place), v1 - v0});
    }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i + kAhead < runs.size()) touch(runs[i + kAhead].index, runs[i + kAhead].n);
    put(runs[i].at, runs[i].index, runs[i].n, place);
  }
  return true;
}

// The mark of index x: 1 where the rules answer it (bits), else 2 where it is a don't-care entry
// (dbits); either may be null.
struct MarkOf {
  const std::uint64_t* bits;
  const std::uint64_t* dbits;
  std::uint8_t operator()(std::uint64_t x) const {
    const int rule = bits ? static_cast<int>((bits[x >> 6] >> (x & 63)) & 1) : 0;
    const int care = dbits ? static_cast<int>((dbits[x >> 6] >> (x & 63)) & 1) : 0;
    return static_cast<std::uint8_t>(rule ? 1 : 2 * care);
  }
};

// A gathered block's entries filled where mark (one per entry, MarkOf's, or null for none) says:
// fill_rule_entries without don't-care entries (dc null), else fill_entries.
std::uint64_t fill_marked(std::vector<std::uint8_t>& out, const std::uint8_t* mark,
                          const DontCare* dc) {
  if (!mark) return 0;
  if (!dc) return fill_rule_marks(out, mark);
  return fill_entries(
      out, [&](std::size_t k) { return mark[k]; }, *dc);
}

// Stored block [first, first + len) of `order`: the entries at those positions, with the ones
// marked in rule_bits filled, and with dc, its don't-care entries (fill_entries). Returns the
// number of rule entries.
std::uint64_t gather_block(std::span<const std::uint8_t> data, const EntryOrder& order,
                           const std::vector<std::uint64_t>& rule_bits, const DontCare* dc,
                           std::uint64_t first, std::uint64_t len, std::vector<std::uint8_t>& out) {
  out.resize(len);
  thread_local std::vector<std::uint8_t> marks;  // per stored entry: 1 rule entry, 2 don't care
  const bool rules = !rule_bits.empty();
  const bool cares = dc && !dc->entries.empty();
  if (rules || cares) marks.resize(len);
  // Plain pointers: stores through out's bytes could alias the vectors' own members, which the
  // compiler would otherwise reload (and the thread_local's address) on every entry.
  const std::uint8_t* const src = data.data();
  const std::uint64_t* const bits = rules ? rule_bits.data() : nullptr;
  const std::uint64_t* const dbits = cares ? dc->entries.data() : nullptr;
  std::uint8_t* const to = out.data();
  std::uint8_t* const mark = rules || cares ? marks.data() : nullptr;
  const MarkOf mark_of{bits, dbits};
  auto fill = [&]() { return fill_marked(out, mark, cares ? dc : nullptr); };
  const bool runs = for_each_index_run(
      order, first, len,
      [&](std::uint64_t index, std::uint64_t n) {
        __builtin_prefetch(src + index);
        __builtin_prefetch(src + index + n - 1);
        if (bits) __builtin_prefetch(bits + (index >> 6));
      },
      [&](std::uint64_t at, std::uint64_t index, std::uint64_t n, std::uint64_t stride) {
        for (std::uint64_t k = 0; k < n; ++k) to[at + k * stride] = src[index + k];
        if (dbits)  // archival writes only: the builds' loop below stays as it was
          for (std::uint64_t k = 0, x = index; k < n; ++k, ++x) mark[at + k * stride] = mark_of(x);
        else if (mark)
          for (std::uint64_t k = 0, x = index; k < n; ++k, ++x)
            mark[at + k * stride] = static_cast<std::uint8_t>((bits[x >> 6] >> (x & 63)) & 1);
      });
  if (runs) return fill();
  EntryOrder::Walk w(order, first, /*by_index=*/false);
  if (!mark) {
    copy_walked(w, data.data(), out.data(), len);
    return 0;
  }
  // As copy_walked, marking the entries too. A run of consecutive indices (the stored order's
  // fastest digit is the index's) is copied whole and its rule bits read a word at a time: this
  // loop, entry by entry, was 28% of a KBPPvK build (perf), nearly all of it in the trials of
  // entry orders, which gather every order's sample.
  for (std::uint64_t i = 0; i < len;) {
    const std::uint64_t n = std::min(w.run(), len - i), s = w.stride(), x0 = w.other();
    if (s == 1 && !dbits) {
      std::memcpy(to + i, src + x0, n);
      for (std::uint64_t k = 0; k < n;) {
        const std::uint64_t x = x0 + k, shift = x & 63;
        const std::uint64_t m = std::min<std::uint64_t>(n - k, 64 - shift);
        const std::uint64_t word = bits[x >> 6] >> shift;
        for (std::uint64_t j = 0; j < m; ++j)
          mark[i + k + j] = static_cast<std::uint8_t>((word >> j) & 1);
        k += m;
      }
    } else {
      for (std::uint64_t k = 0, x = x0; k < n; ++k, x += s) {
        to[i + k] = src[x];
        mark[i + k] = mark_of(x);
      }
    }
    i += n;
    w.skip(n);
  }
  return fill();
}

// Stored ranges [first, first + len) that stand for a segment in trials.
using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// Blocks of one entry order that the size estimates compressed at the segment's zstd level, by
// block number, so that the write reuses them: at -19 a sample costs about what the blocks it
// stands for do, and a segment of up to 8 blocks is its own sample, so `recompress` compressed
// small segments two or three times over. A block is reused only where its bytes are the ones
// compressed (zstd's output depends on nothing else at a given level). Read-only while the write
// runs in parallel.
class CompressedBlocks {
 public:
  const std::vector<std::uint8_t>* find(std::uint64_t block,
                                        std::span<const std::uint8_t> raw) const {
    const auto it = blocks_.find(block);
    if (it == blocks_.end() || !std::ranges::equal(it->second.raw, raw)) return nullptr;
    return &it->second.z;
  }
  void add(std::uint64_t block, std::vector<std::uint8_t> raw, std::vector<std::uint8_t> z) {
    blocks_.insert_or_assign(block, Block{std::move(raw), std::move(z)});
  }
  void clear() { blocks_.clear(); }

 private:
  struct Block {
    std::vector<std::uint8_t> raw, z;
  };
  std::map<std::uint64_t, Block> blocks_;
};
// Whole blocks that stand for the segment when the writer estimates sizes or trains a
// dictionary: spread evenly, about `bytes` of them (4 to 64 blocks); at zstd -19 the codec's
// 8 MiB sample costs about a second per MiB.
Ranges whole_blocks(const SegmentInfo& info, std::uint64_t blocks, std::uint64_t bytes) {
  const std::uint64_t block_bytes = std::uint64_t{info.block_entries} * info.entry_bytes;
  const std::uint64_t want = std::clamp<std::uint64_t>(bytes / block_bytes, 4, 64);
  const std::uint64_t n = std::min<std::uint64_t>(blocks, want);
  Ranges r;
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t first = k * blocks / n * info.block_entries;
    r.emplace_back(first, std::min<std::uint64_t>(info.block_entries, info.entries - first));
  }
  return r;
}

// The estimated bytes of a whole segment whose stored ranges `prepare(first, len, out)`
// produces, from `ranges`: under zstd at `level` (0: not estimated) and, with_rans, order-1 rANS.
// keep: receives the prepared ranges; the ranges are prepared in its vectors, so a caller that
// passes the same one to trials of the same ranges has them resized to the sizes they have
// (nothing zeroed that is then overwritten: 16 MiB per order trial with 256 Ki-entry blocks).
// blocks (optional; ranges of whole blocks only): blocks of this order already compressed at
// `level`, by block number; the sample's are reused from it where their bytes are the same, and
// added to it.
template <class Prepare>
Result<SizeEstimate> sample_estimate(const SegmentInfo& info, const Ranges& ranges, int threads,
                                     int level, bool with_rans, const Prepare& prepare,
                                     std::vector<std::vector<std::uint8_t>>* keep = nullptr,
                                     CompressedBlocks* blocks = nullptr) {
  std::vector<std::vector<std::uint8_t>> local;
  std::vector<std::vector<std::uint8_t>>& prepared = keep ? *keep : local;
  prepared.resize(ranges.size());
  int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : failed)
  for (std::size_t k = 0; k < ranges.size(); ++k)
    if (!prepare(ranges[k].first, ranges[k].second, prepared[k])) ++failed;
  if (failed) return Error(Errc::internal, "preparing a sample of the segment failed");
  std::uint64_t raw = 0;
  for (const auto& p : prepared) raw += p.size();
  const double bytes = static_cast<double>(info.entries) * static_cast<double>(info.entry_bytes);
  const bool reuse = blocks != nullptr && level > 0;
  std::vector<std::vector<std::uint8_t>> compressed(reuse ? ranges.size() : 0);
  if (reuse)
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      assert(ranges[k].first % info.block_entries == 0);
      if (const auto* z = blocks->find(ranges[k].first / info.block_entries, prepared[k]))
        compressed[k] = *z;
    }
  auto e = estimate_sizes(prepared, level, threads, bytes / static_cast<double>(raw), with_rans,
                          reuse ? &compressed : nullptr);
  if (reuse && e)
    for (std::size_t k = 0; k < ranges.size(); ++k)
      blocks->add(ranges[k].first / info.block_entries, prepared[k], std::move(compressed[k]));
  return e;
}

// The entry order a greedy search finds, or none (empty) when no order is at least 1% smaller
// than index order (not worth a division per digit on every probe). From the least significant
// place up, each round tries every remaining digit there (the others in index order before it)
// and keeps the one whose trial(stored order) gives the fewest bytes; radix-1 digits stay first.
// A round's last candidate (the remaining digits in index order) is the order the round before
// kept, so its bytes are taken from there instead of trying it again (a trial is deterministic):
// one trial fewer in every round but the first. Replayed against every order's exact bytes, the
// search loses 0.7-1.2% to the sample's noise (2-3%); a beam, a re-rank on more pieces and swaps
// of neighbours won back about half a point at most, for 1.2-2x the trials (docs/PERFORMANCE.md,
// "Writing a segment"), so the search stays greedy.
template <class Trial>
Result<std::vector<std::uint8_t>> greedy_order(const std::vector<std::uint64_t>& digits,
                                               const Trial& trial) {
  std::vector<std::uint8_t> fixed, remaining, suffix;
  for (std::size_t j = 0; j < digits.size(); ++j)
    (digits[j] == 1 ? fixed : remaining).push_back(static_cast<std::uint8_t>(j));
  auto compose = [&](std::size_t skip) {  // remaining without [skip], it, then the suffix
    std::vector<std::uint8_t> v = fixed;
    for (std::size_t t = 0; t < remaining.size(); ++t)
      if (t != skip) v.push_back(remaining[t]);
    v.push_back(remaining[skip]);
    v.insert(v.end(), suffix.begin(), suffix.end());
    return v;
  };
  double index_bytes = 0, best_bytes = 0;
  while (remaining.size() > 1) {
    std::size_t best = remaining.size() - 1;
    const double kept = best_bytes;  // compose(last) of this round, unless it is the first
    for (std::size_t t = 0; t < remaining.size(); ++t) {
      double bytes = kept;
      if (suffix.empty() || t + 1 < remaining.size()) {
        auto b = trial(compose(t));
        if (!b) return std::move(b).error();
        bytes = *b;
      }
      if (suffix.empty() && t + 1 == remaining.size()) index_bytes = bytes;  // index order
      if (t == 0 || bytes < best_bytes) {
        best_bytes = bytes;
        best = t;
      }
    }
    suffix.insert(suffix.begin(), remaining[best]);
    remaining.erase(remaining.begin() + static_cast<std::ptrdiff_t>(best));
  }
  if (remaining.size() != 1 || best_bytes >= 0.99 * index_bytes) return std::vector<std::uint8_t>();
  std::vector<std::uint8_t> stored = fixed;
  stored.push_back(remaining[0]);
  stored.insert(stored.end(), suffix.begin(), suffix.end());
  return stored;
}

}  // namespace

std::vector<std::pair<std::uint64_t, std::uint64_t>> order_trial_pieces(
    std::uint64_t entries, std::uint64_t block_entries) {
  const std::uint64_t piece = std::min<std::uint64_t>(block_entries, kOrderTrialPiece);
  const std::uint64_t n = kOrderTrialPieces;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  if (n * piece >= entries) {
    for (std::uint64_t first = 0; first < entries; first += piece)
      r.emplace_back(first, std::min(piece, entries - first));
    return r;
  }
  // One piece in each of n equal strata, at a place drawn from the stratum (deterministic: a hash
  // of the stratum and the size), on a piece boundary: evenly spaced pieces can fall on one phase
  // of the index's mixed-radix structure in every stratum and misjudge an order.
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t lo = k * entries / n, hi = (k + 1) * entries / n;
    std::uint64_t x = (k + 1) * 0x9E3779B97F4A7C15ull ^ entries;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    const std::uint64_t at = (lo + x % (hi - lo)) / piece * piece;
    r.emplace_back(std::min(at, entries - piece), piece);
  }
  return r;
}

Result<WriteReport> write_segment(const fs::path& path, const SegmentInfo& info,
                                  std::span<const std::uint8_t> data, const WriteOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  WriteReport r;
  auto last = t0;
  auto lap = [&last]() {  // seconds since the last lap
    const auto now = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(now - std::exchange(last, now)).count();
  };
  if (info.block_entries == 0 || info.entry_bytes == 0)
    return Error(Errc::invalid_argument, "segment block size and entry size must be positive");
  if (data.size() != info.entries * info.entry_bytes)
    return Error(Errc::internal,
                 fmt::format("segment '{}': {} bytes given for {} entries of {}", info.name,
                             data.size(), info.entries, info.entry_bytes));
  if (opt.rules && info.entry_bytes != 1)
    return Error(Errc::internal, "rule entries are filled in one-byte entries only");
  if (opt.zstd_level < 1 || opt.zstd_level > ZSTD_maxCLevel())
    return Error(Errc::invalid_argument,
                 fmt::format("zstd level {} is outside 1..{}", opt.zstd_level, ZSTD_maxCLevel()));
  if (!opt.digits.empty() && info.entry_bytes != 1)
    return Error(Errc::internal, "entry orders apply to one-byte entries only");
  SegmentHeader h{};
  std::memcpy(h.magic, kSegmentMagic, sizeof h.magic);
  h.version = kSegmentVersion;
  h.header_bytes = sizeof(SegmentHeader);
  RETRA_TRY(put_field(h.game, info.game, "game"));
  RETRA_TRY(put_field(h.variant, info.variant, "variant"));
  RETRA_TRY(put_field(h.indexer, info.indexer, "indexer"));
  RETRA_TRY(put_field(h.value_encoding, info.value_encoding, "value encoding"));
  RETRA_TRY(put_field(h.name, info.name, "name"));
  h.entries = info.entries;
  h.entry_bytes = info.entry_bytes;
  h.block_entries = info.block_entries;
  h.blocks = info.blocks();
  h.table_offset = sizeof(SegmentHeader);
  h.zstd_level = opt.zstd_level;
  h.flags = opt.rules ? kRuleEntriesFilled : 0;
  if (opt.class_half != ClassHalf::none) {
    if (info.entry_bytes != 1 || info.entries % 2 != 0)
      return Error(Errc::internal, fmt::format("'{}' cannot have a class half: {} entries of {} "
                                               "bytes",
                                               info.name, info.entries, info.entry_bytes));
    h.flags |= opt.class_half == ClassHalf::lower ? kClassLowerHalf : kClassUpperHalf;
  }
  if (opt.dont_care) {
    if (info.entry_bytes != 1)
      return Error(Errc::internal, "don't-care entries apply to one-byte entries only");
    if (!opt.dont_care->entries.empty() &&
        opt.dont_care->entries.size() != (info.entries + 63) / 64)
      return Error(Errc::internal,
                   fmt::format("'{}': {} words of don't-care bits for {} entries", info.name,
                               opt.dont_care->entries.size(), info.entries));
    h.flags |= kDontCare;
    if (opt.dont_care->moves == DontCareMoves::captures) h.flags |= kDontCareCaptures;
  }

  const int threads = std::max(1, opt.threads);
  // With an entry order, the rules are asked once, in index order, and remembered as one bit per
  // entry (checked against the data there): a stored block gathers entries from all over the
  // index, and asking the rules entry by entry would cost an unrank each.
  std::vector<std::uint64_t> rule_bits;
  if ((!opt.digits.empty() || opt.dont_care) && opt.rules && info.entries)
    RETRA_TRY(mark_rule_entries(data, *opt.rules, threads, rule_bits));
  r.rules_seconds = lap();
  EntryOrder order;             // identity until an order is chosen
  CompressedBlocks compressed;  // blocks of `order` compressed at opt.zstd_level by the estimates
  // Stored entries [first, first + len) of order o as the file holds them (rule entries
  // filled); returns the number of rule entries.
  auto prepare_range = [&](const EntryOrder& o, std::uint64_t first, std::uint64_t len,
                           std::vector<std::uint8_t>& out) -> Result<std::uint64_t> {
    // With the rules marked once (digits given), every order gathers, index order included.
    if (!o.identity() || !rule_bits.empty() || opt.dont_care)
      return gather_block(data, o, rule_bits, opt.dont_care, first, len, out);
    thread_local std::vector<std::int16_t> rule;
    const std::uint64_t eb = info.entry_bytes;  // orders and rules: one-byte entries only
    return prepare_block(data.subspan(first * eb, len * eb), first, opt.rules, out, rule);
  };
  // Block b of the chosen order.
  // The stored entries of whole slabs (EntryOrder::Tiles), [slab_first, slab_first +
  // slab_values.size()), gathered by tiles with their marks (MarkOf's; empty without rules and
  // don't-care entries), from which the blocks inside them copy (the batch loop below).
  std::vector<std::uint8_t> slab_values, slab_marks;
  std::uint64_t slab_first = 0;
  // The don't-care entries to fill, if there are any.
  const DontCare* const cares =
      opt.dont_care && !opt.dont_care->entries.empty() ? opt.dont_care : nullptr;
  auto prepare = [&](std::uint64_t b, std::vector<std::uint8_t>& out) -> Result<std::uint64_t> {
    const std::uint64_t first = b * info.block_entries;
    const std::uint64_t len = std::min<std::uint64_t>(info.block_entries, info.entries - first);
    if (first < slab_first || first + len > slab_first + slab_values.size())
      return prepare_range(order, first, len, out);
    const std::uint64_t at = first - slab_first;
    out.assign(slab_values.begin() + static_cast<std::ptrdiff_t>(at),
               slab_values.begin() + static_cast<std::ptrdiff_t>(at + len));
    return fill_marked(out, slab_marks.empty() ? nullptr : slab_marks.data() + at, cares);
  };
  // After a parallel loop counted failures: the first error of blocks [first, end), in block
  // order (OK if preparing never failed, i.e. the compressor did).
  auto first_prepare_error = [&](std::uint64_t first, std::uint64_t end) -> Status {
    std::vector<std::uint8_t> out;
    for (std::uint64_t b = first; b < end; ++b) RETRA_TRY(prepare(b, out));
    return {};
  };

  if (!opt.digits.empty()) {
    if (!opt.stored_order.empty()) {
      auto o = EntryOrder::make(opt.digits, opt.stored_order, info.entries);
      if (!o) return std::move(o).error();
      order = std::move(*o);
    } else if (opt.order == OrderChoice::automatic && h.blocks >= kOrderMinBlocks) {
      // The trials measure the codec the segment would get in index order (at its real level
      // on the trial sample): a proxy that mixes codecs misleads. Order-1 rANS rewards an order
      // whose neighbours predict each other byte by byte, zstd one with long repeats; at a
      // trial level zstd looks worse than at -19 and rANS would win the comparison unfairly.
      bool rans_metric = opt.codec == CodecChoice::rans_o1;
      if (opt.codec == CodecChoice::automatic) {
        auto e = sample_estimate(
            info, whole_blocks(info, h.blocks, kCodecTrialBytes), threads, opt.zstd_level, true,
            [&](std::uint64_t first, std::uint64_t len, std::vector<std::uint8_t>& out) {
              return prepare_range(EntryOrder(), first, len, out);
            },
            nullptr, &compressed);
        if (!e) return std::move(e).error();
        rans_metric = rans_pays(*e);
      }
      const int level = rans_metric ? 0 : std::min(opt.zstd_level, kOrderTrialLevel);
      const Ranges pieces = order_trial_pieces(info.entries, info.block_entries);
      std::vector<std::vector<std::uint8_t>> trial_blocks;  // every trial's, the same sizes
      auto trial = [&](const std::vector<std::uint8_t>& stored) -> Result<double> {
        auto o = EntryOrder::make(opt.digits, stored, info.entries);
        if (!o) return std::move(o).error();
        auto e = sample_estimate(
            info, pieces, threads, level, rans_metric,
            [&](std::uint64_t first, std::uint64_t len, std::vector<std::uint8_t>& out) {
              return prepare_range(*o, first, len, out);
            },
            &trial_blocks);
        if (!e) return std::move(e).error();
        return rans_metric ? e->rans : e->zstd;
      };
      auto stored = greedy_order(opt.digits, trial);
      if (!stored) return std::move(stored).error();
      if (!stored->empty()) {
        auto o = EntryOrder::make(opt.digits, std::move(*stored), info.entries);
        if (!o) return std::move(o).error();
        order = std::move(*o);
        compressed.clear();  // blocks of index order
      }
    }
  }
  r.order_seconds = lap();

  // Choose the codec. The sample's blocks are prepared once here and reused for the estimates
  // and the dictionary.
  Codec codec = Codec::zstd;
  std::vector<std::uint8_t> model;
  std::optional<rans::Model> rans_model;
  ZSTD_CDict* cdict = nullptr;
  struct FreeCDict {
    ZSTD_CDict*& d;
    ~FreeCDict() { ZSTD_freeCDict(d); }
  } free_cdict{cdict};
  if (h.blocks > 0 && opt.codec != CodecChoice::zstd) {
    const bool estimate = opt.codec == CodecChoice::automatic;
    std::vector<std::vector<std::uint8_t>> prepared;
    auto e = sample_estimate(
        info, whole_blocks(info, h.blocks, 8u << 20), threads, estimate ? opt.zstd_level : 0,
        estimate,
        [&](std::uint64_t first, std::uint64_t len, std::vector<std::uint8_t>& out) {
          return prepare_range(order, first, len, out);
        },
        &prepared, &compressed);
    if (!e) {
      RETRA_TRY(first_prepare_error(0, h.blocks));
      return std::move(e).error();
    }
    const bool rans = opt.codec == CodecChoice::rans_o1 || (estimate && rans_pays(*e));
    if (rans) {
      // The model of the whole segment, counted block by block in parallel.
      std::vector<rans::Model::Counts> per_thread(static_cast<std::size_t>(threads));
      int bad = 0;
#pragma omp parallel num_threads(threads) reduction(+ : bad)
      {
        auto& counts = per_thread[static_cast<std::size_t>(omp_get_thread_num())];
        counts.assign(256 * 256, 0);
        std::vector<std::uint8_t> out;
#pragma omp for schedule(dynamic, 4)
        for (std::uint64_t b = 0; b < h.blocks; ++b) {
          if (!prepare(b, out)) {
            ++bad;
            continue;
          }
          rans::Model::count_block(out, counts);
        }
      }
      if (bad) RETRA_TRY(first_prepare_error(0, h.blocks));
      for (std::size_t t = 1; t < per_thread.size(); ++t)
        for (std::size_t i = 0; i < per_thread[0].size(); ++i) per_thread[0][i] += per_thread[t][i];
      rans_model = rans::Model::from_counts(per_thread[0]);
      model = rans_model->serialize();
      codec = Codec::rans_o1;
    } else if (opt.codec == CodecChoice::zstd_dict && prepared.size() >= 8) {
      // zstd's default dictionary size, trained on (up to 64 KiB of) each sample block.
      std::vector<std::uint8_t> samples;
      std::vector<std::size_t> sizes;
      for (const auto& p : prepared) {
        const std::size_t n = std::min<std::size_t>(p.size(), 64 << 10);
        samples.insert(samples.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
        sizes.push_back(n);
      }
      std::vector<std::uint8_t> dict(112 << 10);
      const std::size_t n =
          ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sizes.data(),
                                static_cast<unsigned>(sizes.size()));
      if (!ZDICT_isError(n)) {  // too little or too uniform data: plain zstd
        dict.resize(n);
        cdict = ZSTD_createCDict(dict.data(), dict.size(), opt.zstd_level);
        if (!cdict) return Error(Errc::internal, "zstd could not load its trained dictionary");
        model = std::move(dict);
        codec = Codec::zstd_dict;
      }
    }
  }
  r.codec_seconds = lap();
  h.codec = static_cast<std::uint32_t>(codec);
  h.model_offset = model.empty() ? 0 : h.table_offset + h.blocks * sizeof(BlockEntry);
  h.model_bytes = model.size();
  h.model_checksum = model.empty() ? 0 : XXH3_64bits(model.data(), model.size());
  // The order section follows the model: radices (8 bytes each), then the stored digits.
  std::vector<std::uint8_t> order_section;
  if (!order.identity()) {
    h.version = 3;
    h.flags |= kEntryOrder;
    for (const std::uint64_t radix : order.radices()) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(&radix);
      order_section.insert(order_section.end(), p, p + sizeof radix);
    }
    order_section.insert(order_section.end(), order.stored().begin(), order.stored().end());
    h.order_offset = h.table_offset + h.blocks * sizeof(BlockEntry) + model.size();
    h.order_checksum = XXH3_64bits(order_section.data(), order_section.size());
    h.order_digits = static_cast<std::uint32_t>(order.digits());
  } else {
    h.version = 2;
  }
  // Older readers must refuse these flags.
  if (opt.class_half != ClassHalf::none || opt.dont_care) h.version = 4;
  h.data_offset =
      h.table_offset + h.blocks * sizeof(BlockEntry) + model.size() + order_section.size();

  auto file = io::AtomicFile::create(path);
  if (!file) return std::move(file).error();

  std::vector<BlockEntry> table(h.blocks);
  // Compress a batch of blocks in parallel, then append them in order; batches bound the memory
  // held in compressed buffers to about batch * block_bytes.
  const std::uint64_t batch = std::max<std::uint64_t>(64, 4 * static_cast<std::uint64_t>(threads));
  std::vector<std::vector<std::uint8_t>> bufs(batch);
  std::vector<std::size_t> sizes(batch);
  std::vector<std::uint64_t> rule_entries(batch);
  std::uint64_t offset = h.data_offset;
  // Orders whose walk in stored order comes back to an index line only after more than
  // kWalkReuse entries (KQRvKR's: the fastest index digit stored above the king pair) missed
  // the cache on every entry of every block (4% of a 2-thread KQRvKR build, perf); there, each
  // batch first gathers the slabs that hold its blocks by tiles, in parallel. The slabs cost
  // at most two slabs' entries of memory beyond the batch's, and are used only when a slab is
  // no larger than a batch.
  const EntryOrder::Tiles tiles(order, /*by_stored=*/true);
  const bool by_slabs =
      tiles.pays_for_writing() && tiles.slab_entries() <= batch * std::uint64_t{info.block_entries};
  const MarkOf mark_of{rule_bits.empty() ? nullptr : rule_bits.data(),
                       cares ? cares->entries.data() : nullptr};
  for (std::uint64_t first = 0; first < h.blocks; first += batch) {
    const std::uint64_t count = std::min(batch, h.blocks - first);
    if (by_slabs) {
      const std::uint64_t slab = tiles.slab_entries(), per = tiles.tiles_per_slab();
      const std::uint64_t lo = first * info.block_entries;
      const std::uint64_t hi = std::min(info.entries, (first + count) * info.block_entries);
      const std::uint64_t s0 = lo / slab, s1 = (hi + slab - 1) / slab;
      slab_first = s0 * slab;
      slab_values.resize((s1 - s0) * slab);
      slab_marks.resize(mark_of.bits || mark_of.dbits ? slab_values.size() : 0);
      std::uint8_t* const values = slab_values.data();
      std::uint8_t* const marks = slab_marks.empty() ? nullptr : slab_marks.data();
      const std::uint8_t* const src = data.data();
      const std::uint64_t base = slab_first;
      // A task per 8 Ki-entry run of tiles, at least a tile.
      const std::uint64_t step = std::max<std::uint64_t>(1, 8192 / tiles.entries_per_tile());
      const std::uint64_t t_end = s1 * per;
      // The visitors capture by value: byte stores through pointers held by reference made the
      // compiler reload every pointer on every entry.
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
      for (std::uint64_t t = s0 * per; t < t_end; t += step) {
        const std::uint64_t t1 = std::min(t_end, t + step);
        if (marks)
          tiles.visit(t, t1, [values, marks, src, base, mark_of](std::uint64_t i, std::uint64_t p) {
            values[p - base] = src[i];
            marks[p - base] = mark_of(i);
          });
        else
          tiles.visit(t, t1, [values, src, base](std::uint64_t i, std::uint64_t p) {
            values[p - base] = src[i];
          });
      }
    }
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : failed)
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t b = first + k;
      thread_local std::vector<std::uint8_t> raw;
      auto n = prepare(b, raw);
      if (!n) {
        failed += 1;
        continue;
      }
      rule_entries[k] = *n;
      auto& buf = bufs[k];
      constexpr std::size_t kFailed = static_cast<std::size_t>(-1);
      std::size_t c = kFailed;
      if (codec == Codec::rans_o1) {
        // Cannot fail: the model was counted from these very blocks.
        if (rans_model->encode(raw, buf)) c = buf.size();
      } else if (const auto* z = codec == Codec::zstd ? compressed.find(b, raw) : nullptr) {
        buf = *z;  // compressed by an estimate: the same bytes at the same level
        c = buf.size();
      } else {
        buf.resize(ZSTD_compressBound(raw.size()));
        c = codec == Codec::zstd_dict
                ? ZSTD_compress_usingCDict(zstd_contexts().cctx(), buf.data(), buf.size(),
                                           raw.data(), raw.size(), cdict)
                : ZSTD_compressCCtx(zstd_contexts().cctx(), buf.data(), buf.size(), raw.data(),
                                    raw.size(), opt.zstd_level);
        if (ZSTD_isError(c)) c = kFailed;
      }
      if (c == kFailed) {
        failed += 1;
        sizes[k] = 0;
        continue;
      }
      sizes[k] = c;
      table[b].raw_bytes = static_cast<std::uint32_t>(raw.size());
      table[b].compressed_bytes = static_cast<std::uint32_t>(c);
      table[b].checksum = XXH3_64bits(buf.data(), c);
    }
    if (failed) {
      RETRA_TRY(first_prepare_error(first, first + count));
      return Error(Errc::internal, fmt::format("compressing a block of '{}' failed ({})", info.name,
                                               codec_name(codec)));
    }
    for (std::uint64_t k = 0; k < count; ++k) {
      table[first + k].offset = offset;
      RETRA_TRY(file->pwrite(bufs[k].data(), sizes[k], offset));
      offset += sizes[k];
      r.rule_entries += rule_entries[k];
    }
  }
  r.blocks_seconds = lap();
  // The far section ends the file.
  std::vector<std::uint8_t> far_section;
  for (std::size_t k = 0; k < opt.far.size(); ++k)
    if (opt.far[k].first >= info.entries || (k > 0 && opt.far[k].first <= opt.far[k - 1].first) ||
        info.entry_bytes != 1)
      return Error(Errc::internal,
                   fmt::format("far values of '{}' out of order or range", info.name));
  if (!opt.far.empty()) {
    h.version = 4;
    h.flags |= kFarValues;
    h.far_offset = offset;
    far_section.resize(16 + kFarRowBytes * opt.far.size());
    const std::uint64_t count = opt.far.size();
    std::memcpy(far_section.data(), &count, 8);
    std::uint8_t* row = far_section.data() + 16;
    for (const auto& [index, value] : opt.far) {
      std::memcpy(row, &index, 8);
      std::memcpy(row + 8, &value, 4);
      row += kFarRowBytes;
    }
    const std::uint64_t sum = XXH3_64bits(far_section.data() + 16, far_section.size() - 16);
    std::memcpy(far_section.data() + 8, &sum, 8);
    RETRA_TRY(file->pwrite(far_section.data(), far_section.size(), offset));
    offset += far_section.size();
  }
  h.file_bytes = offset;
  h.table_checksum = XXH3_64bits(table.data(), table.size() * sizeof(BlockEntry));
  h.header_checksum = header_hash(h);
  RETRA_TRY(file->pwrite(table.data(), table.size() * sizeof(BlockEntry), h.table_offset));
  if (!model.empty()) RETRA_TRY(file->pwrite(model.data(), model.size(), h.model_offset));
  if (!order_section.empty())
    RETRA_TRY(file->pwrite(order_section.data(), order_section.size(), h.order_offset));
  RETRA_TRY(file->pwrite(&h, sizeof h, 0));
  RETRA_TRY(file->commit());
  r.commit_seconds = lap();
  r.codec = codec;
  r.order = std::move(order);
  r.file_bytes = h.file_bytes;
  r.raw_bytes = data.size();
  r.header_checksum = h.header_checksum;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---------------------------------------------------------------------------------------------

struct SegmentReader::Cache {
  std::mutex mu;
  std::size_t capacity;
  std::list<std::pair<std::uint64_t, std::vector<std::uint8_t>>> lru;  // front = most recent
  std::unordered_map<std::uint64_t, decltype(lru)::iterator> where;
};

struct SegmentReader::Model {
  std::optional<rans::Model> rans;
  ZSTD_DDict* ddict = nullptr;
  ~Model() { ZSTD_freeDDict(ddict); }
};

SegmentReader::~SegmentReader() = default;

Result<std::unique_ptr<SegmentReader>> SegmentReader::open(
    const fs::path& path, std::size_t cache_blocks, std::shared_ptr<const EntryRules> rules) {
  auto m = io::MappedFile::open(path);
  if (!m) return std::move(m).error();
  std::unique_ptr<SegmentReader> r(new SegmentReader());
  r->file_ = std::move(*m);
  const auto bytes = r->file_.bytes();
  auto corrupt = [&](std::string_view what) {
    return Error(Errc::corrupt, fmt::format("segment file '{}' is damaged: {}; rebuild it with "
                                            "`retra build ... --force`",
                                            path.string(), what));
  };
  if (bytes.size() < sizeof(SegmentHeader)) return corrupt("shorter than its 256-byte header");
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kSegmentMagic, sizeof h.magic) != 0)
    return Error(Errc::corrupt,
                 fmt::format("'{}' is not a retra segment file (bad magic)", path.string()));
  if (h.header_checksum != header_hash(h)) return corrupt("header checksum mismatch");
  if (h.version < 1 || h.version > kSegmentVersion)
    return Error(Errc::mismatch, fmt::format("segment '{}' has format version {}, this retra "
                                             "reads versions 1 to {}",
                                             path.string(), h.version, kSegmentVersion));
  // Version 1 had zeros where version 2 keeps codec, model and flags, and versions 1 and 2 zeros
  // where version 3 keeps the entry order, and versions 1 to 3 a zero where version 4 keeps the
  // far section's offset: the checks below hold.
  if (h.codec > static_cast<std::uint32_t>(Codec::rans_o1) ||
      (h.flags & ~(kRuleEntriesFilled | kEntryOrder | kFarValues | kClassLowerHalf |
                   kClassUpperHalf | kDontCare | kDontCareCaptures)))
    return Error(Errc::mismatch,
                 fmt::format("segment '{}' uses a codec or flags this retra does not know (codec "
                             "{}, flags {:#x}): read it with a newer retra",
                             path.string(), h.codec, h.flags));
  const std::uint64_t table_end = h.table_offset + h.blocks * sizeof(BlockEntry);
  const bool needs_model = h.codec != static_cast<std::uint32_t>(Codec::zstd);
  const bool ordered = (h.flags & kEntryOrder) != 0;
  const bool far = (h.flags & kFarValues) != 0;
  const bool lower = (h.flags & kClassLowerHalf) != 0, upper = (h.flags & kClassUpperHalf) != 0;
  const std::uint64_t order_bytes = 9ull * h.order_digits;
  if (h.header_bytes != sizeof(SegmentHeader) || h.entry_bytes == 0 || h.block_entries == 0 ||
      h.blocks != (h.entries + h.block_entries - 1) / h.block_entries ||
      h.table_offset != sizeof(SegmentHeader) || h.blocks > bytes.size() ||
      (h.model_bytes ? h.model_offset != table_end : h.model_offset != 0) ||
      (needs_model != (h.model_bytes != 0)) || h.model_bytes > bytes.size() ||
      (ordered ? h.version < 3 || h.order_digits == 0 || h.order_digits > kMaxOrderDigits ||
                     h.order_offset != table_end + h.model_bytes
               : h.order_offset != 0 || h.order_digits != 0) ||
      h.data_offset != table_end + h.model_bytes + order_bytes || h.data_offset > bytes.size() ||
      h.file_bytes != bytes.size() || (h.version == 1 && (h.codec || h.model_bytes || h.flags)) ||
      (ordered && h.entry_bytes != 1) ||
      ((lower || upper) &&
       (h.version < 4 || (lower && upper) || h.entry_bytes != 1 || h.entries % 2 != 0)) ||
      ((h.flags & kDontCare) && (h.version < 4 || h.entry_bytes != 1)) ||
      ((h.flags & kDontCareCaptures) && !(h.flags & kDontCare)) ||
      (far ? h.version < 4 || h.entry_bytes != 1 || h.far_offset < h.data_offset ||
                 h.far_offset > h.file_bytes || h.file_bytes - h.far_offset < 16
           : h.far_offset != 0))
    return corrupt("inconsistent header fields (or the file was truncated)");
  const std::uint64_t data_end = far ? h.far_offset : h.file_bytes;
  r->table_.resize(h.blocks);
  if (h.blocks)  // an empty segment has no table (and data() may be null)
    std::memcpy(r->table_.data(), bytes.data() + h.table_offset, h.blocks * sizeof(BlockEntry));
  if (XXH3_64bits(r->table_.data(), h.blocks * sizeof(BlockEntry)) != h.table_checksum)
    return corrupt("block table checksum mismatch");
  const std::uint64_t block_bytes = std::uint64_t{h.block_entries} * h.entry_bytes;
  for (std::uint64_t b = 0; b < h.blocks; ++b) {
    const BlockEntry& e = r->table_[b];
    const std::uint64_t want = std::min(block_bytes, h.entries * h.entry_bytes - b * block_bytes);
    if (e.raw_bytes != want || e.offset < h.data_offset || e.offset + e.compressed_bytes > data_end)
      return corrupt(fmt::format("block table row {} is out of bounds", b));
  }
  r->model_ = std::make_unique<Model>();
  if (h.model_bytes) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data()) + h.model_offset;
    if (XXH3_64bits(p, h.model_bytes) != h.model_checksum)
      return corrupt("model section checksum mismatch");
    if (h.codec == static_cast<std::uint32_t>(Codec::rans_o1)) {
      auto model = rans::Model::parse({p, h.model_bytes});
      if (!model) return corrupt(model.error().message());
      r->model_->rans = std::move(*model);
    } else {
      r->model_->ddict = ZSTD_createDDict(p, h.model_bytes);
      if (!r->model_->ddict) return corrupt("zstd cannot load the dictionary");
    }
  }
  if (ordered) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data()) + h.order_offset;
    if (XXH3_64bits(p, order_bytes) != h.order_checksum)
      return corrupt("entry order section checksum mismatch");
    std::vector<std::uint64_t> radices(h.order_digits);
    std::memcpy(radices.data(), p, 8ull * h.order_digits);
    std::vector<std::uint8_t> stored(p + 8ull * h.order_digits, p + order_bytes);
    auto o = EntryOrder::make(std::move(radices), std::move(stored), h.entries);
    if (!o) return corrupt(o.error().message());
    r->order_ = std::move(*o);
  }
  if (far) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data()) + h.far_offset;
    std::uint64_t count, sum;
    std::memcpy(&count, p, 8);
    std::memcpy(&sum, p + 8, 8);
    const std::uint64_t rows = h.file_bytes - h.far_offset - 16;
    if (count == 0 || rows % kFarRowBytes != 0 || rows / kFarRowBytes != count)
      return corrupt("the far section's length disagrees with its count");
    if (XXH3_64bits(p + 16, rows) != sum) return corrupt("far section checksum mismatch");
    r->far_.resize(count);
    for (std::uint64_t k = 0; k < count; ++k) {
      std::memcpy(&r->far_[k].first, p + 16 + kFarRowBytes * k, 8);
      std::memcpy(&r->far_[k].second, p + 16 + kFarRowBytes * k + 8, 4);
      if (r->far_[k].first >= h.entries || (k > 0 && r->far_[k].first <= r->far_[k - 1].first))
        return corrupt("the far section's indices are out of range or out of order");
    }
  }
  r->info_.game = get_field(h.game);
  r->info_.variant = get_field(h.variant);
  r->info_.indexer = get_field(h.indexer);
  r->info_.value_encoding = get_field(h.value_encoding);
  r->info_.name = get_field(h.name);
  r->info_.entries = h.entries;
  r->info_.entry_bytes = h.entry_bytes;
  r->info_.block_entries = h.block_entries;
  r->header_checksum_ = h.header_checksum;
  r->version_ = h.version;
  r->codec_ = static_cast<Codec>(h.codec);
  r->zstd_level_ = h.zstd_level;
  r->model_bytes_ = h.model_bytes;
  r->rules_filled_ = (h.flags & kRuleEntriesFilled) != 0;
  r->class_half_ = lower ? ClassHalf::lower : upper ? ClassHalf::upper : ClassHalf::none;
  r->dont_care_ = (h.flags & kDontCare) != 0;
  r->dont_care_moves_ =
      (h.flags & kDontCareCaptures) ? DontCareMoves::captures : DontCareMoves::conversions;
  if (r->rules_filled_ && h.entry_bytes != 1)
    return corrupt("rule entries filled in entries wider than one byte");
  r->rules_ = std::move(rules);
  r->holes_only_ = r->rules_ && r->rules_->holes_only();
  // cache_blocks counts default-sized blocks: larger blocks get proportionally fewer slots, so
  // the cache's memory stays what the caller chose (but at least one block per shard).
  const std::uint64_t per_default =
      std::max<std::uint64_t>(1, h.block_entries / kDefaultBlockEntries);
  cache_blocks = static_cast<std::size_t>(cache_blocks / per_default);
  r->cache_ = std::make_unique<Cache[]>(kCacheShards);
  const std::size_t per_shard =
      std::max<std::size_t>(1, (cache_blocks + kCacheShards - 1) / kCacheShards);
  for (std::size_t i = 0; i < kCacheShards; ++i) r->cache_[i].capacity = per_shard;
  r->cached_blocks_ = std::uint64_t{per_shard} * kCacheShards;
  return r;
}

Status require_exact_bytes(const SegmentReader& r, std::string_view who) {
  if (!r.dont_care()) return {};
  return Error(Errc::invalid_argument,
               fmt::format("segment '{}' ({}) holds don't-care entries (written by `retra "
                           "recompress --dont-care`), whose values only a probe's search "
                           "restores; {} needs exact values: rebuild the segment with `retra "
                           "build ... --force`, or keep a copy recompressed without --dont-care",
                           r.info().name, r.path().string(), who));
}

Error SegmentReader::block_error(std::uint64_t b, std::string_view what) const {
  const std::uint64_t first = b * info_.block_entries;
  const std::uint64_t last = std::min(info_.entries, first + info_.block_entries) - 1;
  return Error(Errc::corrupt, Cause::bad_block,
               fmt::format("segment '{}' block {} (entries {}..{}) is corrupt: {}; rebuild the "
                           "segment with `retra build ... --force`",
                           file_.path().string(), b, first, last, what))
      .at_block(b);
}

Status SegmentReader::read_block(std::uint64_t b, std::span<std::uint8_t> out) const {
  RETRA_TRY(read_stored_block(b, out));
  if (rules_filled_ && !order_.identity()) {
    // The block's entries are spread over the index: ask the rules entry by entry.
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = entry_value(order_.index(b * info_.block_entries + i), out[i]);
  } else if (rules_filled_) {
    restore_rule_entries(b * info_.block_entries, out);
  }
  return {};
}

void SegmentReader::restore_rule_entries(std::uint64_t first, std::span<std::uint8_t> out) const {
  thread_local std::vector<std::int16_t> rule;
  rule.resize(out.size());
  rules_->rule_values(first, rule);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (rule[i] != EntryRules::kStored) out[i] = static_cast<std::uint8_t>(rule[i]);
}

std::uint8_t SegmentReader::entry_value(std::uint64_t index, std::uint8_t stored) const {
  if (!rules_filled_ || !rules_) return stored;  // without rules no block could be read
  std::int16_t rule = EntryRules::kStored;
  rules_->rule_values(index, {&rule, 1});
  return rule == EntryRules::kStored ? stored : static_cast<std::uint8_t>(rule);
}

Status SegmentReader::read_stored_block(std::uint64_t b, std::span<std::uint8_t> out) const {
  const BlockEntry& e = table_[b];
  if (out.size() != e.raw_bytes)
    return Error(Errc::internal, "read_block: output buffer has the wrong size");
  if (rules_filled_ && !rules_)
    return Error(Errc::internal,
                 fmt::format("segment '{}' leaves some entries to its game's rules and was "
                             "opened without them",
                             file_.path().string()));
  const auto* src = reinterpret_cast<const std::uint8_t*>(file_.bytes().data()) + e.offset;
  if (XXH3_64bits(src, e.compressed_bytes) != e.checksum)
    return block_error(b, "checksum mismatch");
  if (codec_ == Codec::rans_o1) {
    if (!model_->rans->decode({src, e.compressed_bytes}, out))
      return block_error(b, "rANS stream does not decode to the block");
  } else {
    ZSTD_DCtx* d = zstd_contexts().dctx();
    const std::size_t n =
        model_->ddict ? ZSTD_decompress_usingDDict(d, out.data(), out.size(), src,
                                                   e.compressed_bytes, model_->ddict)
                      : ZSTD_decompressDCtx(d, out.data(), out.size(), src, e.compressed_bytes);
    if (ZSTD_isError(n)) return block_error(b, ZSTD_getErrorName(n));
    if (n != e.raw_bytes) return block_error(b, "decompressed size mismatch");
  }
  return {};
}

Status SegmentReader::read_all(std::span<std::uint8_t> out, int threads, Exact exact) const {
  if (out.size() != info_.entries * info_.entry_bytes)
    return Error(Errc::internal, "read_all: output buffer has the wrong size");
  threads = std::max(1, threads);
  // The rules' values go back unless the caller reads only positions moves reach and the rules
  // answer only holes: then the pass over every position (a position step per entry, which can
  // take as long as decoding the segment) is skipped.
  // (Without rules, read_stored_block refuses the file.)
  const bool restore = rules_filled_ && !(exact == Exact::reached_by_moves && holes_only_);
  const std::uint64_t block_bytes = std::uint64_t{info_.block_entries} * info_.entry_bytes;
  const std::uint64_t nblocks = table_.size();
  // Stored blocks first (for an ordered file into a buffer in the stored order, as stored; the
  // rules' values go back once the entries are in index order, where the rules are cheap).
  const bool ordered = !order_.identity();
  // Mapped, not a vector: a vector's zeroing was one thread writing every byte and taking a
  // fault per 4 KiB page before the decoders ran (5% of a KRPvKR build's samples, loading the
  // segments it converts into); the decoders now fault in the pages, huge ones, side by side.
  LargeArray<std::uint8_t> stored;
  if (ordered) {
    auto mapped = LargeArray<std::uint8_t>::allocate(out.size());
    if (!mapped) return std::move(mapped).error();
    stored = std::move(*mapped);
  }
  const std::span<std::uint8_t> dest = ordered ? stored.span() : out;
  // The first failing block (lowest number) is reported, whatever the thread schedule.
  std::uint64_t bad = nblocks;
  std::vector<Error> errors;
  std::mutex mu;
  // In groups of blocks, each group's compressed pages dropped from this process once decoded:
  // a reader that decodes a whole segment holds its decoded bytes, not the file's as well.
  const std::uint64_t group = 256;
  for (std::uint64_t g0 = 0; g0 < nblocks; g0 += group) {
    const std::uint64_t g1 = std::min(nblocks, g0 + group);
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (std::uint64_t b = g0; b < g1; ++b) {
      const auto block = dest.subspan(b * block_bytes, table_[b].raw_bytes);
      Status s = ordered || !restore ? read_stored_block(b, block) : read_block(b, block);
      if (!s) {
        std::lock_guard lock(mu);
        if (b < bad) {
          bad = b;
          errors.assign(1, s.error());
        }
      }
    }
    const std::uint64_t from = table_[g0].offset;
    const BlockEntry& last = table_[g1 - 1];
    file_.drop_resident_pages(from, last.offset + last.compressed_bytes - from);
  }
  if (bad != nblocks) return errors.front();
  if (!ordered) return {};
  // Back to index order, then the rules, in chunks of 64 Ki entries; a tile at a time where
  // tiles pay (there, a walk in index order missed the cache on every stored byte: 8% of a
  // whole KRPvKR build's time went to it, loading KRBvKR for its promotions).
  constexpr std::uint64_t kChunk = 1u << 16;
  const std::uint64_t n = out.size(), chunks = (n + kChunk - 1) / kChunk;
  const EntryOrder::Tiles tiles(order_);
  const bool by_tiles = tiles.pays();
  if (by_tiles) {
    const std::uint64_t per = std::max<std::uint64_t>(1, kChunk / tiles.entries_per_tile());
    const std::uint64_t groups = (tiles.count() + per - 1) / per;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (std::uint64_t g = 0; g < groups; ++g)
      tiles.to_index(stored.data(), out.data(), g * per, std::min(tiles.count(), (g + 1) * per));
  }
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const std::uint64_t first = c * kChunk, len = std::min(kChunk, n - first);
    if (!by_tiles) {
      EntryOrder::Walk w(order_, first, /*by_index=*/true);
      copy_walked(w, stored.data(), out.data() + first, len);
    }
    if (restore) restore_rule_entries(first, out.subspan(first, len));
  }
  return {};
}

Result<std::uint32_t> SegmentReader::value_at(std::uint64_t index) const {
  if (const auto v = far_value(index)) return *v;
  auto b = byte_at(index);
  if (!b) return std::move(b).error();
  return std::uint32_t{*b};
}

Result<std::uint8_t> SegmentReader::byte_at(std::uint64_t index, Exact exact) const {
  if (index >= info_.entries)
    return Error(Errc::invalid_argument, fmt::format("index {} outside segment '{}' ({} entries)",
                                                     index, info_.name, info_.entries));
  const std::uint64_t at = order_.position(index);
  const std::uint64_t b = at / info_.block_entries;
  const std::uint64_t off = (at % info_.block_entries) * info_.entry_bytes;
  const bool as_stored = exact == Exact::reached_by_moves && holes_only_;
  auto value = [&](std::uint8_t stored) { return as_stored ? stored : entry_value(index, stored); };
  Cache& c = cache_[b % kCacheShards];
  {
    std::lock_guard lock(c.mu);
    if (auto it = c.where.find(b); it != c.where.end()) {
      c.lru.splice(c.lru.begin(), c.lru, it->second);
      return value(it->second->second[off]);
    }
  }
  std::vector<std::uint8_t> buf(table_[b].raw_bytes);
  RETRA_TRY(read_stored_block(b, buf));
  const std::uint8_t v = value(buf[off]);
  std::lock_guard lock(c.mu);
  if (c.where.find(b) == c.where.end()) {
    c.lru.emplace_front(b, std::move(buf));
    c.where[b] = c.lru.begin();
    if (c.lru.size() > c.capacity) {
      c.where.erase(c.lru.back().first);
      c.lru.pop_back();
    }
  }
  return v;
}

}  // namespace retra::format
