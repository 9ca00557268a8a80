// The Awari entry points of the probing library (include/retra/probe.hpp, include/retra/retra.h):
// thin typed wrappers over the game-blind core that take the 12 pits instead of text.
// Thread safety: as Prober (every call may run concurrently).
#include "retra/probe.hpp"
#include "src/games/awari/module.hpp"
#include "src/probe/c_api_impl.hpp"
#include "src/probe/prober_impl.hpp"

namespace retra::probe {

namespace {
int decode(std::uint8_t b) { return static_cast<std::int8_t>(b); }  // score-i8
}  // namespace

Value Prober::awari(const std::array<int, 12>& pits) const {
  if (impl_->game != awari::Game::kName) return detail::wrong_game("an Awari", impl_->game);
  const auto& locator = static_cast<const awari::Locator&>(*impl_->locator);
  Location where;
  Value v = locator.locate(pits, &where);
  if (!v) return v;
  return impl_->read(where, decode);
}

void Prober::awari_batch(std::span<const std::array<int, 12>> positions,
                         std::span<Value> out) const {
  const std::size_t n = std::min(positions.size(), out.size());
  if (impl_->game != awari::Game::kName) {
    for (std::size_t i = 0; i < n; ++i) out[i] = detail::wrong_game("an Awari", impl_->game);
    return;
  }
  const auto& locator = static_cast<const awari::Locator&>(*impl_->locator);
  std::vector<detail::Located> todo;
  todo.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Location where;
    out[i] = locator.locate(positions[i], &where);
    if (out[i]) todo.push_back({where.slot, where.index, i});
  }
  impl_->read_batch(todo, out, decode);
}

}  // namespace retra::probe

using namespace retra::capi;
using retra::probe::Status;
using retra::probe::Value;

extern "C" {

int retra_awari_probe(const retra_db* db, const int pits[12], int* value) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (!pits || !value) return fail(Status::null_handle, "pits or value is null");
    std::array<int, 12> a;
    std::copy(pits, pits + 12, a.begin());
    const Value v = p->awari(a);
    if (v) *value = v.value;
    return finish(v);
  });
}

int retra_awari_probe_batch(const retra_db* db, const int* pits, size_t n, int* values,
                            int* statuses) {
  return guarded([&] {
    const retra::probe::Prober* p = nullptr;
    if (int st = check(db, &p); st != RETRA_OK) return st;
    if (n == 0) return static_cast<int>(RETRA_OK);
    if (!pits || !values) return fail(Status::null_handle, "pits or values is null");
    std::vector<std::array<int, 12>> pos(n);
    for (size_t i = 0; i < n; ++i) std::copy(pits + 12 * i, pits + 12 * i + 12, pos[i].begin());
    std::vector<Value> out(n);
    p->awari_batch(pos, out);
    return store_batch(out, values, statuses);
  });
}

}  // extern "C"
