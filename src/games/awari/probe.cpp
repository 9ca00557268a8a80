// Awari probes: a position's value and every move's value, read from the segment files.
// Thread safety: reentrant; Database and SegmentReader are safe to share.
#include <fmt/format.h>

#include "src/games/awari/database.hpp"
#include "src/games/awari/index.hpp"

namespace retra::awari {

namespace {

Status check_game(const Database& db) {
  if (db.manifest().game != "awari")
    return Error(Errc::mismatch, fmt::format("'{}' holds a {} database, not awari",
                                             db.dir().string(), db.manifest().game));
  return {};
}

Result<int> stored_value(const Database& db, const Board& b) {
  const int n = b.stones();
  auto seg = db.segment(segment_name(n));
  if (!seg) return std::move(seg).error();
  auto byte = (*seg)->byte_at(rank(b));
  if (!byte) return std::move(byte).error();
  const int v = static_cast<std::int8_t>(*byte);
  if (v < -n || v > n)
    return Error(Errc::corrupt, fmt::format("segment '{}' stores {} for a {}-stone position; "
                                            "rebuild it with --force",
                                            (*seg)->path().string(), v, n));
  return v;
}

}  // namespace

Result<ProbeResult> probe(const Database& db, const Board& b) {
  RETRA_TRY(check_game(db));
  ProbeResult r;
  r.board = b;
  r.stones = b.stones();
  r.index = rank(b);
  auto v = stored_value(db, b);
  if (!v) return std::move(v).error();
  r.value = *v;
  int legal = 0;
  for (int pit = 0; pit < kSidePits; ++pit) {
    const MoveResult m = make_move(b, pit);
    MoveValue mv;
    mv.pit = pit;
    mv.kind = m.kind;
    mv.captured = m.captured;
    if (m.legal()) {
      ++legal;
      auto cv = stored_value(db, m.child);
      if (!cv) return std::move(cv).error();
      mv.value = m.captured - *cv;
      if (*mv.value == r.value) r.best.push_back(pit);
    }
    r.moves.push_back(mv);
  }
  if (b.mover_stones() == 0)
    r.terminal = "rule 4: the side to move has no stones, the opponent takes all";
  else if (legal == 0)
    r.terminal = "rule 3: no move leaves the opponent a stone, the side to move takes all";
  return r;
}

}  // namespace retra::awari
