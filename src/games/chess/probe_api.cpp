// The chess entry points of the probing library (include/retra/probe.hpp, include/retra/retra.h):
// positions by bitboards as engines hold them, WDL alone (the hot path: no allocation when it
// succeeds), WDL with DTZ and DTM, and root probes that rank every legal move.
// Thread safety: as Prober (every call may run concurrently).
#include <fmt/format.h>

#include "retra/probe.hpp"
#include "src/games/chess/module.hpp"
#include "src/games/chess/tables.hpp"
#include "src/probe/c_api_impl.hpp"
#include "src/probe/prober_impl.hpp"

namespace retra::chess {
const Tables& tables_of(const probe::Locator& l);
}  // namespace retra::chess

namespace retra::probe {

namespace {

// The board of a bitboard position, checked as a FEN is.
Result<chess::Board> board_of(const ChessBoard& c) {
  using namespace chess;
  Board b;
  const std::uint64_t all = c.white | c.black;
  if (c.white & c.black)
    return Error(Errc::invalid_argument, "a square is in both the white and the black mask");
  const std::uint64_t types[kTypes] = {c.kings, c.queens, c.rooks, c.bishops, c.knights, c.pawns};
  std::uint64_t seen = 0;
  for (int t = 0; t < kTypes; ++t) {
    if (types[t] & seen) return Error(Errc::invalid_argument, "a square holds two piece types");
    seen |= types[t];
  }
  if (seen != all)
    return Error(Errc::invalid_argument, "the colour masks and the piece masks differ");
  for (int t = 0; t < kTypes; ++t)
    for (std::uint64_t m = types[t]; m; m &= m - 1) {
      const int s = std::countr_zero(m);
      b.piece[s] = code(PieceType(t), (c.white & bit(s)) ? white : black);
    }
  b.side = c.white_to_move ? white : black;
  b.halfmove = static_cast<int>(c.rule50);
  if (auto why = board_error(b)) return Error(Errc::invalid_argument, *why);
  if (c.ep) {
    if (c.ep > 63 || rank_of(static_cast<int>(c.ep)) != (b.side == white ? 5 : 2))
      return Error(Errc::invalid_argument,
                   fmt::format("en-passant square {} is not on the rank the side to move "
                               "captures onto",
                               c.ep));
    b.ep = static_cast<int>(c.ep);
    b = normalized(b);
  }
  return b;
}

bool is_chess(const Prober::Impl& impl) { return impl.game == chess::Game::kName; }

}  // namespace

namespace {

// The engines' hot path: a position without an en-passant square whose masks are consistent and
// legal, checked on the bitboards alone (no Board, no allocation). Anything else (an en-passant
// square, an error to describe) goes through board_of, which says what is wrong.
bool plainly_legal(const ChessBoard& c, chess::Tables::PieceSets& sets) {
  using namespace chess;
  if (c.ep || (c.white & c.black)) return false;
  const std::uint64_t types[kTypes] = {c.kings, c.queens, c.rooks, c.bishops, c.knights, c.pawns};
  std::uint64_t seen = 0, overlap = 0;
  for (int t = 0; t < kTypes; ++t) {
    overlap |= seen & types[t];
    seen |= types[t];
    sets[code(PieceType(t), white)] = types[t] & c.white;
    sets[code(PieceType(t), black)] = types[t] & c.black;
  }
  constexpr std::uint64_t kBackRanks = 0xff000000000000ffull;
  if (overlap || seen != (c.white | c.black) || (c.pawns & kBackRanks)) return false;
  const std::uint64_t wk = c.kings & c.white, bk = c.kings & c.black;
  if (std::popcount(wk) != 1 || std::popcount(bk) != 1) return false;
  // At most 7 pieces: the promotion limit of board_error cannot be reached.
  if (std::popcount(seen) > kMaxPieces) return false;
  const int ws = std::countr_zero(wk), bs = std::countr_zero(bk);
  if (king_attacks(ws) & bk) return false;
  // The side not to move must not be in check.
  const Color mover = c.white_to_move ? white : black;
  return !attacked(sets, mover == white ? bs : ws, mover, seen);
}

}  // namespace

Value Prober::chess_wdl(const ChessBoard& board) const {
  if (!is_chess(*impl_)) return detail::wrong_game("a chess", impl_->game);
  const chess::Tables& t = chess::tables_of(*impl_->locator);
  chess::Tables::PieceSets sets{};
  if (plainly_legal(board, sets)) {
    chess::Tables::Where w;
    Value where = t.locate(sets, board.white_to_move ? chess::white : chess::black, &w);
    if (!where) return where;
    if (w.kings_only) return detail::success(chess::draw);
    // With don't-care entries (docs/FORMAT.md) the stored class is a lower bound: the zeroing
    // moves (or the captures alone) may do better.
    const chess::LowerBound bound = chess::lower_bound_of(impl_->dont_care(w.dtz_slot));
    if (!bound.lower) {
      Value v = impl_->byte(w.dtz_slot, w.index);
      if (v) v.value = chess::decode_dtz(v.value).wdl;
      return v;
    }
    // The stored entry is fetched while the children are generated and located, and theirs with
    // it: the cache misses overlap that work and each other instead of following one another
    // (the children are wasted where the entry is a win; still about 15% faster on KQPvKQ,
    // docs/CHESS.md).
    const chess::Color side = board.white_to_move ? chess::white : chess::black;
    auto read = impl_->byte_reader();
    read.prefetch(w.dtz_slot, w.index);
    chess::ZeroingChildren kids;
    kids.collect(t, sets, side, bound.captures_only);
    kids.prefetch(read);
    Value v = impl_->byte(w.dtz_slot, w.index);
    if (v) v.value = chess::decode_dtz(v.value).wdl;
    if (!v || v.value == chess::win) return v;
    return kids.search(t, sets, side, read, v.value, chess::win);
  }
  auto b = board_of(board);
  if (!b) return detail::failure(b.error());
  const ChessValue v = chess::evaluate(t, *b, impl_->byte_reader(), chess::kWdlOnly);
  if (!v) return detail::failure(v.status, v.message);
  return detail::success(v.wdl);
}

ChessValue Prober::chess(const ChessBoard& board) const {
  ChessValue v;
  if (!is_chess(*impl_)) {
    const Value w = detail::wrong_game("a chess", impl_->game);
    v.status = w.status;
    v.message = w.message;
    return v;
  }
  auto b = board_of(board);
  if (!b) {
    v.status = Status::invalid_argument;
    v.message = b.error().message();
    return v;
  }
  return chess::evaluate(chess::tables_of(*impl_->locator), *b, impl_->byte_reader());
}

int Prober::chess_root(const ChessBoard& board, std::span<ChessMove> out,
                       ChessValue* position) const {
  ChessValue local;
  ChessValue& pos = position ? *position : local;
  if (!is_chess(*impl_)) {
    const Value w = detail::wrong_game("a chess", impl_->game);
    pos.status = w.status;
    pos.message = w.message;
    return -1;
  }
  auto b = board_of(board);
  if (!b) {
    pos.status = Status::invalid_argument;
    pos.message = b.error().message();
    return -1;
  }
  return chess::root(chess::tables_of(*impl_->locator), *b, impl_->byte_reader(), out, &pos);
}

}  // namespace retra::probe

using namespace retra::capi;
using retra::probe::ChessBoard;
using retra::probe::Status;

namespace {
ChessBoard chess_board(unsigned long long white, unsigned long long black, unsigned long long kings,
                       unsigned long long queens, unsigned long long rooks,
                       unsigned long long bishops, unsigned long long knights,
                       unsigned long long pawns, unsigned rule50, unsigned ep, int white_to_move) {
  return {
      white, black, kings, queens, rooks, bishops, knights, pawns, rule50, ep, white_to_move != 0};
}
int finish_chess(const retra::probe::ChessValue& v) {
  if (v) return RETRA_OK;
  return fail(v.status, v.message);
}
}  // namespace

extern "C" {

int retra_chess_probe_wdl(const retra_db* db, unsigned long long white, unsigned long long black,
                          unsigned long long kings, unsigned long long queens,
                          unsigned long long rooks, unsigned long long bishops,
                          unsigned long long knights, unsigned long long pawns, unsigned rule50,
                          unsigned ep, int white_to_move, int* wdl) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!wdl) return fail(Status::null_handle, "wdl is null");
    const auto v = p->chess_wdl(chess_board(white, black, kings, queens, rooks, bishops, knights,
                                            pawns, rule50, ep, white_to_move));
    if (v) *wdl = v.value;
    return finish(v);
  });
}

int retra_chess_probe(const retra_db* db, unsigned long long white, unsigned long long black,
                      unsigned long long kings, unsigned long long queens, unsigned long long rooks,
                      unsigned long long bishops, unsigned long long knights,
                      unsigned long long pawns, unsigned rule50, unsigned ep, int white_to_move,
                      int* wdl, int* dtz, int* dtm, int* has_dtm) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    const auto v = p->chess(chess_board(white, black, kings, queens, rooks, bishops, knights, pawns,
                                        rule50, ep, white_to_move));
    if (v) {
      if (wdl) *wdl = v.wdl;
      if (dtz) *dtz = v.dtz;
      if (dtm) *dtm = v.dtm;
      if (has_dtm) *has_dtm = v.has_dtm;
    }
    return finish_chess(v);
  });
}

int retra_chess_probe_root(const retra_db* db, unsigned long long white, unsigned long long black,
                           unsigned long long kings, unsigned long long queens,
                           unsigned long long rooks, unsigned long long bishops,
                           unsigned long long knights, unsigned long long pawns, unsigned rule50,
                           unsigned ep, int white_to_move, retra_chess_move* moves, size_t capacity,
                           size_t* count) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!count || (capacity && !moves)) return fail(Status::null_handle, "moves or count is null");
    std::vector<retra::probe::ChessMove> out(256);
    retra::probe::ChessValue pos;
    const int n = p->chess_root(chess_board(white, black, kings, queens, rooks, bishops, knights,
                                            pawns, rule50, ep, white_to_move),
                                out, &pos);
    if (n < 0) return finish_chess(pos);
    *count = static_cast<size_t>(n);
    for (size_t i = 0; i < capacity && i < static_cast<size_t>(n); ++i) {
      const auto& m = out[i];
      moves[i] = {m.from,      m.to,        m.promotion,     m.value.wdl,
                  m.value.dtz, m.value.dtm, m.value.has_dtm, m.value.outcome};
    }
    return static_cast<int>(RETRA_OK);
  });
}

}  // extern "C"
