// Parsing and printing of Awari positions. Thread safety: pure functions.
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "src/games/awari/board.hpp"
#include "src/games/awari/index.hpp"

namespace retra::awari {

Result<Board> parse_board(std::string_view text) {
  const std::string_view hint =
      "expected 12 non-negative pit counts separated by commas or spaces, mover's pits first, "
      "for example 1,1,1,1,1,2,4,2,3,0,0,0";
  Board b;
  int field = 0;
  int total = 0;
  std::size_t i = 0;
  auto is_sep = [](char c) { return c == ',' || c == ' ' || c == '\t'; };
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) break;
    std::size_t j = i;
    while (j < text.size() && !is_sep(text[j])) ++j;
    const std::string_view tok = text.substr(i, j - i);
    if (tok.empty())
      return Error(Errc::invalid_argument,
                   fmt::format("position '{}': empty pit field {}; {}", text, field + 1, hint));
    if (field >= kPits)
      return Error(Errc::invalid_argument,
                   fmt::format("position '{}': more than 12 pits; {}", text, hint));
    if (tok.front() == '-')
      return Error(Errc::invalid_argument, fmt::format("position '{}': pit {} is negative ({}); {}",
                                                       text, field, tok, hint));
    int v = 0;
    auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec == std::errc::result_out_of_range)
      return Error(Errc::invalid_argument,
                   fmt::format("position '{}': pit {} holds too many stones ({}); at most {} "
                               "stones are on an Awari board",
                               text, field, tok, kMaxStones));
    if (ec != std::errc() || end != tok.data() + tok.size())
      return Error(
          Errc::invalid_argument,
          fmt::format("position '{}': pit {} is not a number ('{}'); {}", text, field, tok, hint));
    if (v > kMaxStones)
      return Error(Errc::invalid_argument,
                   fmt::format("position '{}': pit {} holds {} stones; at most {} stones are on "
                               "an Awari board",
                               text, field, v, kMaxStones));
    b.pit[field++] = static_cast<std::uint8_t>(v);
    total += v;
    i = j;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i < text.size() && text[i] == ',') {
      ++i;
      // A trailing comma leaves an empty field.
      std::size_t k = i;
      while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
      if (k >= text.size())
        return Error(Errc::invalid_argument,
                     fmt::format("position '{}': trailing comma; {}", text, hint));
    }
  }
  if (field != kPits)
    return Error(Errc::invalid_argument,
                 fmt::format("position '{}': {} pits given, 12 needed; {}", text, field, hint));
  if (total > kMaxStones)
    return Error(Errc::invalid_argument,
                 fmt::format("position '{}': {} stones in total, an Awari board holds at most {}",
                             text, total, kMaxStones));
  return b;
}

std::string format_board(const Board& b) {
  std::string s;
  for (int i = 0; i < kPits; ++i) {
    if (i) s += ',';
    s += std::to_string(b.pit[i]);
  }
  return s;
}

Board unrank_bisect(int stones, std::uint64_t index) noexcept {
  // The same search as unrank(), by bisection: fewer probes, but unpredictable branches; kept for
  // bench_awari's comparison (docs/PERFORMANCE.md).
  Board b;
  unsigned c_next = static_cast<unsigned>(stones);  // c_12 = n
  for (int k = kPits - 1; k >= 1; --k) {
    const std::uint64_t* row = detail::kRank.t[k];
    unsigned lo = 0, hi = c_next;
    while (lo < hi) {
      const unsigned mid = (lo + hi + 1) / 2;
      if (row[mid] <= index)
        lo = mid;
      else
        hi = mid - 1;
    }
    index -= row[lo];
    b.pit[k] = static_cast<std::uint8_t>(c_next - lo);
    c_next = lo;
  }
  b.pit[0] = static_cast<std::uint8_t>(c_next);
  return b;
}

}  // namespace retra::awari
