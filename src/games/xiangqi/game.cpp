// The xiangqi Game: the closure of supporting endgames, ranking, converting moves.
// Thread safety: a Game is immutable after closure() returns.
#include "src/games/xiangqi/game.hpp"

#include <cassert>
#include <functional>
#include <set>

#include <fmt/format.h>

namespace retra::xiangqi {

namespace {

// The next level of a pinned pawn (its rank one step forward), or -1 on the last rank.
int next_level(const Slot& s) {
  const int next = s.color == red ? s.level + 1 : s.level - 1;
  return next >= 0 && next < kRanks ? next : -1;
}

// The endgame after a pinned pawn `mover` captures `victim` with a forward step: the victim gone
// and the pawn one level further.
Material capture_advancing(const Material& m, const Slot& mover, const Slot& victim) {
  return advanced(without(m, victim.color, victim.type, victim.level), mover.color, mover.level,
                  static_cast<std::int8_t>(next_level(mover)));
}

// The endgames one move of endgame m can lead to (captures, pinned pawn advances, and captures
// by a pinned pawn stepping forward, which do both).
std::vector<Material> successors(const Material& m) {
  std::vector<Material> out;
  const std::vector<Slot> slots = layout(m);
  for (const Slot& s : slots) {
    if (s.type == king) continue;
    out.push_back(without(m, s.color, s.type, s.level));
    if (s.type == pawn && s.level >= 0 && next_level(s) >= 0) {
      out.push_back(advanced(m, s.color, s.level, static_cast<std::int8_t>(next_level(s))));
      for (const Slot& v : slots)
        if (v.color != s.color && v.type != king) out.push_back(capture_advancing(m, s, v));
    }
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<const Game>> Game::closure(const std::vector<Material>& targets) {
  // Depth-first post-order: every endgame after the endgames it depends on.
  std::vector<Material> order;
  std::set<std::string> seen;
  std::function<void(const Material&)> visit = [&](const Material& m) {
    if (m.armless() || !seen.insert(m.name()).second) return;
    for (const Material& d : successors(m)) visit(d);
    order.push_back(m);
  };
  for (const Material& m : targets) {
    if (m.armless())
      return Error(Errc::invalid_argument,
                   fmt::format("endgame {} has no attacking piece: every position is a draw "
                               "unless the kings face each other",
                               m.name()));
    if (m.pieces() > kMaxPieces)
      return Error(Errc::invalid_argument,
                   fmt::format("endgame {} has more than {} pieces", m.name(), kMaxPieces));
    visit(m);
  }
  auto g = std::make_shared<Game>();
  g->eg_.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    Endgame& e = g->eg_[i];
    e.material = order[i];
    e.name = order[i].name();
    e.indexer = std::make_unique<Indexer>(order[i]);
    e.slots = e.indexer->slots();
    e.n = static_cast<int>(e.slots.size());
    for (const Slot& s : e.slots) e.codes.push_back(code(s.type, s.color));
    g->by_name_[e.name] = static_cast<int>(i);
  }
  for (Endgame& e : g->eg_) {
    e.capture_target.assign(e.n, kArmless);
    e.advance_target.assign(e.n, -2);
    e.capture_advance_target.assign(static_cast<std::size_t>(e.n * e.n), -2);
    for (int i = 0; i < e.n; ++i) {
      const Slot& s = e.slots[i];
      if (s.type == king) continue;
      const Material w = without(e.material, s.color, s.type, s.level);
      e.capture_target[i] = w.armless() ? kArmless : g->by_name_.at(w.name());
      if (s.type == pawn && s.level >= 0) {
        const int next = next_level(s);
        e.advance_target[i] = next >= 0 ? g->by_name_.at(advanced(e.material, s.color, s.level,
                                                                  static_cast<std::int8_t>(next))
                                                             .name())
                                        : -1;  // a pawn on the last rank only moves sideways
        if (next >= 0)
          for (int v = 0; v < e.n; ++v)
            if (e.slots[v].color != s.color && e.slots[v].type != king)
              e.capture_advance_target[static_cast<std::size_t>(i * e.n + v)] =
                  g->by_name_.at(capture_advancing(e.material, s, e.slots[v]).name());
      }
    }
  }
  return std::shared_ptr<const Game>(std::move(g));
}

int Game::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

std::vector<int> Game::dependencies(int s) const {
  std::set<int> d;
  for (int t : eg_[s].capture_target)
    if (t >= 0) d.insert(t);
  for (int t : eg_[s].advance_target)
    if (t >= 0) d.insert(t);
  for (int t : eg_[s].capture_advance_target)
    if (t >= 0) d.insert(t);
  return {d.begin(), d.end()};
}

Position Game::unrank(int s, std::uint64_t i) const {
  const std::uint64_t half = eg_[s].indexer->size();
  Position p;
  p.index = i;
  p.side = i >= half ? black : red;
  p.valid = eg_[s].indexer->unrank(i >= half ? i - half : i, p.sq.data());
  return p;
}

std::uint64_t Game::rank_mirrored(int s, const Position& p, bool* mirrored, bool* symmetric) const {
  const Indexer& ix = *eg_[s].indexer;
  return (p.side == black ? ix.size() : 0) + ix.rank(p.sq.data(), mirrored, symmetric);
}

bool Game::next(int s, Position& p) const {
  if (p.index + 1 >= segment_size(s)) return false;
  const std::uint64_t half = eg_[s].indexer->size();
  if (p.index + 1 == half) {  // Black to move from here on
    p = unrank(s, p.index + 1);
    return true;
  }
  const std::uint64_t i = p.side == black ? p.index - half : p.index;
  ++p.index;
  p.valid = eg_[s].indexer->step(i, p.sq.data());
  return true;
}

Board Game::board(int s, const Position& p) const {
  Board b{};
  const Endgame& e = eg_[s];
  for (int i = 0; i < e.n; ++i) b[p.sq[i]] = e.codes[i];
  return b;
}

std::optional<int> Game::terminal_value(int s, const Position& p) const {
  if (can_capture_king(board(s, p), p.side)) return 1;
  return std::nullopt;
}

Position Game::relayout(int s, const Position& p, int moved, int to, int removed,
                        int target) const {
  const Endgame& e = eg_[s];
  const Endgame& t = eg_[target];
  struct Piece {
    Slot slot;
    std::uint8_t sq;
    bool used;
  };
  Piece pieces[kMaxPieces];
  int n = 0;
  for (int i = 0; i < e.n; ++i) {
    if (i == removed) continue;
    Piece pc{e.slots[i], p.sq[i], false};
    if (i == moved) {
      pc.sq = static_cast<std::uint8_t>(to);
      if (pc.slot.level >= 0) pc.slot.level = static_cast<std::int8_t>(rank_of(to));
    }
    pieces[n++] = pc;
  }
  Position c;
  c.side = opposite(p.side);
  for (int j = 0; j < t.n; ++j) {
    const Slot& want = t.slots[j];
    [[maybe_unused]] bool placed = false;
    for (int k = 0; k < n; ++k) {
      Piece& pc = pieces[k];
      if (!pc.used && pc.slot.color == want.color && pc.slot.type == want.type &&
          pc.slot.level == want.level) {
        pc.used = true;
        c.sq[j] = pc.sq;
        placed = true;
        break;
      }
    }
    // The target endgame is the one these pieces make (closure() chose it): every slot is filled.
    assert(placed);
  }
  return c;
}

Result<Position> Game::from_board(int s, const Board& b, Color side) const {
  const Endgame& e = eg_[s];
  Position p;
  p.side = side;
  // The occupied squares in one scan; then pinned pawns first (they must match their rank), then
  // everything else by colour and type. Bit masks, no allocation: this is on the probe path.
  std::uint8_t occupied[kSquares];
  int pieces = 0;
  for (int sq = 0; sq < kSquares; ++sq)
    if (b[sq]) occupied[pieces++] = static_cast<std::uint8_t>(sq);
  auto foreign = [&] {
    return Error(Errc::invalid_argument,
                 fmt::format("the position does not belong to endgame {}", e.name));
  };
  if (pieces != e.n) return foreign();
  std::uint32_t used = 0, assigned = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < pieces; ++k) {
      if (assigned >> k & 1) continue;
      const int sq = occupied[k];
      const Color c = color_of(b[sq]);
      const PieceType t = type_of(b[sq]);
      int found = -1;
      for (int i = 0; i < e.n && found < 0; ++i) {
        if ((used >> i & 1) || e.slots[i].color != c || e.slots[i].type != t) continue;
        const bool pinned = e.slots[i].level >= 0;
        if (pass == 0 && pinned && e.slots[i].level == rank_of(sq)) found = i;
        if (pass == 1 && !pinned) found = i;
      }
      if (found < 0) {
        if (pass == 0) continue;
        return foreign();
      }
      used |= 1u << found;
      assigned |= 1u << k;
      p.sq[found] = static_cast<std::uint8_t>(sq);
    }
  return p;
}

}  // namespace retra::xiangqi
