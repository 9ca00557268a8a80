// The xiangqi game module: everything retra's game-blind layers need to build, verify, probe,
// describe and solve Chinese chess endgame databases (the descriptor of
// src/module/descriptor.hpp). Segments are endgames (material signatures) with both sides to move,
// values distances to mate (Fang's Table 1, spec xiangqi.md).
// Thread safety: stateless; every member is reentrant. The Locator caches per-endgame games under
// once-flags.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/games/xiangqi/board.hpp"
#include "src/games/xiangqi/game.hpp"
#include "src/games/xiangqi/material.hpp"
#include "src/games/xiangqi/solver.hpp"
#include "src/module/descriptor.hpp"

namespace retra::xiangqi {

// Describes a Table 1 value for people: "draw", "wins: captures the king in 5 plies", ...
std::string describe(int value, const std::string& metric);

struct Module {
  using Game = xiangqi::Game;
  using Solver = xiangqi::SolverAdapter;

  static constexpr std::string_view kSummary =
      "Chinese chess endgames with one side armed: distance to mate (Fang's Table 1), "
      "hierarchies of supporting endgames, the paper's 151";
  static constexpr Nouns kNouns{"endgame", "endgames", "entries"};
  static constexpr SolverSpec kSolver{
      "pieces", 0, 32, -1, 1, "xiangqi goals are 1 (win) and 0 (at least a draw)"};

  // ---- segments ----
  static std::span<const OptionSpec> target_options();
  static Result<std::vector<std::string>> targets(const OptionValues& values);
  // The named endgames and every endgame their captures and pawn advances lead to.
  static Result<Selection<Game>> select(std::span<const std::string> names);
  static std::string segment_name(const Game& g, int s) { return g.endgame(s).name; }
  static std::string segment_label(const std::string& name) { return name; }
  // Fewer pieces first, then by name.
  static bool segment_less(const std::string& a, const std::string& b);

  // ---- statistics (spec: counted per mirror class) ----
  struct Stats {
    std::uint64_t index_size = 0, paper_index_size = 0;
    std::string scheme;
    std::uint64_t valid = 0, kfk = 0;
    std::array<std::uint64_t, 2> okic{}, checkmate{}, stalemate{}, draws{};  // by side to move
    std::array<std::map<int, std::uint64_t>, 2> histogram;                   // value -> classes
    std::optional<int> max_dtm_plies;
  };
  static Stats statistics(const Game& g, int s, std::span<const std::uint8_t> values,
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

  // ---- verify (Fang et al. 3.4): end states as Table 1 says, every other value the best that
  // its children propagate ----
  template <class Values>
  static int verify_value(const Game& g, int s, const Position& p, const VerifyContext& ctx,
                          const Values& values) {
    if (!p.valid) return 0;  // holes of the index are stored as 0
    if (can_capture_king(g.board(s, p), p.side)) return 1;
    int best = -1;
    const int moves = g.for_each_move(s, p, [&](const Child<int>& ch) {
      const int cv = values(ch.segment, ch.index);
      const int v = ctx.dtc && ch.converts && cv != 0 ? ((cv & 1) ? 2 : 1) : cv == 0 ? 0 : cv + 1;
      if (best < 0 || preference(v) > preference(best)) best = v;
    });
    return moves == 0 ? 2 : best;
  }
  static std::string position_text(const Game& g, int s, const Position& p) {
    return p.valid ? to_fen(g.board(s, p), p.side) : "(hole of the index)";
  }

  // ---- probe ----
  static std::unique_ptr<probe::Locator> locator(std::span<const std::string> segments);
  static Result<Report> probe_report(const Database& db, std::string_view position);
  static Result<Report> stats_report(const Database& db, const std::optional<std::string>& plot);

  // ---- solve: leaves are the endgames the database holds, up to the asked piece count ----
  static Result<int> leaf_limit(const probe::Prober& db, std::optional<int> asked);
  static Result<Report> solve_report(const SolveRun& run);

 private:
  // Table 1 order for the mover: fast wins first, then draws, then slow losses.
  static int preference(int v) { return v == 0 ? 0 : (v & 1) ? 1000 - v : -1000 + v; }
};
static_assert(GameDescriptor<Module>);

// The probe locator, typed: the xiangqi entry points of the probing library use it directly.
// Endgames are found by piece counts (no name is built) unless a pawn is pinned.
class Locator final : public probe::Locator {
 public:
  explicit Locator(std::span<const std::string> segments);
  probe::Value locate(std::string_view position, probe::Location* where) const override;
  int decode(std::uint8_t stored) const override { return stored; }
  probe::Coverage coverage() const override;
  // A validated board and side to move.
  probe::Value locate(const Board& board, Color side, probe::Location* where) const;

 private:
  struct Slot {
    std::string name;
    std::once_flag once;
    std::shared_ptr<const Game> game;  // the endgame's closure, built on first use
    int segment = -1;
    std::optional<Error> error;
  };
  probe::Value place(int slot, const Board& board, Color side, probe::Location* where) const;

  std::vector<std::unique_ptr<Slot>> slots_;
  std::map<std::string, int, std::less<>> by_name_;
  // Slot by piece counts (count_key) for the endgames without pinned pawns.
  std::unordered_map<std::uint64_t, int> by_counts_;
};

const GameModule& module();

}  // namespace retra::xiangqi
