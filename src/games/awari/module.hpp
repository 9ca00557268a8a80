// The Awari game module: everything retra's game-blind layers need to build, verify, probe,
// describe and solve Awari databases (the descriptor of src/module/descriptor.hpp). Segments are
// stone counts 0..48, values score differences (spec awari.md).
// Thread safety: stateless; every member is reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/games/awari/board.hpp"
#include "src/games/awari/game.hpp"
#include "src/games/awari/index.hpp"
#include "src/games/awari/solver.hpp"
#include "src/module/descriptor.hpp"

namespace retra::awari {

// The stone counts a..b as segment names.
std::vector<std::string> stone_range(int a, int b);

struct Module {
  using Game = awari::Game;
  using Solver = awari::SolverAdapter;

  static constexpr std::string_view kSummary =
      "Awari (Olympiad rules): score databases, one segment per stone count";
  static constexpr Nouns kNouns{"segment", "segments", "positions"};
  static constexpr SolverSpec kSolver{
      "stones",
      0,
      kMaxStones,
      -kMaxStones,
      kMaxStones,
      "an Awari threshold is the final difference the side to move must reach, -48..48"};

  // ---- segments ----
  static std::span<const OptionSpec> target_options();
  static Result<std::vector<std::string>> targets(const OptionValues& values);
  // The named stone counts and every smaller one (captures need them).
  static Result<Selection<Game>> select(std::span<const std::string> names);
  static std::string segment_name(const Game&, int stones) { return std::to_string(stones); }
  static std::string segment_label(const std::string& name) { return name + " stones"; }
  static bool segment_less(const std::string& a, const std::string& b);

  // ---- statistics: the value histogram ----
  struct Stats {
    std::uint64_t positions = 0;
    int value_min = 0;                  // -stones
    std::vector<std::uint64_t> counts;  // positions with value value_min, value_min + 1, ...
    double mean = 0;
  };
  static Stats statistics(const Game&, int stones, std::span<const std::uint8_t> values,
                          std::span<const format::FarValue> far, int threads);
  static nlohmann::json stats_json(const Stats& s);
  static Result<Stats> stats_from_json(const nlohmann::json& j);
  static std::optional<std::string> stats_mismatch(const Stats& on_disk, const Stats& recorded);

  // ---- build report ----
  static std::string report_header();
  static std::string report_row(const SegmentReport& r);
  static nlohmann::json report_json(const SegmentReport& r);
  static void report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                            std::string& line);

  // ---- verify: the best over the legal moves, from the rules (board.hpp), not the kernels ----
  template <class Values>
  static int verify_value(const Game&, int stones, const Board& p, const VerifyContext&,
                          const Values& values) {
    int best = -1000;
    const int legal = for_each_legal_move(p, [&](int, const MoveResult& m) {
      best = std::max(best, m.captured - values(stones - m.captured, rank(m.child)));
    });
    return legal == 0 ? no_move_value(p) : best;
  }
  static std::string position_text(const Game&, int, const Board& p) { return format_board(p); }

  // ---- probe ----
  static std::unique_ptr<probe::Locator> locator(std::span<const std::string> segments);
  static Result<Report> probe_report(const Database& db, std::string_view position);
  static Result<Report> stats_report(const Database& db, const std::optional<std::string>& plot);

  // ---- solve: leaves are the stone counts 0..k held without a gap ----
  static Result<int> leaf_limit(const probe::Prober& db, std::optional<int> asked);
  static Result<Report> solve_report(const SolveRun& run);
};
static_assert(GameDescriptor<Module>);

// The probe locator, typed: the Awari entry points of the probing library use it directly.
class Locator final : public probe::Locator {
 public:
  explicit Locator(std::span<const std::string> segments);
  probe::Value locate(std::string_view position, probe::Location* where) const override;
  int decode(std::uint8_t stored) const override { return static_cast<std::int8_t>(stored); }
  probe::Coverage coverage() const override;
  // 12 pit counts, the mover's first.
  probe::Value locate(const std::array<int, 12>& pits, probe::Location* where) const;

 private:
  std::array<int, kMaxStones + 1> slot_;  // by stone count, -1 when not built
};

const GameModule& module();

}  // namespace retra::awari
