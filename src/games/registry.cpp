// The games this retra knows. Adding a game is one line in RETRA_GAMES (plus its folder
// src/games/<game>/, whose module.cpp defines <game>::module()); nothing else names a game.
// Thread safety: constant data after the first call.
#include <string>

#include <fmt/format.h>

#include "src/database.hpp"

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

Result<const GameModule*> module_of(const Database& db) {
  const auto& m = db.manifest();
  const GameModule* game = find_module(m.game);
  if (!game)
    return Error(Errc::mismatch,
                 fmt::format("'{}' holds a database of game '{}', which this retra does not know "
                             "(known: {})",
                             db.dir().string(), m.game, module_names()));
  const DatabaseIdentity id = game->identity();
  if (m.variant != id.variant || m.indexer != id.indexer || m.value_encoding != id.value_encoding)
    return Error(Errc::mismatch,
                 fmt::format("'{}' holds a {} database written as ({}, {}, {}), but this retra "
                             "reads {} as ({}, {}, {}); rebuild it with this version",
                             db.dir().string(), m.game, m.variant, m.indexer, m.value_encoding,
                             m.game, id.variant, id.indexer, id.value_encoding));
  return game;
}

std::string module_names() {
  std::string s;
  for (const GameModule* m : modules()) s += (s.empty() ? "" : ", ") + std::string(m->name());
  return s;
}

}  // namespace retra
