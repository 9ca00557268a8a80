// The games the CLI knows. Adding a game is one line in kGames (plus its module).
// Thread safety: constant data.
#include <array>

#include "cli.hpp"

namespace retra::cli {

extern const GameCommands kAwariCommands;
extern const GameCommands kXiangqiCommands;

namespace {
const std::array<const GameCommands*, 2> kGames = {
    &kAwariCommands,
    &kXiangqiCommands,
};
std::array<GameCommands, kGames.size()> copies() {
  std::array<GameCommands, kGames.size()> a{};
  for (std::size_t i = 0; i < kGames.size(); ++i) a[i] = *kGames[i];
  return a;
}
}  // namespace

std::span<const GameCommands> games() {
  static const auto all = copies();
  return all;
}

const GameCommands* find_game(std::string_view name) {
  for (const auto& g : games())
    if (g.name == name) return &g;
  return nullptr;
}

}  // namespace retra::cli
