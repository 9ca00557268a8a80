// The xiangqi entry points of the probing library (include/retra/probe.hpp, include/retra/retra.h):
// thin typed wrappers over the game-blind core, by FEN and by board (no FEN parsing).
// Thread safety: as Prober (every call may run concurrently).
#include <fmt/format.h>

#include "retra/probe.hpp"
#include "src/games/xiangqi/module.hpp"
#include "src/probe/c_api_impl.hpp"
#include "src/probe/prober_impl.hpp"

namespace retra::probe {

namespace {
int decode(std::uint8_t b) { return b; }  // dtm-u8: the Table 1 byte itself
}  // namespace

Value Prober::xiangqi(std::string_view fen) const {
  if (impl_->game != xiangqi::Game::kName) return detail::wrong_game("a xiangqi", impl_->game);
  Location where;
  Value v = impl_->locator->locate(fen, &where);
  if (!v) return v;
  return impl_->read(where, decode);
}

Value Prober::xiangqi_board(std::span<const std::uint8_t, 90> board, int side_to_move) const {
  if (impl_->game != xiangqi::Game::kName) return detail::wrong_game("a xiangqi", impl_->game);
  if (side_to_move != 0 && side_to_move != 1)
    return detail::failure(
        Status::invalid_argument,
        fmt::format("side to move {}: use 0 for Red, 1 for Black", side_to_move));
  xiangqi::Board b;
  std::copy(board.begin(), board.end(), b.begin());
  if (auto why = xiangqi::board_error(b))
    return detail::failure(Status::invalid_argument, fmt::format("xiangqi board: {}", *why));
  const auto& locator = static_cast<const xiangqi::Locator&>(*impl_->locator);
  Location where;
  Value v = locator.locate(b, xiangqi::Color(side_to_move), &where);
  if (!v) return v;
  return impl_->read(where, decode);
}

void Prober::xiangqi_batch(std::span<const std::string_view> fens, std::span<Value> out) const {
  if (impl_->game != xiangqi::Game::kName) {
    for (std::size_t i = 0; i < std::min(fens.size(), out.size()); ++i)
      out[i] = detail::wrong_game("a xiangqi", impl_->game);
    return;
  }
  probe_batch(fens, out);
}

}  // namespace retra::probe

using namespace retra::capi;
using retra::probe::Status;
using retra::probe::Value;

extern "C" {

int retra_xiangqi_probe(const retra_db* db, const char* fen, int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!fen || !value) return fail(Status::null_handle, "fen or value is null");
    const Value v = p->xiangqi(fen);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_xiangqi_probe_board(const retra_db* db, const unsigned char board[90], int side_to_move,
                              int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!board || !value) return fail(Status::null_handle, "board or value is null");
    const Value v = p->xiangqi_board(std::span<const std::uint8_t, 90>(board, 90), side_to_move);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_xiangqi_probe_batch(const retra_db* db, const char* const* fens, size_t n, int* values,
                              int* statuses) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (n == 0) return static_cast<int>(RETRA_OK);
    if (!fens || !values) return fail(Status::null_handle, "fens or values is null");
    std::vector<std::string_view> f(n);
    for (size_t i = 0; i < n; ++i) {
      if (!fens[i]) return fail(Status::null_handle, "a FEN in the batch is null");
      f[i] = fens[i];
    }
    std::vector<Value> out(n);
    p->xiangqi_batch(f, out);
    return store_batch(out, values, statuses);
  });
}

}  // extern "C"
