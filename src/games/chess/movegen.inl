// Move and unmove generation of the chess Game (game.hpp), inline for the kernels' hot loops.
// Positions are piece lists (squares by slot); bitboards are built per call.
// Thread safety: pure functions of the immutable Game.
#pragma once

namespace retra::chess {

// Whether squares a and b stand side by side on one rank.
inline bool beside(int a, int b) {
  return rank_of(a) == rank_of(b) && (file_of(a) - file_of(b) == 1 || file_of(b) - file_of(a) == 1);
}

// Whether kings on wk and bk alone fix a pawnless placement's orientation: not both on the a1-h8
// diagonal (else the other pieces decide). Then moving any other piece keeps the orientation.
inline bool kings_fix_orientation(int wk, int bk) {
  return transform(4, wk) != wk || transform(4, bk) != bk;
}

// The pieces of one position as bitboards, and the legality test of a move.
struct MoveGen {
  const Game& g;
  const Table& t;
  const std::uint8_t* sq;
  Color us, them;
  Bitboard occ = 0, by[2] = {0, 0};
  int king_sq = 0;  // our king's square

  MoveGen(const Game& game, int s, const Position& p)
      : g(game), t(game.table(s)), sq(p.sq.data()), us(p.side), them(opposite(p.side)) {
    // White's slots come first, the black king's opens Black's (layout()): two register loops,
    // not an or into by[colour] that carries each iteration's result through memory.
    Bitboard w = 0, b = 0;
    for (int i = 0; i < t.bk_slot; ++i) w |= bit(sq[i]);
    for (int i = t.bk_slot; i < t.n; ++i) b |= bit(sq[i]);
    by[white] = w;
    by[black] = b;
    occ = w | b;
    king_sq = sq[us == white ? 0 : t.bk_slot];
  }

  // Whether square k is attacked by colour c's pieces, given the occupancy, ignoring slot
  // `removed` (a captured piece).
  bool attacked(int k, Color c, Bitboard o, int removed) const {
    for (int i = 0; i < t.n; ++i) {
      if (i == removed || t.slots[i].color != c) continue;
      if (attacks_square(t.slots[i].type, c, sq[i], k, o)) return true;
    }
    return false;
  }
  // The move of slot i from its square to `to`, capturing slot `victim` (or -1), leaves our king
  // safe. (The moved piece's own attacks do not matter: it is ours.)
  bool legal(int i, int to, int victim) const {
    const int from = sq[i];
    Bitboard o = (occ & ~bit(from)) | bit(to);
    const int k = t.slots[i].type == PieceType::king ? to : king_sq;
    return !attacked(k, them, o, victim);
  }
  // Where our non-king pieces may move without exposing our king, found once per position
  // instead of testing every move: *evasion is every square, or the checker's square and the
  // squares between it and our king, or none in double check; pin[i] is every square, or for a
  // pinned piece its line up to and including the pinner.
  void king_safety(Bitboard* evasion, Bitboard* pin) const {
    *evasion = ~Bitboard{0};
    int checks = 0;
    for (int i = 0; i < t.n; ++i) pin[i] = ~Bitboard{0};
    for (int i = 0; i < t.n; ++i) {
      if (t.slots[i].color != them) continue;
      const int s = sq[i];
      const PieceType pt = t.slots[i].type;
      if (!slider(pt)) {
        if (attacks_square(pt, them, s, king_sq, 0)) *evasion &= bit(s), ++checks;
        continue;
      }
      if (!attacks_square(pt, them, s, king_sq, 0)) continue;  // our king is not on its lines
      const Bitboard line = between(s, king_sq);
      const Bitboard blockers = line & occ;
      if (!blockers) {
        *evasion &= line | bit(s);
        ++checks;
      } else if (!(blockers & (blockers - 1)) && (blockers & by[us])) {
        const int b = std::countr_zero(blockers);
        for (int j = 0; j < t.n; ++j)
          if (sq[j] == b) pin[j] = line | bit(s);
      }
    }
    if (checks > 1) *evasion = 0;
  }
  int victim_on(int s) const {
    for (int i = 0; i < t.n; ++i)
      if (sq[i] == s && t.slots[i].color == them) return i;
    return -1;
  }

  // The child of a converting move in its target segment's layout and index; `moved` is at `to`,
  // a promoted piece (from = -1 in the transition) stands on `to`.
  std::uint64_t child_index(const Transition& tr, int moved, int to, Color child_side, bool dtm,
                            int* segment, int* transform_used = nullptr) const {
    const Table& target = g.table(tr.target);
    std::uint8_t c[kMaxPieces];
    for (int j = 0; j < target.n; ++j) {
      const int from = tr.from[j];
      int s = from < 0 || from == moved ? to : sq[from];
      if (tr.flip) s ^= 56;  // ranks mirrored
      c[j] = static_cast<std::uint8_t>(s);
    }
    const Color side = tr.flip ? opposite(child_side) : child_side;
    *segment = dtm ? tr.target + g.tables() : tr.target;
    return (side == black ? target.indexer->size() : 0) + target.indexer->rank(c, transform_used);
  }
};

template <class F>
MoveCount detail_moves(const Game& g, int s, const Position& p, F&& f, bool quiet_too) {
  MoveGen m(g, s, p);
  const Table& t = m.t;
  const bool dtm = g.is_dtm(s);
  const Bitboard own = m.by[m.us], enemy = m.by[m.them];
  MoveCount mc;
  auto conversion = [&](const Transition& tr, int moved, int to) {
    if (tr.target < 0) {  // only the kings are left: a draw
      f(Child<int>{Game::kKingsOnly, 0, 0, true});
      return;
    }
    int seg;
    const std::uint64_t idx = m.child_index(tr, moved, to, m.them, dtm, &seg);
    f(Child<int>{seg, idx, 0, true});
  };
  Bitboard evasion, pin[kMaxPieces];
  m.king_safety(&evasion, pin);
  // A quiet move of a representative's piece other than a king keeps the orientation, as undoing
  // one does (for_each_unmove): its child ranks incrementally, by the moved piece's relocation,
  // not by a symmetry search and a whole rank per move. Without pawns this holds unless both
  // kings stand on the a1-h8 diagonal, where the other pieces decide; with pawns, their
  // configuration decides. A king's move keeps it on the squares of its relocation's frame.
  // (Most moves are quiet: ranking each took a third of the verifier's time.)
  const Indexer& ix = *t.indexer;
  std::uint32_t code = 0;  // with pawns: the representative's pawn configuration
  bool same_frame = false;
  if (quiet_too)
    same_frame = ix.representative(p.sq.data(), &code) &&
                 (t.key.material.has_pawns() ||
                  kings_fix_orientation(p.sq[0], p.sq[static_cast<std::size_t>(t.bk_slot)]));
  const std::uint64_t child_base = m.them == black ? ix.size() : 0;
  // The squares the enemy attacks with our king off the board (it must not step back along a
  // checking line): our king's legal targets, one mask instead of a test per square. A captured
  // piece's own attacks never cover its square, and the rest of the board stays as it is.
  Bitboard danger = 0;
  {
    const Bitboard o = m.occ & ~bit(m.king_sq);
    for (int j = 0; j < t.n; ++j) {
      if (t.slots[j].color != m.them) continue;
      const PieceType jt = t.slots[j].type;
      danger |= jt == pawn ? pawn_attacks(m.them, p.sq[j]) : attacks(jt, p.sq[j], o);
    }
  }
  for (int i = 0; i < t.n; ++i) {
    if (t.slots[i].color != m.us) continue;
    const int from = p.sq[i];
    const PieceType pt = t.slots[i].type;
    if (pt != pawn) {
      Bitboard targets = attacks(pt, from, m.occ) & ~own;
      if (pt == king) {
        targets &= ~danger;
      } else {
        targets &= evasion & pin[i];
        if (!quiet_too) {  // the kernels only count quiet moves
          const int quiet = std::popcount(targets & ~enemy);
          mc.legal += quiet;
          mc.quiet += quiet;
          targets &= enemy;
        }
      }
      Indexer::Relocation moved;
      const bool relocated = same_frame && (targets & ~enemy) && (pt == king || ix.relocatable(i));
      if (relocated)
        moved = pt == king ? ix.king_relocation(p.sq.data(), code, i)
                           : ix.relocation(p.sq.data(), code, i);
      while (targets) {
        const int to = std::countr_zero(targets);
        targets &= targets - 1;
        const int v = (enemy & bit(to)) ? m.victim_on(to) : -1;
        assert(pt != king || m.legal(i, to, v));
        ++mc.legal;
        if (v >= 0) {
          conversion(t.capture[static_cast<std::size_t>(v)], i, to);
          continue;
        }
        ++mc.quiet;
        if (quiet_too) {
          Position c = p;
          c.sq[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(to);
          c.side = m.them;
          std::uint64_t r;
          if (pt == king)
            r = relocated && (moved.frame & bit(to)) ? child_base + ix.king_relocated(moved, to)
                                                     : g.rank(s, c);
          else if (relocated)
            r = child_base + ix.relocated(moved, to);
          else if (same_frame)  // a piece of a group of identical ones
            r = child_base + ix.rank_canonical(c.sq.data(), code);
          else
            r = g.rank(s, c);
          assert(r == g.rank(s, c));
          f(Child<int>{s, r, 0, false});
        }
      }
      continue;
    }
    // Pawns: every move converts (the pawn profile changes).
    const int dir = m.us == white ? 8 : -8;
    const int last = m.us == white ? 7 : 0;
    const std::size_t ps = static_cast<std::size_t>(i);
    const int one = from + dir;
    const Bitboard safe = evasion & pin[i];
    if (!(m.occ & bit(one)) && (safe & bit(one))) {
      if (rank_of(one) == last) {
        for (int k = 0; k < 4; ++k) {
          ++mc.legal;
          conversion(t.promote[ps][static_cast<std::size_t>(k)], i, one);
        }
      } else {
        ++mc.legal;
        conversion(t.push[ps][0], i, one);
      }
    }
    const int start = m.us == white ? 1 : 6;
    const int two = one + dir;
    if (rank_of(from) == start && !(m.occ & bit(one)) && !(m.occ & bit(two)) &&
        (safe & bit(two))) {
      ++mc.legal;
      const Transition& tr = t.push[ps][1];
      int seg, tr_used = 0;
      const std::uint64_t idx = m.child_index(tr, i, two, m.them, dtm, &seg, &tr_used);
      // En passant: an enemy pawn beside the pushed one may capture it (the virtual child
      // decides whether it legally can).
      bool ep = false;
      for (int j = 0; j < t.n && !ep; ++j)
        ep = t.slots[j].color == m.them && t.slots[j].type == pawn && beside(p.sq[j], two);
      if (ep)
        f(Child<int>{
            Game::kEnPassant,
            // the pushed pawn's square as the child's representative shows it
            (std::uint64_t{static_cast<std::uint32_t>(seg)} << 46) |
                (std::uint64_t{static_cast<std::uint32_t>(transform(tr_used, two))} << 40) | idx,
            0, true});
      else
        f(Child<int>{seg, idx, 0, true});
    }
    Bitboard caps = pawn_attacks(m.us, from) & enemy & safe;
    while (caps) {
      const int to = std::countr_zero(caps);
      caps &= caps - 1;
      const int v = m.victim_on(to);
      const std::size_t vs = static_cast<std::size_t>(v);
      if (rank_of(to) == last) {
        for (int k = 0; k < 4; ++k) {
          ++mc.legal;
          conversion(t.capture_promote[ps][vs][static_cast<std::size_t>(k)], i, to);
        }
      } else {
        ++mc.legal;
        conversion(t.pawn_capture[ps][vs], i, to);
      }
    }
  }
  return mc;
}

template <class F>
int Game::for_each_move(int s, const Position& p, F&& f) const {
  return detail_moves(*this, s, p, f, true).legal;
}

template <class F>
MoveCount Game::for_each_conversion(int s, const Position& p, F&& f) const {
  return detail_moves(*this, s, p, f, false);
}

template <class F>
void Game::for_each_unmove(int s, const Position& q, F&& f) const {
  const Table& t = table(s);
  const Indexer& ix = *t.indexer;
  const Color mover = opposite(q.side);
  Bitboard occ = 0;
  for (int i = 0; i < t.n; ++i) occ |= bit(q.sq[i]);
  const bool pawnless = !t.key.material.has_pawns();
  const int wk = q.sq[0], bk = q.sq[t.bk_slot];
  // Counters count a parent's moves from its class representative. When the child is its own
  // image under a reflection h (every piece on a long diagonal), the pairs (P, m) and (h(P),
  // h(m)) reach the same parent class by two moves of which the parent counted one: report one of
  // them (the lexicographically smaller placement). A symmetric parent reaches a non-symmetric
  // child class by two counted moves that one orientation of the child shows as one: report it
  // twice. (tests/chess_index_test.cpp checks the counts exhaustively.)
  // Identical pieces count as sets: a pair of them may be each other's image (knights on b1
  // and a2 under the a1-h8 reflection), and they come in any slot order.
  const auto same_piece = [&](int i, int j) {
    return t.slots[i].color == t.slots[j].color && t.slots[i].type == t.slots[j].type;
  };
  int h = -1;  // the child's stabilizing reflection: 4 (a1-h8), 7 (a8-h1) or none
  if (pawnless) {
    for (int cand : {4, 7}) {
      if (transform(cand, wk) != wk || transform(cand, bk) != bk) continue;  // the usual case
      bool stable = true;
      for (int i = 0; i < t.n && stable; ++i) {
        const int img = transform(cand, q.sq[i]);
        bool found = false;
        for (int j = 0; j < t.n && !found; ++j) found = same_piece(i, j) && q.sq[j] == img;
        stable = found;
      }
      if (stable) h = cand;
    }
  }
  // A placement with each group of identical pieces in ascending squares, for comparisons.
  const auto sorted_groups = [&](std::uint8_t* sq) {
    for (int i = 1; i < t.n; ++i)
      for (int j = i; j > 0 && same_piece(j, j - 1) && sq[j] < sq[j - 1]; --j)
        std::swap(sq[j], sq[j - 1]);
  };
  // The kernels' children are their class's representatives (unrank gives one, and so are the
  // parents reported below), and undoing a move of a piece other than a king keeps the
  // orientation: such a parent is a representative too and ranks without a symmetry search.
  // Only with both kings on the a1-h8 diagonal do the other pieces decide the orientation.
  // Without pawns q is a representative already (the frontier holds nothing else), so only the
  // pawn configuration's code has to be found, and only with pawns.
  std::uint32_t code = 0;
  const bool same_frame =
      pawnless ? kings_fix_orientation(wk, bk) : ix.representative(q.sq.data(), &code);
  assert(!same_frame || !pawnless || ix.representative(q.sq.data(), &code));
  const std::uint64_t base = mover == black ? ix.size() : 0;
  // The parent is a position only if its side not to move (q's side) is not in check there.
  const int their_king = q.side == white ? wk : bk;
  Position p = q;
  p.side = mover;
  for (int i = 0; i < t.n; ++i) {
    const PieceType pt = t.slots[i].type;
    if (t.slots[i].color != mover || pt == pawn) continue;
    const int to = q.sq[i];
    const Bitboard rest = occ & ~bit(to);
    // The piece must not attack their king from its origin, and every other piece of the mover
    // that attacks it once `to` is empty must be blocked by the origin.
    Bitboard allowed = ~attacks(pt, their_king, rest);
    for (int j = 0; j < t.n; ++j) {
      if (j == i || t.slots[j].color != mover) continue;
      const PieceType jt = t.slots[j].type;
      const int js = q.sq[j];
      // Without a branch on whether j attacks (every frontier position asks, at random).
      const Bitboard hit =
          Bitboard{0} - Bitboard{attacks_square_branchless(jt, mover, js, their_king, rest)};
      const Bitboard block = slider(jt) ? between(js, their_king) : 0;
      allowed &= (block & hit) | ~hit;
    }
    Bitboard origins = attacks(pt, to, occ) & ~occ & allowed;
    const bool fast = same_frame && pt != king;
    Indexer::Relocation moved;
    const bool relocated = fast && origins && ix.relocatable(i);
    if (relocated) moved = ix.relocation(q.sq.data(), code, i);
    // A king re-ranks incrementally too where its move keeps the orientation (moved.frame) and
    // the child has no stabilizing reflection (else the parents need the image test below).
    const bool king_fast = same_frame && pt == king && origins && h < 0;
    if (king_fast) moved = ix.king_relocation(q.sq.data(), code, i);
    while (origins) {
      const int from = std::countr_zero(origins);
      origins &= origins - 1;
      p.sq[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(from);
      if (king_fast && (moved.frame & bit(from))) {
        const std::uint64_t r = ix.king_relocated(moved, from);
#ifndef NDEBUG
        int t_used = -1;
        bool symmetric = true;
        assert(r == ix.rank(p.sq.data(), &t_used, &symmetric) && t_used == 0 && !symmetric);
#endif
        f(base + r, p);
        continue;
      }
      if (fast) {
        const std::uint64_t r =
            relocated ? ix.relocated(moved, from) : ix.rank_canonical(p.sq.data(), code);
        assert(r == ix.rank(p.sq.data()));
        f(base + r, p);
        continue;
      }
      int tr = 0;
      bool sym = false;
      const std::uint64_t r = base + ix.rank(p.sq.data(), &tr, &sym);
      Position c = p;  // the parent as its class's representative
      if (tr != 0)
        for (int k = 0; k < t.n; ++k)
          c.sq[static_cast<std::size_t>(k)] =
              static_cast<std::uint8_t>(transform(tr, p.sq[static_cast<std::size_t>(k)]));
      if (h < 0) {
        f(r, c);
        if (sym) f(r, c);
      } else if (sym) {
        f(r, c);
      } else {
        std::uint8_t image[kMaxPieces], self[kMaxPieces];
        for (int k = 0; k < t.n; ++k) {
          self[k] = p.sq[static_cast<std::size_t>(k)];
          image[k] = static_cast<std::uint8_t>(transform(h, self[k]));
        }
        sorted_groups(self);
        sorted_groups(image);
        if (std::memcmp(self, image, static_cast<std::size_t>(t.n)) < 0) f(r, c);
      }
    }
    p.sq[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(to);
  }
}

template <class Lower>
int Game::virtual_value(int s, std::uint64_t packed, const Lower& lower) const {
  if (s == kKingsOnly) return 0;
  const int seg = static_cast<int>(packed >> 46);
  const int to = static_cast<int>((packed >> 40) & 63);
  const std::uint64_t idx = packed & ((std::uint64_t{1} << 40) - 1);
  const Table& t = table(seg);
  const Position c = unrank(seg, idx);
  const bool dtm = is_dtm(seg);
  int best = static_cast<int>(lower(seg, idx));
  // Preference of the child's mover: fast wins, then draws, then slow losses.
  auto pref = [&](int v) {
    if (v == 0) return 0;
    if (dtm) return dtm_loses(v) ? -1000 + v : 1000 - v;
    return (v & 1) ? 1000 - v : -1000 + v;  // dtz: odd = win at (v-1)/2, even = loss at (v-2)/2
  };
  MoveGen m(*this, seg, c);
  int victim = -1;
  for (int i = 0; i < t.n; ++i)
    if (c.sq[i] == to && t.slots[i].type == pawn) victim = i;
  assert(victim >= 0 && "the pushed pawn stands where the packed child says");
  const int ep = to + (m.them == white ? -8 : 8);  // the square the pushed pawn passed
  for (int i = 0; i < t.n; ++i) {
    if (t.slots[i].color != m.us || t.slots[i].type != pawn) continue;
    if (!beside(c.sq[i], to)) continue;
    // Legal if our king is safe with both pawns gone from their squares and ours on ep.
    const Bitboard o = (m.occ & ~bit(c.sq[i]) & ~bit(to)) | bit(ep);
    const int k = c.sq[m.us == white ? 0 : t.bk_slot];
    if (m.attacked(k, m.them, o, victim)) continue;
    int useg;
    const std::uint64_t uidx =
        m.child_index(t.pawn_capture[static_cast<std::size_t>(i)][static_cast<std::size_t>(victim)],
                      i, ep, m.them, dtm, &useg);
    const int e = static_cast<int>(lower(useg, uidx));
    int v;
    if (dtm) {
      v = e == 0 ? 0 : e + 1;
    } else {
      // A capture zeroes the clock: the capturer wins at once unless the capture leads to a
      // loss only beyond the 50-move horizon, which makes it a win 100 plies later.
      if (e == 0)
        v = 0;
      else if (e & 1)
        v = (e - 1) / 2 <= 100 ? 2 * 1 + 2 : 2 * 101 + 2;  // the child's mover wins: a loss
      else
        v = (e - 2) / 2 <= 100 ? 2 * 1 + 1 : 2 * 101 + 1;  // the child's mover loses: a win
    }
    if (pref(v) > pref(best)) best = v;
  }
  return best;
}

}  // namespace retra::chess
