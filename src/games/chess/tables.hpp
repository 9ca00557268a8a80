// Probing chess tables: which segment holds a position (canonical colours, pawn profile), its
// index, and the values of positions the tables do not store (an en-passant right: the best over
// the legal moves, the capture included) and of every move at a root. Shared by the probing library
// and `retra probe`, which read the stored bytes their own way (Read).
// Thread safety: Tables caches each segment's indexer under a once-flag; evaluate() and root()
// are reentrant.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "retra/probe.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/index.hpp"
#include "src/games/chess/values.hpp"
#include "src/probe/locator.hpp"

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
    int dtm_slot = -1;
  };
  const Indexer& indexer(int slot) const;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::unordered_map<std::uint64_t, int> by_key_;  // segment key -> its dtz slot
  int largest_ = -1;
  std::vector<Material> held_;
};

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
  // those moves are searched (zeroing_only), unless the distance of a class is asked for.
  bool lower_bound = false, zeroing_only = false;
  int stored = 0;  // the stored value (a dtz byte, or a far value)
  if (b.ep < 0) {
    if (w.kings_only) {
      v.outcome = 0;
      return v;
    }
    const probe::Value z = read(w.dtz_slot, w.index);
    if (!z) return fail(z.status, z.message);
    const bool cls = (z.value & probe::kClassOnly) != 0;
    lower_bound = (z.value & probe::kDontCare) != 0;
    stored = z.value & ~(probe::kClassOnly | probe::kDontCare);
    const Dtz d = decode_dtz(stored);
    // Nothing is better than a win, or than a win in one ply where the distance counts.
    if (lower_bound && d.wdl == win && (!need.dtz || (!cls && d.dtz == 1))) lower_bound = false;
    // A side stored as classes (Game::class_of): a decided position's distance comes from the
    // search below, over children that are the other side's (stored in full) or conversions.
    if (cls && need.dtz && (d.wdl != draw || lower_bound)) {
      stored_class = true;
      stored_wdl = d.wdl;
    } else if (lower_bound) {
      zeroing_only = true;
    } else {
      v.wdl = d.wdl;
      v.dtz = d.dtz;
      if (const probe::Value m = read_dtm(); !m) return fail(m.status, m.message);
      v.outcome = outcome(v.wdl, v.dtz, b.halfmove);
      return v;
    }
  }
  // Not stored (an en-passant right), stored as a class, or stored as a lower bound: the best
  // over the legal moves (the en-passant capture included), or over the zeroing ones alone. A
  // conversion's child counts by its class alone.
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
  const bool child_dtm = need.dtm && !stored_class && !zeroing_only;
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
      // (A stored cursed win that may be worse than the truth could still be a win; where only
      // zeroing moves count, a winning one is the best there is.)
      if (zeroing &&
          (stored_wdl == win || (stored_wdl == cursed_win && !lower_bound) || zeroing_only) &&
          -cv.wdl == (zeroing_only ? win : stored_wdl)) {
        probe::ChessValue done;  // the DTM comes from its own segment
        return done;
      }
    }
    return std::nullopt;
  };
  auto r = fold(0, zeroing_moves);
  if (zeroing_only) {
    if (r && !*r) return *r;  // an error
    const int best =
        zeroing_moves && dtz_order(dtz.value()) > dtz_order(stored) ? dtz.value() : stored;
    const Dtz d = decode_dtz(best);
    v.wdl = d.wdl;
    v.dtz = d.dtz;
    if (const probe::Value m = read_dtm(); !m) return fail(m.status, m.message);
    v.outcome = outcome(v.wdl, v.dtz, b.halfmove);
    return v;
  }
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

}  // namespace detail

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
