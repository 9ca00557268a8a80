// The chess Game: the closure of tables and segments, the transitions of converting moves,
// ranking and unranking. Thread safety: a Game is immutable after closure() returns.
#include "src/games/chess/game.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

namespace retra::chess {

namespace {

constexpr PieceType kPromotions[4] = {queen, rook, bishop, knight};

// A piece of a child position: what it is and where it comes from in the parent (-1: promoted).
struct Piece {
  Color color;
  PieceType type;
  int rank;  // pawns only
  int src;
};

// The segment of a child's pieces, colour-flipped when its material is not canonical.
TableKey key_of(std::vector<Piece> pieces, bool* flip) {
  Material m;
  for (const Piece& p : pieces) ++m.count[p.color][p.type];
  *flip = !m.canonical() || !(m.canonicalized() == m);
  TableKey k;
  k.material = *flip ? m.flipped() : m;
  for (Piece& p : pieces) {
    if (*flip) {
      p.color = opposite(p.color);
      if (p.type == pawn) p.rank = 7 - p.rank;
    }
    if (p.type == pawn) k.profile.ranks[p.color].push_back(static_cast<std::int8_t>(p.rank));
  }
  for (auto& r : k.profile.ranks) std::sort(r.begin(), r.end());
  return k;
}

// Where each slot of the target's layout takes its piece from.
Transition make_transition(std::vector<Piece> pieces, bool flip, const std::vector<Slot>& target,
                           int target_id) {
  Transition t;
  t.target = target_id;
  t.flip = flip;
  t.from.fill(-1);
  for (Piece& p : pieces)
    if (flip) {
      p.color = opposite(p.color);
      if (p.type == pawn) p.rank = 7 - p.rank;
    }
  std::vector<bool> used(pieces.size(), false);
  for (std::size_t j = 0; j < target.size(); ++j)
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const Piece& p = pieces[k];
      if (used[k] || p.color != target[j].color || p.type != target[j].type) continue;
      if (p.type == pawn && p.rank != target[j].rank) continue;
      used[k] = true;
      t.from[j] = static_cast<std::int8_t>(p.src);
      break;
    }
  return t;
}

std::vector<Piece> pieces_of(const std::vector<Slot>& slots) {
  std::vector<Piece> v;
  for (std::size_t i = 0; i < slots.size(); ++i)
    v.push_back({slots[i].color, slots[i].type, slots[i].rank, static_cast<int>(i)});
  return v;
}

// The converting moves of a layout, as child piece lists: each callback gets the pieces and the
// kind of move. Used for the closure (keys) and for the transitions (slot maps).
struct Conversions {
  enum Kind { capture, push1, push2, pawn_capture, promote, capture_promote };
  template <class F>
  static void each(const std::vector<Slot>& slots, F&& f) {
    const int n = static_cast<int>(slots.size());
    for (int v = 0; v < n; ++v) {
      if (slots[v].type == king) continue;
      auto p = pieces_of(slots);
      p.erase(p.begin() + v);
      f(capture, -1, v, -1, p);
    }
    for (int i = 0; i < n; ++i) {
      if (slots[i].type != pawn) continue;
      const Color c = slots[i].color;
      const int dir = c == white ? 1 : -1, last = c == white ? 7 : 0;
      const int r1 = slots[i].rank + dir;
      auto moved = [&](int rank, int victim, int promoted) {
        std::vector<Piece> p;
        for (int k = 0; k < n; ++k) {
          if (k == victim) continue;
          Piece x{slots[k].color, slots[k].type, slots[k].rank, k};
          if (k == i) {
            if (promoted >= 0) {
              x.type = kPromotions[promoted];
              x.rank = -1;
              x.src = -1;
            } else {
              x.rank = rank;
            }
          }
          p.push_back(x);
        }
        return p;
      };
      if (r1 == last) {
        for (int k = 0; k < 4; ++k) f(promote, i, -1, k, moved(r1, -1, k));
      } else {
        f(push1, i, -1, -1, moved(r1, -1, -1));
        if (slots[i].rank == (c == white ? 1 : 6)) f(push2, i, -1, -1, moved(r1 + dir, -1, -1));
      }
      for (int v = 0; v < n; ++v) {
        if (slots[v].color == c || slots[v].type == king) continue;
        // A pawn is captured where we land, or beside us en passant (it passed us from its start).
        const int ep_rank = c == white ? 4 : 3;
        if (slots[v].type == pawn && slots[v].rank != r1 &&
            !(slots[v].rank == ep_rank && slots[i].rank == ep_rank))
          continue;
        if (r1 == last) {
          for (int k = 0; k < 4; ++k) f(capture_promote, i, v, k, moved(r1, v, k));
        } else {
          f(pawn_capture, i, v, -1, moved(r1, v, -1));
        }
      }
    }
  }
};

bool side_not_to_move_in_check(const Table& t, const std::uint8_t* sq, Color side) {
  Bitboard occ = 0;
  for (int i = 0; i < t.n; ++i) occ |= bit(sq[i]);
  const int k = sq[side == white ? t.bk_slot : 0];  // the king of the side not to move
  for (int i = 0; i < t.n; ++i) {
    if (t.slots[i].color != side) continue;
    if (attacks_square(t.slots[i].type, side, sq[i], k, occ)) return true;
  }
  return false;
}

}  // namespace

Result<std::shared_ptr<const Game>> Game::closure(const std::vector<Material>& targets,
                                                  bool with_dtm) {
  // Depth-first post-order: every segment after the segments its conversions lead to.
  std::vector<TableKey> order;
  std::set<std::string> seen;
  std::function<void(const TableKey&)> visit = [&](const TableKey& k) {
    if (!seen.insert(k.name()).second) return;
    const auto slots = layout(k);
    Conversions::each(slots, [&](int, int, int, int, const std::vector<Piece>& p) {
      bool flip;
      const TableKey child = key_of(p, &flip);
      if (child.material.pieces() > 2) visit(child);
    });
    order.push_back(k);
  };
  for (const Material& m0 : targets) {
    const Material m = m0.canonicalized();
    if (m.pieces() <= 2)
      return Error(
          Errc::invalid_argument,
          fmt::format("endgame {} has only the kings: every position is a draw", m.name()));
    if (m.pieces() > kMaxPieces)
      return Error(Errc::invalid_argument,
                   fmt::format("endgame {} has more than {} pieces", m.name(), kMaxPieces));
    for (const PawnProfile& pp : profiles(m)) visit(TableKey{m, pp});
  }
  auto g = std::make_shared<Game>();
  g->with_dtm_ = with_dtm;
  g->tables_.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    Table& t = g->tables_[i];
    t.key = order[i];
    t.name = order[i].name();
    t.indexer = std::make_unique<Indexer>(order[i]);
    t.slots = t.indexer->slots();
    t.n = static_cast<int>(t.slots.size());
    t.bk_slot = order[i].material.pieces(white);
    for (int k = 0; k < t.n; ++k)  // MoveGen relies on White's slots coming first
      assert(t.slots[static_cast<std::size_t>(k)].color == (k < t.bk_slot ? white : black));
    for (const Slot& s : t.slots) t.codes.push_back(code(s.type, s.color));
    g->by_name_[t.name] = static_cast<int>(i);
  }
  for (Table& t : g->tables_) {
    const auto n = static_cast<std::size_t>(t.n);
    t.capture.assign(n, {});
    t.push.assign(n, {});
    t.pawn_capture.assign(n, std::vector<Transition>(n));
    t.promote.assign(n, {});
    t.capture_promote.assign(n, std::vector<std::array<Transition, 4>>(n));
    Conversions::each(t.slots, [&](int kind, int i, int v, int k, const std::vector<Piece>& p) {
      bool flip;
      const TableKey child = key_of(p, &flip);
      if (child.material.pieces() <= 2) return;  // only the kings: a draw, never reached here
      const int id = g->by_name_.at(child.name());
      const Transition tr =
          make_transition(p, flip, g->tables_[static_cast<std::size_t>(id)].slots, id);
      const auto is = static_cast<std::size_t>(i), vs = static_cast<std::size_t>(v),
                 ks = static_cast<std::size_t>(k);
      switch (kind) {
        case Conversions::capture:
          t.capture[vs] = tr;
          break;
        case Conversions::push1:
          t.push[is][0] = tr;
          break;
        case Conversions::push2:
          t.push[is][1] = tr;
          break;
        case Conversions::pawn_capture:
          t.pawn_capture[is][vs] = tr;
          break;
        case Conversions::promote:
          t.promote[is][ks] = tr;
          break;
        case Conversions::capture_promote:
          t.capture_promote[is][vs][ks] = tr;
          break;
      }
    });
  }
  return std::shared_ptr<const Game>(std::move(g));
}

int Game::find(const std::string& segment_name) const {
  const bool dtm = segment_name.size() > 4 && segment_name.ends_with(".dtm");
  auto it = by_name_.find(dtm ? segment_name.substr(0, segment_name.size() - 4) : segment_name);
  if (it == by_name_.end() || (dtm && !with_dtm_)) return -1;
  return dtm ? it->second + tables() : it->second;
}

std::vector<int> Game::dependencies(int s) const {
  const Table& t = table(s);
  std::set<int> d;
  auto add = [&](const Transition& tr) {
    if (tr.target >= 0) d.insert(tr.target);
  };
  for (int i = 0; i < t.n; ++i) {
    const auto is = static_cast<std::size_t>(i);
    add(t.capture[is]);
    for (const auto& tr : t.push[is]) add(tr);
    for (const auto& tr : t.promote[is]) add(tr);
    for (int v = 0; v < t.n; ++v) {
      const auto vs = static_cast<std::size_t>(v);
      add(t.pawn_capture[is][vs]);
      for (const auto& tr : t.capture_promote[is][vs]) add(tr);
    }
    // En passant after a double push: the capture's segment is read through the pushed one.
    const Transition& two = t.push[is][1];
    if (two.target < 0) continue;
    const Table& u = tables_[static_cast<std::size_t>(two.target)];
    int pushed = -1;
    for (int j = 0; j < u.n; ++j)
      if (two.from[static_cast<std::size_t>(j)] == i) pushed = j;
    for (int k = 0; k < u.n; ++k)
      if (pushed >= 0 && u.slots[k].type == pawn && u.slots[k].color != t.slots[i].color)
        add(u.pawn_capture[static_cast<std::size_t>(k)][static_cast<std::size_t>(pushed)]);
  }
  std::vector<int> out;
  for (int x : d) out.push_back(is_dtm(s) ? x + tables() : x);
  return out;
}

Position Game::unrank(int s, std::uint64_t i) const {
  const Table& t = table(s);
  const std::uint64_t half = t.indexer->size();
  Position p;
  p.index = i;
  p.side = i >= half ? black : white;
  p.valid = t.indexer->unrank(i >= half ? i - half : i, p.sq.data()) &&
            !side_not_to_move_in_check(t, p.sq.data(), p.side);
  return p;
}

std::uint64_t Game::rank(int s, const Position& p) const {
  const Table& t = table(s);
  return (p.side == black ? t.indexer->size() : 0) + t.indexer->rank(p.sq.data());
}

bool Game::next(int s, Position& p) const {
  if (p.index + 1 >= segment_size(s)) return false;
  const Table& t = table(s);
  const std::uint64_t half = t.indexer->size();
  if (p.index + 1 == half) {  // black to move from here on
    p = unrank(s, p.index + 1);
    return true;
  }
  ++p.index;
  const std::uint64_t i = p.side == black ? p.index - half : p.index;
  p.valid = t.indexer->step(i, p.sq.data()) && !side_not_to_move_in_check(t, p.sq.data(), p.side);
  return true;
}

int Game::no_move_value(int s, const Position& p) const {
  const Table& t = table(s);
  // Mate (the side to move in check) loses at once; stalemate is a draw.
  if (!side_not_to_move_in_check(t, p.sq.data(), opposite(p.side))) return 0;
  return is_dtm(s) ? kMatedDtm : 2;  // dtz: 2d + 2 with d = 0
}

Board Game::board(int s, const Position& p) const {
  const Table& t = table(s);
  Board b;
  for (int i = 0; i < t.n; ++i) b.piece[p.sq[static_cast<std::size_t>(i)]] = t.codes[i];
  b.side = p.side;
  return b;
}

Result<Position> Game::from_board(int s, const Board& b) const {
  const Table& t = table(s);
  Position p;
  p.side = b.side;
  std::vector<bool> used(static_cast<std::size_t>(t.n), false);
  int placed = 0;
  for (int sq = 0; sq < 64; ++sq) {
    const std::uint8_t pc = b.piece[sq];
    if (!pc) continue;
    int slot = -1;
    for (int i = 0; i < t.n && slot < 0; ++i)
      if (!used[static_cast<std::size_t>(i)] && t.codes[i] == pc &&
          (t.slots[i].type != pawn || t.slots[i].rank == rank_of(sq)))
        slot = i;
    if (slot < 0)
      return Error(Errc::invalid_argument,
                   fmt::format("the position's pieces are not those of segment {}", t.name));
    used[static_cast<std::size_t>(slot)] = true;
    p.sq[static_cast<std::size_t>(slot)] = static_cast<std::uint8_t>(sq);
    ++placed;
  }
  if (placed != t.n)
    return Error(Errc::invalid_argument,
                 fmt::format("the position's pieces are not those of segment {}", t.name));
  p.valid = !side_not_to_move_in_check(t, p.sq.data(), p.side);
  p.index = rank(s, p);
  return p;
}

}  // namespace retra::chess
