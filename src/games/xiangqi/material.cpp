// Material signatures, slot layouts and the Fang-151 list. Thread safety: pure functions;
// fang151() returns a constant.
#include "src/games/xiangqi/material.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace retra::xiangqi {

int Material::pieces() const {
  int n = 0;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t) n += count[c][t];
  return n;
}

bool Material::armed(Color c) const {
  return count[c][rook] || count[c][knight] || count[c][cannon] || count[c][pawn];
}

std::string Material::name() const {
  std::string s;
  for (int c = 0; c < 2; ++c) {
    s += 'K';
    for (PieceType t : {rook, knight, cannon, pawn, guard, minister}) {
      const int unpinned = count[c][t] - (t == pawn ? static_cast<int>(levels[c].size()) : 0);
      for (int i = 0; i < unpinned; ++i) s += piece_letter(t, red);
      if (t == pawn)
        for (auto l : levels[c]) s += fmt::format("P({})", l);
    }
  }
  return s;
}

Result<Material> parse_material(std::string_view name) {
  auto bad = [&](const std::string& what) {
    return Error(Errc::invalid_argument,
                 fmt::format("endgame '{}': {}; write K<red pieces>K<black pieces> with letters "
                             "R N C P G M (or H A B E), e.g. KRKGGMM or KNP(9)KGM",
                             name, what));
  };
  Material m;
  int side = -1;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char ch = name[i];
    const auto type = piece_type_of(ch);
    if (!type) return bad(fmt::format("unknown piece letter '{}'", ch));
    const PieceType t = *type;
    if (t == king) {
      if (++side > 1) return bad("more than two kings");
      m.count[side][king] = 1;
      continue;
    }
    if (side < 0) return bad("the name must start with K (Red's king)");
    const Color c = Color(side);
    if (++m.count[c][t] > kMaxOfType[t])
      return bad(fmt::format("{} has more than {} of '{}'", c == red ? "Red" : "Black",
                             kMaxOfType[t], ch));
    if (t == pawn && i + 1 < name.size() && name[i + 1] == '(') {
      const auto close = name.find(')', i + 2);
      if (close == std::string_view::npos || close != i + 3 || name[i + 2] < '0' ||
          name[i + 2] > '9')
        return bad("a pawn level is written P(n) with one digit n");
      const int level = name[i + 2] - '0';
      // A pawn of this colour must be able to stand somewhere on that rank.
      bool possible = false;
      for (int f = 0; f < kFiles; ++f) possible |= allowed(pawn, c, square(f, level));
      if (!possible)
        return bad(
            fmt::format("a {} pawn never stands on rank {}", c == red ? "red" : "black", level));
      m.levels[c].push_back(static_cast<std::int8_t>(level));
      i = close;
    }
  }
  if (side != 1) return bad("it needs two kings (K...K...)");
  // With some pawns of a side pinned and others not, a board whose free pawn stands on a pinned
  // rank would belong to the endgame twice; so a side pins all its pawns or none.
  for (int c = 0; c < 2; ++c)
    if (!m.levels[c].empty() && static_cast<int>(m.levels[c].size()) != m.count[c][pawn])
      return bad(
          fmt::format("{} pins some pawns but not all; pin every pawn of a side (e.g. "
                      "KP(5)P(6)K) or none",
                      c == 0 ? "Red" : "Black"));
  for (auto& l : m.levels) std::sort(l.begin(), l.end());
  if (m.armless())
    return bad(
        "neither side has a rook, knight, cannon or pawn, so every position is a draw "
        "(unless the kings face each other); there is nothing to build");
  return m;
}

Material material_of(const Board& b) {
  Material m;
  for (int s = 0; s < kSquares; ++s)
    if (b[s]) ++m.count[color_of(b[s])][type_of(b[s])];
  return m;
}

std::vector<Slot> layout(const Material& m) {
  std::vector<Slot> v;
  for (int c = 0; c < 2; ++c) {
    const Color col = Color(c);
    v.push_back({col, king, -1});
    for (PieceType t : {rook, knight, cannon})
      for (int i = 0; i < m.count[c][t]; ++i) v.push_back({col, t, -1});
    const int unpinned = m.count[c][pawn] - static_cast<int>(m.levels[c].size());
    for (int i = 0; i < unpinned; ++i) v.push_back({col, pawn, -1});
    for (auto l : m.levels[c]) v.push_back({col, pawn, l});
    for (PieceType t : {guard, minister})
      for (int i = 0; i < m.count[c][t]; ++i) v.push_back({col, t, -1});
  }
  return v;
}

Material without(const Material& m, Color c, PieceType t, std::int8_t level) {
  Material r = m;
  --r.count[c][t];
  if (t == pawn && level >= 0) {
    auto& l = r.levels[c];
    l.erase(std::find(l.begin(), l.end(), level));
  }
  return r;
}

Material advanced(const Material& m, Color c, std::int8_t from_level, std::int8_t to_level) {
  Material r = m;
  auto& l = r.levels[c];
  *std::find(l.begin(), l.end(), from_level) = to_level;
  std::sort(l.begin(), l.end());
  return r;
}

const std::vector<std::string>& fang151() {
  static const std::vector<std::string> kList = {
      "KRKGGMM",  "KRKGGM",   "KRKGMM",   "KRKGG",    "KRKGM",    "KRKMM",    "KRKG",
      "KRKM",     "KRK",      "KNNKGGMM", "KNNKGGM",  "KNNKGMM",  "KNNKGG",   "KNNKGM",
      "KNNKMM",   "KNNKG",    "KNNKM",    "KNNK",     "KNCKGGMM", "KNCKGGM",  "KNCKGMM",
      "KNCKGG",   "KNCKGM",   "KNCKMM",   "KNCKG",    "KNCKM",    "KNCK",     "KNPKGGMM",
      "KNPKGGM",  "KNPKGMM",  "KNPKGG",   "KNPKGM",   "KNPKMM",   "KNPKG",    "KNPKM",
      "KNPK",     "KNKGGMM",  "KNKGGM",   "KNKGMM",   "KNKGG",    "KNKGM",    "KNKMM",
      "KNKG",     "KNKM",     "KNK",      "KCCGKGGM", "KCCGKGMM", "KCCMMKMM", "KCCMKGGM",
      "KCCMKGMM", "KCCKGGMM", "KCCGKGG",  "KCCGKGM",  "KCCGKMM",  "KCCMMKM",  "KCCMKGG",
      "KCCMKGM",  "KCCMKMM",  "KCCKGGM",  "KCCKGMM",  "KCCGKG",   "KCCGKM",   "KCCMMK",
      "KCCMKG",   "KCCMKM",   "KCCKGG",   "KCCKGM",   "KCCKMM",   "KCCGK",    "KCCMK",
      "KCCKG",    "KCCKM",    "KCCK",     "KCPGKGGM", "KCPGKGMM", "KCPMKGGM", "KCPMKGMM",
      "KCPKGGMM", "KCPGKGG",  "KCPGKGM",  "KCPGKMM",  "KCPMKGG",  "KCPMKGM",  "KCPMKMM",
      "KCPKGGM",  "KCPKGMM",  "KCPGKG",   "KCPGKM",   "KCPMKG",   "KCPMKM",   "KCPKGG",
      "KCPKGM",   "KCPKMM",   "KCPGK",    "KCPMK",    "KCPKG",    "KCPKM",    "KCPK",
      "KCGKGGM",  "KCGKGMM",  "KCMMKMM",  "KCMKGGM",  "KCMKGMM",  "KCKGGMM",  "KCGKGG",
      "KCGKGM",   "KCGKMM",   "KCMMKM",   "KCMKGG",   "KCMKGM",   "KCMKMM",   "KCKGGM",
      "KCKGMM",   "KCGKG",    "KCGKM",    "KCMMK",    "KCMKG",    "KCMKM",    "KCKGG",
      "KCKGM",    "KCKMM",    "KCGK",     "KCMK",     "KCKG",     "KCKM",     "KCK",
      "KPGKGGM",  "KPGKGMM",  "KPMKGGM",  "KPMKGMM",  "KPKGGMM",  "KPGKGG",   "KPGKGM",
      "KPGKMM",   "KPMKGG",   "KPMKGM",   "KPMKMM",   "KPKGGM",   "KPKGMM",   "KPGKG",
      "KPGKM",    "KPMKG",    "KPMKM",    "KPKGG",    "KPKGM",    "KPKMM",    "KPGK",
      "KPMK",     "KPKG",     "KPKM",     "KPK"};
  return kList;
}

}  // namespace retra::xiangqi
