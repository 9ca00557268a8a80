// What chess table bytes mean (docs/FORMAT.md): distance to zeroing under the 50-move rule (dtz
// segments, which also give the five WDL50 classes) and distance to mate (dtm segments), and the
// best value over a position's moves, written from the definitions (the verifier and the probe
// report use it; the kernels have their own rules). Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string_view>

namespace retra::chess {

inline constexpr int kHorizon = 100;  // plies: the 50-move rule

// WDL50 classes, from the side to move's view (spec).
enum Wdl : int { loss = -2, blessed_loss = -1, draw = 0, cursed_win = 1, win = 2 };
std::string_view wdl_name(int wdl);  // "win", "cursed-win", "draw", "blessed-loss", "loss"

// A dtz byte: 0 draw, 2d + 1 a win with the next zeroing move in d plies, 2d + 2 a loss so
// (d = 0: mated); d > 100: cursed win or blessed loss (Syzygy's DTZ50'', offset included).
struct Dtz {
  int wdl = draw;
  int dtz = 0;  // signed plies (Syzygy's convention): > 0 wins, < 0 losses, 0 draw or mated
};
inline Dtz decode_dtz(int b) {
  if (b == 0 || b == 1) return {};
  if (b & 1) {
    const int d = (b - 1) / 2;
    return {d <= kHorizon ? win : cursed_win, d};
  }
  const int d = (b - 2) / 2;
  return {d <= kHorizon ? loss : blessed_loss, -d};
}
// The byte that stands for a dtz value in a side stored as classes (Game::class_of): the
// class's nearest distance, 1 or 101 plies (a mate, d = 0, becomes a loss in 1: the search
// that restores the distance finds the mate).
inline int dtz_class_byte(int b) {
  if (b <= 1) return b;  // a draw (1 is unused)
  const int d = (b & 1) ? (b - 1) / 2 : (b - 2) / 2;
  return (d <= kHorizon ? 2 : 2 * (kHorizon + 1)) + ((b & 1) ? 1 : 2);
}
// The mover's order of dtz values (bytes, or far values beyond a byte): higher is better. A win
// beats a cursed win, which beats a draw, then a blessed loss, then a loss; a nearer win is
// better, a farther loss is better (as Best chooses). Don't-care entries (docs/FORMAT.md) may
// hold any value no higher in this order than their own.
inline int dtz_order(int b) {
  if (b <= 1) return 1000;  // a draw (1 is unused)
  const int d = (b & 1) ? (b - 1) / 2 : (b - 2) / 2;
  if (b & 1) return d <= kHorizon ? 40000 - d : 20000 - d;
  return d <= kHorizon ? d - 20000 : d - 10000;
}
// A dtm byte (Game::kMatedCode 1): 0 draw, otherwise the distance in plies + 1, even bytes wins
// (odd plies), odd bytes losses (even plies; 1: mated). One byte holds up to 254 plies, enough for
// every 3-5 piece table (KPPvKP's 254-ply loss is the longest). nullopt for a draw; + for wins,
// - (or 0) for losses.
inline constexpr int kMatedDtm = 1;
inline std::optional<int> decode_dtm(int b) {
  if (b == 0) return std::nullopt;
  return (b & 1) ? -(b - 1) : b - 1;
}
inline bool dtm_loses(int b) { return b & 1; }
// The byte of a signed DTM (0: mated).
inline int encode_dtm(int plies) { return plies > 0 ? plies + 1 : -plies + 1; }

// The best value over a position's moves, in the encoding of its segment, from each move's child
// value (the child's mover's view) and whether the move converts (zeroes the clock).
class Best {
 public:
  explicit Best(bool dtm) : dtm_(dtm) {}
  void add(int child, bool converts) {
    if (child == 0) {
      draw_ = true;
      return;
    }
    int level;  // ours after the move: the child's own, or the conversion's
    if (dtm_)
      level = child + 1;  // the side that wins in n plies after our move: n + 1 for us
    else if (converts)
      level = level_of(child) <= kHorizon ? 1 : kHorizon + 1;
    else
      level = level_of(child) + 1;
    if (dtm_ ? !dtm_loses(child) : (child & 1))
      worst_loss_ = std::max(worst_loss_, level);  // the child's mover wins: we lose
    else
      best_win_ = std::min(best_win_, level);
  }
  int value() const {
    if (best_win_ != INT_MAX) return dtm_ ? best_win_ : 2 * best_win_ + 1;
    if (draw_) return 0;
    return dtm_ ? worst_loss_ : 2 * worst_loss_ + 2;
  }

 private:
  static int level_of(int b) { return (b & 1) ? (b - 1) / 2 : (b - 2) / 2; }
  bool dtm_;
  bool draw_ = false;
  int best_win_ = INT_MAX, worst_loss_ = -1;
};

}  // namespace retra::chess
