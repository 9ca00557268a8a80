// Xiangqi probes: a FEN's endgame, value and every move's value, read from the segment files.
// Thread safety: reentrant; Database and SegmentReader are safe to share.
#include <algorithm>

#include <fmt/format.h>

#include "src/games/xiangqi/database.hpp"

namespace retra::xiangqi {

std::string describe(int v, const std::string& metric) {
  if (v == 0) return "draw";
  if (v == 1) return "wins at once: the side to move can capture the opponent's king";
  if (v == 2) return "lost: every move lets the opponent capture the king (checkmate or stalemate)";
  if (metric == "dtc")
    return v & 1 ? fmt::format("wins: reaches a won conversion within {} plies", v)
                 : fmt::format("loses: the opponent converts to a win within {} plies", v);
  return v & 1 ? fmt::format("wins: captures the king in {} plies (mate in {})", v, v - 2)
               : fmt::format("loses: the king is captured in {} plies (mated in {})", v, v - 2);
}

namespace {

// A child's value as the mover sees it (Table 1: the better the child's value for the opponent,
// the worse for the mover).
int propagate(int child) { return child == 0 ? 0 : child + 1; }

Result<int> stored(const Database& db, const std::string& name, std::uint64_t index) {
  auto seg = db.segment(name);
  if (!seg) return std::move(seg).error();
  auto b = (*seg)->byte_at(index);
  if (!b) return std::move(b).error();
  return static_cast<int>(*b);
}

std::string move_name(const Board& b, const Move& m) {
  const std::uint8_t pc = b[m.from];
  return fmt::format("{}{}{}{}", piece_letter(type_of(pc), red), square_name(m.from),
                     m.captured ? "x" : "-", square_name(m.to));
}

}  // namespace

Result<ProbeResult> probe(const Database& db, std::string_view fen) {
  if (db.manifest().game != "xiangqi")
    return Error(Errc::mismatch, fmt::format("'{}' holds a {} database, not xiangqi",
                                             db.dir().string(), db.manifest().game));
  auto fp = parse_fen(fen);
  if (!fp) return std::move(fp).error();
  ProbeResult r;
  r.fen = to_fen(fp->board, fp->side);
  r.side = fp->side;
  Material m = material_of(fp->board);
  if (m.armless()) {
    // Nothing to look up: only the flying general decides anything.
    r.endgame = m.name();
    r.metric = "dtm";
    r.value = can_capture_king(fp->board, fp->side) ? 1 : 0;
    return r;
  }
  // The endgame in the database: the plain name, or with every pawn pinned to its rank.
  if (!db.has_segment(m.name())) {
    Material pinned = m;
    for (int s = 0; s < kSquares; ++s)
      if (fp->board[s] && type_of(fp->board[s]) == pawn)
        pinned.levels[color_of(fp->board[s])].push_back(static_cast<std::int8_t>(rank_of(s)));
    for (auto& l : pinned.levels) std::sort(l.begin(), l.end());
    if (!db.has_segment(pinned.name()))
      return Error(Errc::not_found,
                   fmt::format("endgame {} is not in database '{}'; build it with `retra build "
                               "xiangqi --endgame {} --db {}`",
                               m.name(), db.dir().string(), m.name(), db.dir().string()));
    m = pinned;
  }
  auto gr = Game::closure({m});
  if (!gr) return std::move(gr).error();
  const Game& g = **gr;
  const int s = g.find(m.name());
  r.endgame = m.name();
  r.metric = db.manifest().find(r.endgame)->stats.value("metric", "dtm");
  auto pos = g.from_board(s, fp->board, fp->side);
  if (!pos) return std::move(pos).error();
  r.index = g.rank(s, *pos);
  auto v = stored(db, r.endgame, r.index);
  if (!v) return std::move(v).error();
  r.value = *v;
  // Every move, with the value it leads to. Game::for_each_move and piece_moves visit the pieces
  // of the side to move in slot order and each piece's moves in the same order, so the k-th child
  // belongs to the k-th move.
  struct ChildInfo {
    int value;
    bool converts;
  };
  std::vector<ChildInfo> children;
  std::optional<Error> err;
  g.for_each_move(s, *pos, [&](const Child<int>& c) {
    if (err) return;
    if (c.segment == Game::kArmless) {
      children.push_back({static_cast<int>(c.index), true});
      return;
    }
    auto x = stored(db, g.endgame(c.segment).name, c.index);
    if (!x) {
      err = x.error();
      return;
    }
    children.push_back({*x, c.converts});
  });
  if (err) return *err;
  const Board b = g.board(s, *pos);
  std::vector<Move> ordered;
  for (int i = 0; i < g.endgame(s).n; ++i) {
    if (g.endgame(s).slots[i].color != fp->side) continue;
    auto on_move = [&](const Move& mv) { ordered.push_back(mv); };
    detail::piece_moves(b, pos->sq[i], on_move);
  }
  for (std::size_t k = 0; k < ordered.size(); ++k) {
    MoveValue mv;
    mv.move = move_name(b, ordered[k]);
    mv.capture = ordered[k].captured != 0;
    mv.child_value = children[k].value;
    // In a distance-to-conversion endgame a conversion is a win now (1) or a loss (2).
    if (r.metric == "dtc" && children[k].converts && mv.child_value != 0)
      mv.value = (mv.child_value & 1) ? 2 : 1;
    else
      mv.value = propagate(mv.child_value);
    r.moves.push_back(mv);
  }
  if (r.value != 1)
    for (const auto& mv : r.moves)
      if (mv.value == r.value) r.best.push_back(mv.move);
  return r;
}

}  // namespace retra::xiangqi
