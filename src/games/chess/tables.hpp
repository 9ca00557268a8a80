// Probing chess tables: which segment holds a position (canonical colours, pawn profile), its
// index, and the values of positions the tables do not store (an en-passant right: the best over
// the legal moves, the capture included) and of every move at a root. Shared by the probing library
// and `retra probe`, which read the stored bytes their own way (Read).
// Thread safety: Tables caches each segment's indexer under a once-flag; evaluate() and root()
// are reentrant.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "retra/probe.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/index.hpp"
#include "src/games/chess/values.hpp"
#include "src/probe/locator.hpp"
#include "src/util/flat_map.hpp"

namespace retra::chess {

class Tables {
 public:
  // segments: the database's segment names, in manifest order (their slots).
  explicit Tables(std::span<const std::string> segments);

  struct Where {
    int dtz_slot = -1, dtm_slot = -1;
    std::uint64_t index = 0;
    bool kings_only = false;  // no table: a draw
  };
  // Where a position without an en-passant right lives; a not_found Value when its table is not
  // in the database.
  probe::Value locate(const Board& b, Where* w) const;
  // The same from the squares of each piece code (sets[code(t, c)]; other entries ignored).
  using PieceSets = std::array<Bitboard, 16>;
  probe::Value locate(PieceSets sets, Color side, Where* w) const;
  probe::Coverage coverage() const;

 private:
  struct Slot {
    TableKey key;
    std::once_flag once;
    std::unique_ptr<Indexer> indexer;
    std::atomic<const Indexer*> ready{nullptr};  // indexer, once built
    int dtm_slot = -1;
  };
  const Indexer& indexer(int slot) const;
  std::vector<std::unique_ptr<Slot>> slots_;
  FlatMap64<int> by_key_;  // segment key -> its dtz slot
  int largest_ = -1;
  std::vector<Material> held_;
};

// The squares of each piece code of a board (Tables::locate's form).
Tables::PieceSets piece_sets(const Board& b);
// Whether a piece of colour `by` in s attacks sq, the board's occupancy being occ.
inline bool attacked(const Tables::PieceSets& s, int sq, Color by, Bitboard occ) {
  const Bitboard diag = s[code(bishop, by)] | s[code(queen, by)];
  const Bitboard line = s[code(rook, by)] | s[code(queen, by)];
  return ((knight_attacks(sq) & s[code(knight, by)]) |
          (pawn_attacks(opposite(by), sq) & s[code(pawn, by)]) |
          (king_attacks(sq) & s[code(king, by)]) | (bishop_attacks(sq, occ) & diag) |
          (rook_attacks(sq, occ) & line)) != 0;
}
// The same position seen with the colours exchanged (ranks mirrored, side to move swapped).
Board flipped(const Board& b);
// Drops an en-passant square that names no legal capture (play() sets it after every double push).
Board normalized(Board b);

// What a caller of evaluate() needs beside the WDL50 class: the exact DTZ (else, where only a
// search would give it, the class's placeholder distance may come back: the child of a
// conversion needs only its class), and the DTM.
struct Need {
  bool dtz = true, dtm = true;
};
inline constexpr Need kWdlOnly{false, false};
// read(slot, index) returns the stored value as a probe::Value (probe::Reader's contract: the far
// value where there is one, probe::kClassOnly set where the entry holds only its class).
template <class Read>
probe::ChessValue evaluate(const Tables& t, const Board& b, Read&& read, Need need = {});
namespace detail {
template <class Read>
probe::ChessValue evaluate_at(const chess::Tables& t, const Board& b, const chess::Tables::Where& w,
                              Read&& read, Need need);
}  // namespace detail

// The dtz byte of a zeroing move that leaves the other side in class -wdl (wdl: the mover's).
inline int zeroing_byte(int wdl) {
  constexpr int kFar = kHorizon + 1;
  return wdl == win            ? 3
         : wdl == cursed_win   ? 2 * kFar + 1
         : wdl == blessed_loss ? 2 * kFar + 2
         : wdl == loss         ? 4
                               : 0;
}

// The WDL50 class of a position without an en-passant right, given as bitboards and located at
// w, searched within the window (alpha, beta) (Fathom's probe_ab): the exact class where it lies
// inside, else a bound on the same side of the window. Where the segment stores don't-care
// entries (docs/FORMAT.md, kDontCare), the stored class is a lower bound of the truth, which is
// the better of it and the best zeroing move (the best capture, where the captures alone
// decided them: kDontCareCaptures); elsewhere it is the truth. The window is what
// keeps the search small: a child's search stops as soon as its value can no longer change its
// parent's. The value, or the error of a read or of a child's locate.
template <class Read>
probe::Value wdl_at(const Tables& t, const Tables::PieceSets& s, Color side, const Tables::Where& w,
                    Read&& read, int alpha, int beta);
// max(alpha, the best class the zeroing moves of s give its mover), the search stopping at beta;
// captures_only: its captures alone (promotions that capture included).
template <class Read>
probe::Value zeroing_best(const Tables& t, const Tables::PieceSets& s, Color side, Read&& read,
                          int alpha, int beta, bool captures_only);
// The don't-care marks of a read value (probe::kDontCare, probe::kDontCareCaptures) as the
// arguments of zeroing_best: whether the stored value is a lower bound, and whether only the
// captures improve on it.
struct LowerBound {
  bool lower = false, captures_only = false;
};
inline LowerBound lower_bound_of(int marked) {
  return {(marked & probe::kDontCare) != 0, (marked & probe::kDontCareCaptures) != 0};
}
// A read value without its marks.
inline int unmarked(int marked) {
  return marked & ~(probe::kClassOnly | probe::kDontCare | probe::kDontCareCaptures);
}

// The outcome under the position's 50-move counter: 1, 0 or -1.
inline int outcome(int wdl, int dtz, int counter) {
  if (wdl == win) return dtz + counter <= kHorizon ? 1 : 0;
  if (wdl == loss) return -dtz + counter <= kHorizon ? -1 : 0;
  return 0;
}

template <class Read>
probe::ChessValue evaluate(const Tables& t, const Board& b, Read&& read, Need need) {
  Tables::Where w;
  if (b.ep < 0) {
    if (const probe::Value where = t.locate(b, &w); !where) {
      probe::ChessValue v;
      v.status = where.status;
      v.message = where.message;
      return v;
    }
  }
  return detail::evaluate_at(t, b, w, read, need);
}

namespace detail {

// evaluate() of b, already located at w where b.ep < 0.
template <class Read>
probe::ChessValue evaluate_at(const chess::Tables& t, const Board& b, const chess::Tables::Where& w,
                              Read&& read, Need need) {
  probe::ChessValue v;
  auto fail = [&](probe::Status s, std::string msg) {
    v.status = s;
    v.message = std::move(msg);
    return v;
  };
  // The stored DTM of the position at w, where there is one and the caller needs it.
  auto read_dtm = [&]() -> probe::Value {
    if (w.dtm_slot < 0 || !need.dtm) return {};
    const probe::Value m = read(w.dtm_slot, w.index);
    if (!m) return m;
    if (const auto dm = decode_dtm(m.value)) {
      v.has_dtm = true;
      v.dtm = *dm;
    }
    return {};
  };
  bool stored_class = false;
  int stored_wdl = draw;  // the class stored there
  // A segment with don't-care entries (docs/FORMAT.md, kDontCare) stores values no better than
  // the truth, which is the better of the stored value and the zeroing moves' best: then only
  // those moves are searched (zeroing_best), unless the distance of a class is asked for.
  LowerBound bound;
  bool& lower_bound = bound.lower;
  int stored = 0;  // the stored value (a dtz byte, or a far value)
  if (b.ep < 0) {
    if (w.kings_only) {
      v.outcome = 0;
      return v;
    }
    const probe::Value z = read(w.dtz_slot, w.index);
    if (!z) return fail(z.status, z.message);
    const bool cls = (z.value & probe::kClassOnly) != 0;
    bound = lower_bound_of(z.value);
    stored = unmarked(z.value);
    const Dtz d = decode_dtz(stored);
    // Nothing is better than a win, or than a win in one ply where the distance counts.
    if (lower_bound && d.wdl == win && (!need.dtz || (!cls && d.dtz == 1))) lower_bound = false;
    // A side stored as classes (Game::class_of): a decided position's distance comes from the
    // search below, over children that are the other side's (stored in full) or conversions.
    if (cls && need.dtz && (d.wdl != draw || lower_bound)) {
      stored_class = true;
      stored_wdl = d.wdl;
    } else {
      int best = stored;
      if (lower_bound) {
        // A zeroing move's child counts by its class alone: the bitboard search gives it, exact
        // from the stored class up (a zeroing move of that class may still be shorter).
        const probe::Value zr =
            zeroing_best(t, piece_sets(b), b.side, read, d.wdl - 1, win, bound.captures_only);
        if (!zr) return fail(zr.status, zr.message);
        if (const int zb = zeroing_byte(zr.value);
            zr.value >= d.wdl && dtz_order(zb) > dtz_order(stored))
          best = zb;
      }
      const Dtz bd = decode_dtz(best);
      v.wdl = bd.wdl;
      v.dtz = bd.dtz;
      if (const probe::Value m = read_dtm(); !m) return fail(m.status, m.message);
      v.outcome = outcome(v.wdl, v.dtz, b.halfmove);
      return v;
    }
  }
  // Not stored (an en-passant right), or stored as a class (a lower bound or not): the best over
  // the legal moves (the en-passant capture included). A conversion's child counts by its class
  // alone.
  // Zeroing moves come first: where the stored class is a win, cursed or not, a zeroing move
  // that keeps it gives the shortest distance the class allows (1 or 101 plies), and the search
  // stops there (a probe of the side that can capture or push reads one child, not all).
  std::array<Move, 256> moves;  // a legal position has at most 218
  int n = 0, zeroing_moves = 0;
  for_each_legal_move(b, [&](const Move& m) {
    moves[static_cast<std::size_t>(n++)] = m;
    if (m.capture || type_of(b.piece[m.from]) == pawn)
      std::swap(moves[static_cast<std::size_t>(zeroing_moves++)],
                moves[static_cast<std::size_t>(n - 1)]);
  });
  // Stored (as a class, or as a lower bound), this position's DTM is stored: its children's are
  // not needed.
  const bool child_dtm = need.dtm && !stored_class;
  Best dtz(false), dtm(true);
  bool all_dtm = true;
  // Where each child lives: none where it has an en-passant right or its locate failed.
  std::array<std::optional<chess::Tables::Where>, 256> spots;
  // Folds moves [from, to): every child located and its entries prefetched first, so that the
  // reads' cache misses overlap, then read in turn. Returns an error, or an ok value where the
  // fold can get no better, or nothing.
  auto fold = [&](int from, int to) -> std::optional<probe::ChessValue> {
    for (int i = from; i < to; ++i) {
      const Board c = normalized(play(b, moves[static_cast<std::size_t>(i)]));
      auto& sp = spots[static_cast<std::size_t>(i)];
      sp.reset();
      chess::Tables::Where cw;
      if (c.ep >= 0 || !t.locate(c, &cw)) continue;
      sp = cw;
      if constexpr (requires { read.prefetch(0, std::uint64_t{0}); }) {
        if (cw.kings_only) continue;
        read.prefetch(cw.dtz_slot, cw.index);
        if (child_dtm && cw.dtm_slot >= 0) read.prefetch(cw.dtm_slot, cw.index);
      }
    }
    for (int i = from; i < to; ++i) {
      const bool zeroing = i < zeroing_moves;
      // Played again rather than kept: a board per move would be 20 KB of stack to clear.
      const Board c = normalized(play(b, moves[static_cast<std::size_t>(i)]));
      const auto& sp = spots[static_cast<std::size_t>(i)];
      // A conversion counts by its child's class. Without a spot: an en-passant right, or
      // the error of its locate again.
      const Need cn{!zeroing, child_dtm};
      const probe::ChessValue cv = sp ? evaluate_at(t, c, *sp, read, cn) : evaluate(t, c, read, cn);
      if (!cv) return cv;
      // Back to bytes of the child's mover's view, folded as the verifier folds them.
      const int zb = cv.wdl == draw ? 0 : cv.wdl > 0 ? 2 * cv.dtz + 1 : 2 * -cv.dtz + 2;
      dtz.add(zb, zeroing);
      if (!cv.has_dtm && cv.wdl != draw) all_dtm = false;
      dtm.add(cv.has_dtm ? encode_dtm(cv.dtm) : 0, zeroing);
      // (A stored cursed win that may be worse than the truth could still be a win.)
      if (zeroing && (stored_wdl == win || (stored_wdl == cursed_win && !lower_bound)) &&
          -cv.wdl == stored_wdl) {
        probe::ChessValue done;  // the DTM comes from its own segment
        return done;
      }
    }
    return std::nullopt;
  };
  auto r = fold(0, zeroing_moves);
  if (!r) r = fold(zeroing_moves, n);
  if (r && !*r) return *r;  // an error
  const int z = n ? dtz.value() : (in_check(b, b.side) ? 2 : 0);
  const Dtz d = decode_dtz(z);
  v.wdl = d.wdl;
  v.dtz = d.dtz;
  if (stored_class) {
    if (const probe::Value m = read_dtm(); !m) return fail(m.status, m.message);
  } else if (const int mb = n ? dtm.value() : z ? kMatedDtm : 0; all_dtm && mb && need.dtm) {
    v.has_dtm = true;
    v.dtm = *decode_dtm(mb);
  }
  v.outcome = outcome(v.wdl, v.dtz, b.halfmove);
  return v;
}

// A zeroing move on bitboards: the piece that moves, and the piece that stands on `to` after it
// (a promotion's). ep: the square a double push passed where a pawn of the other side stands
// beside it (the child may have an en-passant right), else -1. No initializers: the search keeps
// arrays of them on the stack, written before they are read.
struct ZeroingMove {
  std::uint8_t from, to;
  PieceType moved, placed;
  std::int8_t ep;
};

inline chess::Tables::PieceSets after(const chess::Tables::PieceSets& s, Color us,
                                      const ZeroingMove& m) {
  chess::Tables::PieceSets c = s;
  const Bitboard to = bit(m.to);
  for (int t = queen; t < kTypes; ++t) c[code(PieceType(t), opposite(us))] &= ~to;
  c[code(m.moved, us)] &= ~bit(m.from);
  c[code(m.placed, us)] |= to;
  return c;
}

// The board of piece sets s (no clocks).
inline Board board_of(const chess::Tables::PieceSets& s, Color side, int ep) {
  Board b;
  for (int c = 0; c < 16; ++c)  // codes that are no piece have empty sets
    for (Bitboard p = s[static_cast<std::size_t>(c)]; p; p &= p - 1)
      b.piece[static_cast<std::size_t>(std::countr_zero(p))] = static_cast<std::uint8_t>(c);
  b.side = side;
  b.ep = ep;
  return b;
}

// Calls f(move, child) for every legal zeroing move of `us` in s (captures, pawn pushes and
// promotions; captures_only: the captures alone; s has no en-passant right, so there is no
// en-passant capture). Bitboards only: no Board, no move list of the quiet moves a probe does
// not need.
template <class F>
void for_each_zeroing_move(const chess::Tables::PieceSets& s, Color us, bool captures_only, F&& f) {
  const Color them = opposite(us);
  Bitboard own = 0, enemy = 0;
  for (int t = 0; t < kTypes; ++t) {
    own |= s[code(PieceType(t), us)];
    enemy |= s[code(PieceType(t), them)];
  }
  const Bitboard occ = own | enemy, targets = enemy & ~s[code(king, them)];
  const int ks = std::countr_zero(s[code(king, us)]);
  auto emit = [&](PieceType moved, int from, int to, PieceType placed, int ep) {
    const ZeroingMove m{static_cast<std::uint8_t>(from), static_cast<std::uint8_t>(to), moved,
                        placed, static_cast<std::int8_t>(ep)};
    const chess::Tables::PieceSets c = after(s, us, m);
    if (attacked(c, moved == king ? to : ks, them, (occ & ~bit(from)) | bit(to)))
      return;  // leaves the mover's king in check
    f(m, c);
  };
  for (int t = king; t < pawn; ++t)
    for (Bitboard p = s[code(PieceType(t), us)]; p; p &= p - 1) {
      const int from = std::countr_zero(p);
      for (Bitboard to = attacks(PieceType(t), from, occ) & targets; to; to &= to - 1)
        emit(PieceType(t), from, std::countr_zero(to), PieceType(t), -1);
    }
  const int dir = us == white ? 8 : -8, last = us == white ? 7 : 0, start = us == white ? 1 : 6;
  auto pawn_to = [&](int from, int to) {
    if (rank_of(to) != last) return emit(pawn, from, to, pawn, -1);
    for (PieceType p : {queen, rook, bishop, knight}) emit(pawn, from, to, p, -1);
  };
  for (Bitboard p = s[code(pawn, us)]; p; p &= p - 1) {
    const int from = std::countr_zero(p), one = from + dir;
    for (Bitboard to = pawn_attacks(us, from) & targets; to; to &= to - 1)
      pawn_to(from, std::countr_zero(to));
    if (captures_only || (occ & bit(one))) continue;
    pawn_to(from, one);
    if (rank_of(from) == start && !(occ & bit(one + dir)))
      emit(pawn, from, one + dir, pawn, pawn_attacks(us, one) & s[code(pawn, them)] ? one : -1);
  }
}

}  // namespace detail

// zeroing_best in steps, for a caller with reads to overlap: collect() generates the zeroing
// moves (the captures alone, with captures_only) and locates their children, ordered by gain;
// prefetch() asks the reader for their entries; search() reads them within (alpha, beta),
// prefetching them first where there are several and nobody has yet. At most 7 pieces: fewer
// than 128 zeroing moves.
struct ZeroingChildren {
  void collect(const Tables& t, const Tables::PieceSets& s, Color side, bool captures_only);
  template <class Read>
  void prefetch(Read& read) {
    if constexpr (requires { read.prefetch(0, std::uint64_t{0}); }) {
      for (int i = 0; i < n; ++i)
        if (const Kid& k = kids[static_cast<std::size_t>(i)]; !k.board && !k.kings_only)
          read.prefetch(k.slot, k.index);
    }
    prefetched = true;
  }
  template <class Read>
  probe::Value search(const Tables& t, const Tables::PieceSets& s, Color side, Read&& read,
                      int alpha, int beta);

  // A child that may have an en-passant right, or whose locate fails, goes through evaluate()
  // (board: true), which gives the right's value, or the error. No initializers: written by
  // collect() before they are read.
  struct Kid {
    detail::ZeroingMove m;
    bool board, kings_only;
    std::uint8_t gain;  // what the move wins: the captured piece, then the promotion's
    int slot;
    std::uint64_t index;
  };
  std::array<Kid, 128> kids;
  int n = 0;
  bool prefetched = false;
};

template <class Read>
probe::Value wdl_at(const Tables& t, const Tables::PieceSets& s, Color side, const Tables::Where& w,
                    Read&& read, int alpha, int beta) {
  if (w.kings_only) return {};  // a draw
  probe::Value v = read(w.dtz_slot, w.index);
  if (!v) return v;
  const LowerBound bound = lower_bound_of(v.value);
  v.value = decode_dtz(unmarked(v.value)).wdl;
  if (!bound.lower || v.value >= beta) return v;
  return zeroing_best(t, s, side, read, std::max(alpha, v.value), beta, bound.captures_only);
}

template <class Read>
probe::Value zeroing_best(const Tables& t, const Tables::PieceSets& s, Color side, Read&& read,
                          int alpha, int beta, bool captures_only) {
  ZeroingChildren kids;  // none collected where the window is empty: search() gives alpha
  if (alpha < beta) kids.collect(t, s, side, captures_only);
  return kids.search(t, s, side, read, alpha, beta);
}

template <class Read>
probe::Value ZeroingChildren::search(const Tables& t, const Tables::PieceSets& s, Color side,
                                     Read&& read, int alpha, int beta) {
  probe::Value best;
  best.value = alpha;
  if (alpha >= beta) return best;
  const Color them = opposite(side);
  // A prefetch costs a cache lookup of its own: worth it only where reads can overlap.
  if (n > 1 && !prefetched) prefetch(read);
  for (int i = 0; i < n; ++i) {
    const Kid& k = kids[static_cast<std::size_t>(i)];
    const Tables::PieceSets c = detail::after(s, side, k.m);
    int value;
    if (k.board) {
      const Board cb = normalized(detail::board_of(c, them, k.m.ep));
      const probe::ChessValue cv = evaluate(t, cb, read, kWdlOnly);
      if (!cv) {
        best.status = cv.status;
        best.message = cv.message;
        return best;
      }
      value = -cv.wdl;
    } else {
      Tables::Where cw;
      cw.kings_only = k.kings_only;
      cw.dtz_slot = k.slot;
      cw.index = k.index;
      const probe::Value cv = wdl_at(t, c, them, cw, read, -beta, -best.value);
      if (!cv) return cv;
      value = -cv.value;
    }
    if (value > best.value) {
      best.value = value;
      if (value >= beta) break;
    }
  }
  return best;
}

inline void ZeroingChildren::collect(const Tables& t, const Tables::PieceSets& s, Color side,
                                     bool captures_only) {
  const Color them = opposite(side);
  n = 0;
  detail::for_each_zeroing_move(
      s, side, captures_only, [&](const detail::ZeroingMove& m, const Tables::PieceSets& c) {
        Kid& k = kids[static_cast<std::size_t>(n++)];
        k.m = m;
        Tables::Where cw;
        k.board = (m.ep >= 0 && normalized(detail::board_of(c, them, m.ep)).ep >= 0) ||
                  !t.locate(c, them, &cw);
        k.kings_only = cw.kings_only;
        k.slot = cw.dtz_slot;
        k.index = cw.index;
        // Types run from queen (1) to pawn (5): a lower type is the greater gain.
        int victim = kTypes;
        for (int v = queen; v < kTypes; ++v)
          if (s[code(PieceType(v), them)] & bit(m.to)) victim = v;
        k.gain = static_cast<std::uint8_t>((kTypes - victim) * 8 +
                                           (m.placed != m.moved ? kTypes - m.placed : 0));
      });
  // The greatest gains first (the most valuable victim, then the best promotion): the moves
  // most likely to reach beta, which ends the search.
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && kids[static_cast<std::size_t>(j)].gain >
                                 kids[static_cast<std::size_t>(j - 1)].gain;
         --j)
      std::swap(kids[static_cast<std::size_t>(j)], kids[static_cast<std::size_t>(j - 1)]);
}

// A move's values from the mover's view, from the values of the position it leads to.
inline probe::ChessValue mover_view(const probe::ChessValue& child, bool zeroing, int counter) {
  probe::ChessValue v;
  v.wdl = -child.wdl;
  if (zeroing) {
    v.dtz = v.wdl == win            ? 1
            : v.wdl == cursed_win   ? 101
            : v.wdl == blessed_loss ? -101
            : v.wdl == loss         ? -1
                                    : 0;
  } else if (v.wdl > 0) {
    v.dtz = -child.dtz + 1;  // the child's mover loses in -dtz: one ply more for us
  } else if (v.wdl < 0) {
    v.dtz = -(child.dtz + 1);
  }
  if (child.has_dtm) {
    v.has_dtm = true;
    v.dtm = child.dtm > 0 ? -(child.dtm + 1) : -child.dtm + 1;
  }
  v.outcome = outcome(v.wdl, v.dtz, zeroing ? 0 : counter);
  return v;
}

// Every legal move of b with its values from the mover's view, best first: the best outcome
// under the 50-move counter, then the fastest win (or slowest loss) by DTZ, then by DTM. Returns
// the number of legal moves; *position receives b's own values.
template <class Read>
int root(const Tables& t, const Board& b, Read&& read, std::span<probe::ChessMove> out,
         probe::ChessValue* position) {
  std::vector<probe::ChessMove> moves;
  std::optional<probe::ChessValue> error;
  for_each_legal_move(b, [&](const Move& m) {
    if (error) return;
    const Board c = normalized(play(b, m));
    const probe::ChessValue cv = evaluate(t, c, read);
    if (!cv) {
      error = cv;
      return;
    }
    probe::ChessMove cm;
    cm.from = m.from;
    cm.to = m.to;
    cm.promotion = m.promotion == kNoPromotion ? 0 : static_cast<std::uint8_t>(m.promotion);
    cm.value = mover_view(cv, m.capture || type_of(b.piece[m.from]) == pawn, b.halfmove);
    moves.push_back(cm);
  });
  if (error) {
    if (position) *position = *error;
    return -1;
  }
  // Better: a higher outcome, then a higher WDL (a cursed win over a draw over a blessed loss),
  // then the faster win or the slower loss by DTZ (wins > 0, losses < 0: -dtz orders both), then
  // by DTM likewise.
  auto key = [](const probe::ChessValue& v) {
    return std::tuple(v.outcome, v.wdl, -v.dtz, v.has_dtm ? -v.dtm : 0);
  };
  std::stable_sort(moves.begin(), moves.end(),
                   [&](const auto& a, const auto& x) { return key(a.value) > key(x.value); });
  for (std::size_t i = 0; i < moves.size() && i < out.size(); ++i) out[i] = moves[i];
  if (position) *position = evaluate(t, b, read);
  return static_cast<int>(moves.size());
}

}  // namespace retra::chess
