// The games this retra knows. Adding a game is one line in RETRA_GAMES (plus its folder
// src/games/<game>/, whose module.cpp defines <game>::module()); nothing else names a game.
// Thread safety: constant data after the first call.
#include <string>

#include "src/module/module.hpp"

#define RETRA_GAMES(X) \
  X(awari)             \
  X(xiangqi)           \
  X(chess)

#define RETRA_DECLARE_GAME(game) \
  namespace game {               \
  const GameModule& module();    \
  }
#define RETRA_LIST_GAME(game) &game::module(),

namespace retra {

RETRA_GAMES(RETRA_DECLARE_GAME)

std::span<const GameModule* const> modules() {
  static const GameModule* const all[] = {RETRA_GAMES(RETRA_LIST_GAME)};
  return all;
}

const GameModule* find_module(std::string_view name) {
  for (const GameModule* m : modules())
    if (m->name() == name) return m;
  return nullptr;
}

std::string module_names() {
  std::string s;
  for (const GameModule* m : modules()) s += (s.empty() ? "" : ", ") + std::string(m->name());
  return s;
}

}  // namespace retra
