// Chess material signatures, pawn profiles and slot layouts (material.hpp).
// Thread safety: pure functions.
#include "src/games/chess/material.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

namespace retra::chess {

namespace {
constexpr PieceType kNameOrder[] = {queen, rook, bishop, knight, pawn};
}  // namespace

int Material::pieces(Color c) const {
  int n = 0;
  for (int t = 0; t < kTypes; ++t) n += count[c][t];
  return n;
}

int Material::pieces() const { return pieces(white) + pieces(black); }

std::string Material::name() const {
  std::string s;
  for (int c = 0; c < 2; ++c) {
    if (c == 1) s += 'v';
    s += 'K';
    for (PieceType t : kNameOrder) s.append(count[c][t], piece_letter(t, white));
  }
  return s;
}

Material Material::flipped() const {
  Material m = *this;
  std::swap(m.count[0], m.count[1]);
  return m;
}

bool Material::canonical() const {
  const int a = pieces(white), b = pieces(black);
  if (a != b) return a > b;
  for (PieceType t : kNameOrder)
    if (count[0][t] != count[1][t]) return count[0][t] > count[1][t];
  return true;  // symmetric
}

Result<Material> parse_material(std::string_view name) {
  auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument,
                 fmt::format("endgame '{}': {} (write it like KQvKR: each side's king, then its "
                             "pieces from Q R B N P)",
                             name, why));
  };
  const auto v = name.find_first_of("vV");
  if (v == std::string_view::npos || name.find_first_of("vV", v + 1) != std::string_view::npos)
    return bad("expected exactly one 'v' between the two sides");
  Material m;
  for (int c = 0; c < 2; ++c) {
    const std::string_view side = c == 0 ? name.substr(0, v) : name.substr(v + 1);
    if (side.empty() || (side[0] != 'K' && side[0] != 'k'))
      return bad(
          fmt::format("the {} side must start with its king K", c == 0 ? "first" : "second"));
    m.count[c][king] = 1;
    for (char ch : side.substr(1)) {
      auto t = piece_type_of(ch);
      if (!t) return bad(fmt::format("unknown piece letter '{}'", ch));
      if (*t == king) return bad("a side has two kings");
      ++m.count[c][*t];
    }
    if (m.count[c][pawn] > 8) return bad("a side has more than 8 pawns");
  }
  if (m.pieces() > kMaxPieces)
    return bad(fmt::format("{} pieces; tables hold at most {}", m.pieces(), kMaxPieces));
  return m;
}

Material material_of(const Board& b) {
  Material m;
  for (std::uint8_t pc : b.piece)
    if (pc) ++m.count[color_of(pc)][type_of(pc)];
  return m;
}

std::string TableKey::name() const {
  std::string s = material.name();
  for (int c = 0; c < 2; ++c) {
    if (profile.ranks[c].empty()) continue;
    s += c == 0 ? "_w" : "_b";
    for (std::int8_t r : profile.ranks[c]) s += static_cast<char>('1' + r);
  }
  return s;
}

Result<TableKey> parse_table_key(std::string_view name) {
  const auto us = name.find('_');
  auto m = parse_material(name.substr(0, us));
  if (!m) return std::move(m).error();
  TableKey k;
  k.material = *m;
  auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument, fmt::format("segment '{}': {}", name, why));
  };
  if (!m->canonical() || !(m->canonicalized() == *m))
    return bad(fmt::format("the stronger side comes first: {}", m->canonicalized().name()));
  std::size_t i = us;
  while (i != std::string_view::npos && i < name.size()) {
    if (i + 1 >= name.size() || (name[i + 1] != 'w' && name[i + 1] != 'b'))
      return bad("a pawn profile is _w<ranks> or _b<ranks>");
    const int c = name[i + 1] == 'w' ? 0 : 1;
    std::size_t j = i + 2;
    for (; j < name.size() && name[j] != '_'; ++j) {
      if (name[j] < '2' || name[j] > '7') return bad("pawn ranks are 2..7");
      k.profile.ranks[c].push_back(static_cast<std::int8_t>(name[j] - '1'));
    }
    i = j < name.size() ? j : std::string_view::npos;
  }
  for (int c = 0; c < 2; ++c) {
    if (static_cast<int>(k.profile.ranks[c].size()) != m->count[c][pawn])
      return bad("the pawn profile must list one rank per pawn");
    if (!std::is_sorted(k.profile.ranks[c].begin(), k.profile.ranks[c].end()))
      return bad("pawn ranks are listed in ascending order");
  }
  if (k.name() != name) return bad(fmt::format("write it as {}", k.name()));
  return k;
}

std::vector<PawnProfile> profiles(const Material& m) {
  std::vector<PawnProfile> out;
  PawnProfile p;
  std::function<void(int, int, int)> rec = [&](int c, int left, int min_rank) {
    if (left == 0) {
      if (c == 1) {
        out.push_back(p);
        return;
      }
      return rec(1, m.count[1][pawn], 1);
    }
    for (int r = min_rank; r <= 6; ++r) {
      p.ranks[c].push_back(static_cast<std::int8_t>(r));
      rec(c, left - 1, r);
      p.ranks[c].pop_back();
    }
  };
  rec(0, m.count[0][pawn], 1);
  return out;
}

std::vector<Slot> layout(const TableKey& k) {
  std::vector<Slot> s;
  for (int c = 0; c < 2; ++c) {
    s.push_back({Color(c), king, -1});
    for (PieceType t : {queen, rook, bishop, knight})
      for (int i = 0; i < k.material.count[c][t]; ++i) s.push_back({Color(c), t, -1});
    for (std::int8_t r : k.profile.ranks[c]) s.push_back({Color(c), pawn, r});
  }
  return s;
}

std::vector<Material> materials_with(int pieces) {
  std::vector<Material> out;
  Material m;
  m.count[0][king] = m.count[1][king] = 1;
  std::function<void(int, int)> rec = [&](int slot, int left) {
    if (slot == 10) {
      if (left == 0 && m.canonical()) out.push_back(m);
      return;
    }
    const int c = slot / 5;
    const PieceType t = kNameOrder[slot % 5];
    for (int k = 0; k <= left && (t != pawn || k <= 8); ++k) {
      m.count[c][t] = static_cast<std::uint8_t>(k);
      rec(slot + 1, left - k);
    }
    m.count[c][t] = 0;
  };
  rec(0, pieces - 2);
  std::sort(out.begin(), out.end(),
            [](const Material& a, const Material& b) { return a.name() < b.name(); });
  return out;
}

}  // namespace retra::chess
