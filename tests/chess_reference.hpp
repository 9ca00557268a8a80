// An independent chess solver for the tests, written differently from the build: no index, no
// symmetry, no kernel. Positions are boards (board.hpp, whose move generation is tested against
// stockfish), grouped by their pieces and the exact squares of their pawns; a group is solved by
// retrograde analysis over its explicit move graph (predecessor lists of board ids), level by
// level from the definitions of distance to zeroing under the 50-move rule (Syzygy's DTZ50'',
// which gives the WDL50 classes) and distance to mate; every move that leaves the group (a
// capture, a pawn move, a promotion) reads the final values of the group it leads to, solved
// first. Positions with an en-passant right are evaluated as the best over their moves. Boards of
// other materials than the one under test are read from `outside` (the tables under test, each
// checked by its own reference run), so that checking one table solves only that table.
// Values are bytes: DTZ in the tables' encoding (src/games/chess/values.hpp: 0 draw, 2d + 1 win,
// 2d + 2 loss), DTM in Fang's (0 draw, plies + 2, odd wins), not the tables' own DTM bytes.
// Thread safety: none.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/games/chess/board.hpp"
#include "src/games/chess/material.hpp"
#include "test_util.hpp"

namespace retra::chess::reference {

class Solver {
 public:
  struct Values {
    int dtz = 0, dtm = 0;  // byte codes
  };
  // Solves positions of material `m` (either colouring) itself; others through `outside`.
  Solver(const Material& m, std::function<Values(const Board&)> outside)
      : material_(m), outside_(std::move(outside)) {}

  // The values of a legal position (en-passant right or not).
  Values value(const Board& b) {
    const Material bm = material_of(b);
    if (bm.pieces() == 2) return {};  // the bare kings: a draw
    if (!(bm == material_) && !(bm == material_.flipped())) return outside_(b);
    if (b.ep >= 0) return best_over_moves(b);
    Group& g = group_of(b);
    const std::size_t id = g.id_of(b);
    return {g.dtz[id], g.dtm[id]};
  }
  std::size_t positions() const { return positions_; }

 private:
  // A group: fixed pieces (colour, type) and fixed pawn squares; its positions are every
  // placement of the other pieces (in a canonical order of identical pieces) with either side to
  // move, numbered densely.
  struct Group {
    std::vector<std::uint8_t> pieces;  // board codes of the non-pawn pieces, sorted
    std::vector<int> pawn_sq;          // squares of the pawns
    std::vector<std::uint8_t> pawn_code;
    std::vector<std::uint8_t> dtz, dtm;
    std::size_t size = 0;

    std::size_t id_of(const Board& b) const {
      // (code, square) pairs of the non-pawn pieces, sorted; a fixed array, since this runs for
      // every move of every position (at most 7 pieces).
      std::array<std::pair<std::uint8_t, int>, 8> ps;
      std::size_t k = 0;
      for (int s = 0; s < 64; ++s)
        if (b.piece[s] && type_of(b.piece[s]) != pawn) ps[k++] = {b.piece[s], s};
      for (std::size_t i = 1; i < k; ++i)  // insertion sort: a handful of pieces
        for (std::size_t j = i; j > 0 && ps[j] < ps[j - 1]; --j) std::swap(ps[j], ps[j - 1]);
      std::size_t id = 0;
      while (k > 0) id = id * 64 + static_cast<std::size_t>(ps[--k].second);
      return id * 2 + (b.side == black ? 1 : 0);
    }
    // The board of id (false when pieces overlap or identical pieces are out of order).
    bool board_of(std::size_t id, Board& b) const {
      b = Board{};
      b.side = id & 1 ? black : white;
      id >>= 1;
      for (std::size_t k = 0; k < pawn_sq.size(); ++k) b.piece[pawn_sq[k]] = pawn_code[k];
      int prev_sq = -1;
      std::uint8_t prev = 0;
      for (std::size_t k = 0; k < pieces.size(); ++k) {
        const int s = static_cast<int>(id % 64);
        id /= 64;
        if (b.piece[s]) return false;
        if (pieces[k] == prev && s <= prev_sq) return false;  // identical pieces: ascending
        b.piece[s] = pieces[k];
        prev = pieces[k];
        prev_sq = s;
      }
      return true;
    }
  };

  // The group's key: (code, square) of each pawn in square order, then the sorted codes of the
  // other pieces, one byte each (short enough to stay in the string's own buffer).
  static std::string key_of(const Board& b) {
    std::string k;
    std::array<std::uint8_t, 8> pieces;
    std::size_t n = 0;
    for (int s = 0; s < 64; ++s)
      if (b.piece[s]) {
        if (type_of(b.piece[s]) == pawn) {
          k += static_cast<char>(b.piece[s]);
          k += static_cast<char>(s);
        } else {
          pieces[n++] = b.piece[s];
        }
      }
    for (std::size_t i = 1; i < n; ++i)  // insertion sort: a handful of pieces
      for (std::size_t j = i; j > 0 && pieces[j] < pieces[j - 1]; --j)
        std::swap(pieces[j], pieces[j - 1]);
    k += '|';
    for (std::size_t i = 0; i < n; ++i) k += static_cast<char>(pieces[i]);
    return k;
  }

  Group& group_of(const Board& b) {
    const std::string key = key_of(b);
    if (auto it = groups_.find(key); it != groups_.end()) return *it->second;
    auto g = std::make_unique<Group>();
    for (int s = 0; s < 64; ++s)
      if (b.piece[s]) {
        if (type_of(b.piece[s]) == pawn) {
          g->pawn_sq.push_back(s);
          g->pawn_code.push_back(b.piece[s]);
        } else {
          g->pieces.push_back(b.piece[s]);
        }
      }
    std::sort(g->pieces.begin(), g->pieces.end());
    g->size = 2;
    for (std::size_t k = 0; k < g->pieces.size(); ++k) g->size *= 64;
    Group& ref = *g;
    solve(ref);
    groups_.emplace(key, std::move(g));
    return ref;
  }

  // The value of a position with an en-passant right (or any position) from its moves.
  Values best_over_moves(const Board& b) {
    Fold z(false), m(true);
    int moves = 0;
    for_each_legal_move(b, [&](const Move& mv) {
      ++moves;
      Board c = play(b, mv);
      c = normalize(c);
      const Values v = value(c);
      const bool zeroing = mv.capture || type_of(b.piece[mv.from]) == pawn;
      z.add(v.dtz, zeroing);
      m.add(v.dtm, zeroing);
    });
    if (!moves) {
      const int end = in_check(b, b.side) ? 2 : 0;
      return {end, end};
    }
    return {z.value(), m.value()};
  }

  static Board normalize(Board c) {
    if (c.ep < 0) return c;
    bool any = false;
    for_each_legal_move(c, [&](const Move& x) { any = any || x.en_passant; });
    if (!any) c.ep = -1;
    return c;
  }

  // The definition, move by move: a child's byte (its mover's view) folded into ours.
  struct Fold {
    bool dtm;
    bool draw = false;
    int win = INT_MAX, loss = -1;
    explicit Fold(bool d) : dtm(d) {}
    void add(int c, bool zeroing) {
      if (c == 0) {
        draw = true;
        return;
      }
      const bool child_wins = c & 1;
      int level;
      if (dtm) {
        level = c + 1;
      } else {
        const int l = child_wins ? (c - 1) / 2 : (c - 2) / 2;
        level = zeroing ? (l <= 100 ? 1 : 101) : l + 1;
      }
      if (child_wins)
        loss = std::max(loss, level);
      else
        win = std::min(win, level);
    }
    int value() const {
      if (win != INT_MAX) return dtm ? win : 2 * win + 1;
      if (draw) return 0;
      return dtm ? loss : 2 * loss + 2;
    }
  };

  // Retrograde analysis of one group over its explicit graph, for both metrics.
  void solve(Group& g) {
    const std::size_t n = g.size;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (child, parent) of quiet moves
    std::vector<int> quiet(n, 0);
    std::vector<char> legal(n, 0);
    std::vector<Fold> exits_z(n, Fold(false)), exits_m(n, Fold(true));
    std::vector<int> end(n, -1);  // no moves: mate 2 or stalemate 0
    Board b;
    for (std::size_t id = 0; id < n; ++id) {
      if (!g.board_of(id, b) || board_error(b)) continue;
      legal[id] = 1;
      ++positions_;
      int moves = 0;
      for_each_legal_move(b, [&](const Move& mv) {
        ++moves;
        const bool zeroing = mv.capture || type_of(b.piece[mv.from]) == pawn;
        if (!zeroing) {
          Board c = play(b, mv);
          edges.emplace_back(static_cast<std::uint32_t>(g.id_of(c)),
                             static_cast<std::uint32_t>(id));
          ++quiet[id];
          return;
        }
        const Values v = value(normalize(play(b, mv)));  // another group, solved first
        exits_z[id].add(v.dtz, true);
        exits_m[id].add(v.dtm, true);
      });
      if (!moves) end[id] = in_check(b, b.side) ? 2 : 0;
    }
    const test::Predecessors preds(n, edges);
    g.dtz = retrograde(g, false, legal, preds, quiet, exits_z, end);
    g.dtm = retrograde(g, true, legal, preds, quiet, exits_m, end);
  }

  // Level by level: a position is won at level t + 1 when a quiet move reaches a position lost at
  // level t (or when its conversions win at a level); lost at level max(t + 1, what its
  // conversions force) when its last quiet child was won at level t and no conversion draws or
  // wins. Distance to mate counts levels in its byte codes (2: mated); distance to zeroing counts
  // plies to the next zeroing move (0: mated) and codes them 2l + 1 / 2l + 2.
  static std::vector<std::uint8_t> retrograde(
      const Group& g, bool dtm, const std::vector<char>& legal, const test::Predecessors& preds,
      const std::vector<int>& quiet, const std::vector<Fold>& exits, const std::vector<int>& end) {
    const std::size_t n = g.size;
    struct Item {
      std::size_t id;
      bool win;
    };
    std::map<int, std::vector<Item>> at;
    for (std::size_t id = 0; id < n; ++id) {
      if (!legal[id]) continue;
      if (end[id] == 2)
        at[dtm ? 2 : 0].push_back({id, false});  // mated
      else if (end[id] == 0)
        continue;  // stalemate: a draw
      else if (exits[id].win != INT_MAX)
        at[exits[id].win].push_back({id, true});
      else if (quiet[id] == 0 && !exits[id].draw)
        at[exits[id].loss].push_back({id, false});  // every move converts into a lost game
    }
    std::vector<std::uint8_t> value(n, 0);
    std::vector<char> decided(n, 0);
    std::vector<int> left(quiet);
    while (!at.empty()) {
      const int t = at.begin()->first;
      std::vector<Item> items = std::move(at.begin()->second);
      at.erase(at.begin());
      std::vector<Item> now;
      for (const Item& x : items) {
        if (decided[x.id]) continue;
        decided[x.id] = 1;
        value[x.id] = static_cast<std::uint8_t>(dtm ? t : x.win ? 2 * t + 1 : 2 * t + 2);
        now.push_back(x);
      }
      for (const Item& x : now)
        for (std::uint32_t p : preds.of(x.id)) {
          if (decided[p]) continue;
          if (!x.win)
            at[t + 1].push_back({p, true});
          else if (--left[p] == 0 && !exits[p].draw && exits[p].win == INT_MAX)
            at[std::max(t + 1, exits[p].loss)].push_back({p, false});
        }
    }
    return value;  // whatever is undecided is a draw (0)
  }

  Material material_;
  std::function<Values(const Board&)> outside_;
  std::unordered_map<std::string, std::unique_ptr<Group>> groups_;
  std::size_t positions_ = 0;
};

}  // namespace retra::chess::reference
