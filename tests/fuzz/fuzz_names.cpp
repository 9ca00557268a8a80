// Fuzz target: every game's build target options (stone ranges, endgame and table names, sets,
// piece counts), as `retra build` and retra.build pass them: an answer or a clear error, never a
// crash. Bytes: the first picks the game and option, the rest is the value (split at commas, as
// the CLI does). Thread safety: single-threaded (libFuzzer).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "src/module/module.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using namespace retra;
  const auto games = modules();
  const GameModule& g = *games[data[0] % games.size()];
  const auto opts = g.target_options();
  if (opts.empty()) return 0;
  const OptionSpec& spec = opts[(data[0] / games.size()) % opts.size()];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  OptionValues values;
  auto& list = values[std::string(spec.flag)];
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    list.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos || list.size() > 64) break;
    start = comma + 1;
  }
  auto targets = g.targets(values);
  if (targets) {
    // Every target named is a segment the game knows how to name again.
    for (const auto& t : *targets) FUZZ_CHECK(!t.empty());
  } else {
    FUZZ_CHECK(!targets.error().message().empty());
  }
  return 0;
}
