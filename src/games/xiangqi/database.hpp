// Xiangqi endgame databases: build whole hierarchies of supporting endgames (independent ones
// concurrently), statistics as the spec defines them, probes by FEN, and the one-pass verifier.
// Thread safety: build() and verify() run their own threads; one build per directory (locked);
// probe() may be called from many threads on one Database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "retra/error.hpp"
#include "src/database.hpp"
#include "src/format/segment.hpp"
#include "src/games/xiangqi/game.hpp"
#include "src/memory_plan.hpp"
#include "src/progress.hpp"
#include "src/tuning.hpp"
#include "src/verify.hpp"

namespace retra::xiangqi {

DatabaseIdentity identity();

struct EndgameReport {
  std::string name;
  std::uint64_t index_size = 0;        // per side to move
  std::uint64_t paper_index_size = 0;  // the paper's scheme, for comparison
  std::string scheme;
  bool skipped = false;
  std::string metric;  // "dtm", or "dtc" where a distance would not fit one byte
  int levels = 0;
  int threads = 0;
  double kernel_seconds = 0, seconds = 0;
  // Resident memory of the process when the endgame's kernel finished: its arrays, the values of
  // the supporting endgames it reads, and whatever was built beside it at that moment.
  std::uint64_t rss_bytes = 0;
  std::uint64_t file_bytes = 0, raw_bytes = 0;
  nlohmann::json stats;
};

struct BuildOptions {
  std::vector<std::string> endgames;  // names; their supporting endgames are built first
  std::filesystem::path db;
  int threads = 1;
  int jobs = 0;        // endgames built at once (0: as many as threads allow)
  bool force = false;  // rebuild the named endgames (supporting ones only when missing)
  int zstd_level = 3;
  std::uint32_t block_entries = format::kDefaultBlockEntries;
  std::uint64_t memory_limit = 0;  // 0: 80% of RAM
  // Distance to conversion for every endgame built (Fang 3.3), not only where a distance to mate
  // would exceed 254 plies.
  bool dtc = false;
  Tuning tuning;
  Progress* progress = nullptr;
  std::function<void(const MemoryPlan&)> on_plan;
  std::function<void(const EndgameReport&)> on_endgame;  // called under a lock, any thread
};

Result<std::vector<EndgameReport>> build(const BuildOptions& opt);

// Statistics of one endgame from its values (spec: index_size, valid_positions, kfk, okic,
// checkmate, stalemate, draws, histogram, max_dtm_plies), counted per mirror class.
nlohmann::json endgame_stats(const Game& g, int s, const std::uint8_t* values, int threads);

// ---- probing ---------------------------------------------------------------------------------

struct MoveValue {
  std::string move;  // "Ra0-a9"
  bool capture = false;
  int child_value = 0;  // the child's value, from the opponent's side
  int value = 0;        // what the move is worth to the mover, in Table 1 terms
};

struct ProbeResult {
  std::string fen;
  std::string endgame;
  std::string metric;
  Color side = red;
  std::uint64_t index = 0;
  int value = 0;
  std::vector<MoveValue> moves;  // every pseudo-legal move
  std::vector<std::string> best;
};

// Describes a Table 1 value for people: "draw", "wins: captures the king in 5 plies", ...
std::string describe(int value, const std::string& metric);

Result<ProbeResult> probe(const Database& db, std::string_view fen);

// ---- verification ----------------------------------------------------------------------------

// Fang's 3.4 one-pass check: end states as Table 1 says, every other stored value equal to the
// best propagated from its children (read back from the segment files), plus every checksum and
// the manifest's statistics.
Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt);

}  // namespace retra::xiangqi
