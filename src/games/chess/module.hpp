// The chess game module: everything retra's game-blind layers need to build, verify, probe,
// describe and solve Western chess endgame tables (the descriptor of src/module/descriptor.hpp).
// Tables are canonical materials split into pawn-rank segments; each segment stores its distance
// to zeroing under the 50-move rule (which gives the five WDL50 classes) and, when built, its
// distance to mate (spec chess.md).
// Thread safety: stateless; every member is reentrant. The Locator caches per-segment indexers
// under once-flags.
#pragma once

#include <array>
#include <cassert>
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

#include "src/games/chess/board.hpp"
#include "src/games/chess/game.hpp"
#include "src/games/chess/solver.hpp"
#include "src/games/chess/values.hpp"
#include "src/module/descriptor.hpp"

namespace retra::chess {

struct Module {
  using Game = chess::Game;
  using Solver = chess::SolverAdapter;

  static constexpr std::string_view kSummary =
      "Western chess endgame tables: WDL and DTZ under the 50-move rule, and distance to mate";
  // A segment is one pawn profile of a table (or its DTM bytes): reports list segments under
  // "segments" and count whole tables under "tables".
  static constexpr Nouns kNouns{"segment", "segments", "positions"};
  static constexpr SolverSpec kSolver{
      "pieces", 2, 32, -1, 1, "chess goals are 1 (win) and 0 (at least a draw)"};
  // zstd -9 with 256 Ki-entry blocks: chess values repeat in patterns longer than the default
  // 64 Ki entries, which zstd's lazy matchers at -9 find. Measured on KRPvKR and KQRvKR
  // (docs/CHESS-LOG.md, "Fifth session"): 30% and 21% fewer bytes than -3 with 64 Ki blocks, for
  // about 1.5 s more writing per 100 M-position segment on 2 threads; 1 Mi blocks would save 2-3%
  // more but decode 4 times as much per cold probe.
  static constexpr format::WriteDefaults kWriteDefaults{9, 1u << 18};

  // ---- segments ----
  static std::span<const OptionSpec> target_options();
  static Result<std::vector<std::string>> targets(const OptionValues& values);
  static Result<Selection<Game>> select(std::span<const std::string> names);
  static std::string segment_name(const Game& g, int s) { return g.segment_name(s); }
  static std::string segment_label(const std::string& name) { return name; }
  // Fewer pieces first, distance to zeroing before distance to mate, then by name.
  static bool segment_less(const std::string& a, const std::string& b);

  // ---- statistics, per side to move (white, black) ----
  struct Longest {
    int plies = 0;
    std::string fen;
  };
  struct Side {
    std::uint64_t legal = 0;
    std::array<std::uint64_t, 5> wdl{};              // loss, blessed loss, draw, cursed win, win
    std::map<int, std::uint64_t> histogram;          // signed DTZ or DTM -> positions
    std::optional<Longest> longest, longest_cursed;  // the longest (cursed) win
  };
  struct Stats {
    bool dtm = false;  // a distance-to-mate segment (histogram of DTM), else DTZ with WDL
    std::uint64_t index_size = 0;
    std::array<Side, 2> side;
  };
  // holes: the index's holes as the kernel marked them (descriptor.hpp, optional member); empty:
  // found by stepping through the positions.
  static Stats statistics(const Game& g, int s, std::span<const std::uint8_t> values,
                          std::span<const format::FarValue> far, int threads,
                          std::span<const std::uint64_t> holes);
  static Stats statistics(const Game& g, int s, std::span<const std::uint8_t> values,
                          std::span<const format::FarValue> far, int threads) {
    return statistics(g, s, values, far, threads, {});
  }
  static nlohmann::json stats_json(const Stats& s);
  static Result<Stats> stats_from_json(const nlohmann::json& j);
  static std::optional<std::string> stats_mismatch(const Stats& on_disk, const Stats& recorded);

  // ---- build report ----
  static std::string report_header();
  static std::string report_row(const SegmentReport& r);
  static nlohmann::json report_json(const SegmentReport& r);
  static void report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                            std::string& line);

  // ---- verify: every stored value is the best its moves give, from the rules and the children's
  // stored values (not from the kernels) ----
  template <class Values>
  static int verify_value(const Game& g, int s, const Position& p, const VerifyContext& ctx,
                          const Values& values) {
    if (!p.valid) return 0;  // holes of the index (and illegal placements) are stored as 0
    Best best(ctx.kind == ValueKind::dtm);
    const int moves = g.for_each_move(
        s, p, [&](const Child<int>& c) { best.add(values(c.segment, c.index), c.converts); });
    return moves == 0 ? g.no_move_value(s, p) : best.value();
  }
  // ---- don't-care entries (docs/FORMAT.md, kDontCare): where a DTZ entry's value is what its
  // zeroing moves (captures, pawn moves; or, ctx.captures_only, its captures alone) give, a
  // probe finds it by searching them (tables.hpp, zeroing_best), so an archived file may store
  // any value no better there. DTM segments stay exact. ----
  template <class Values>
  static std::optional<int> conversion_value(const Game& g, int s, const Position& p,
                                             const VerifyContext& ctx, const Values& values) {
    if (!p.valid || ctx.kind != ValueKind::dtz) return std::nullopt;
    Best best(false);
    bool any = false;
    const int pieces = g.table(s).n;
    // Converting moves alone: quiet moves are counted, never ranked (ranking each quiet child
    // took most of `recompress --dont-care`'s marking time).
    g.for_each_conversion(s, p, [&](const Child<int>& c) {
      assert(c.converts);
      // A capture leaves fewer pieces (a table of fewer, or only the kings); a push, a
      // promotion without a capture and a double push with an en-passant reply do not.
      if (ctx.captures_only && c.segment != Game::kKingsOnly &&
          (Game::virtual_segment(c.segment) || g.table(c.segment).n >= pieces))
        return;
      best.add(values(c.segment, c.index), true);
      any = true;
    });
    if (!any) return std::nullopt;
    return best.value();
  }
  // The mover's order of DTZ bytes (dtz_order), as ranks 0..255; nullopt for DTM.
  static std::optional<std::array<std::uint8_t, 256>> dont_care_rank(ValueKind kind);
  static std::string position_text(const Game& g, int s, const Position& p) {
    return p.valid ? to_fen(g.board(s, p)) : "(not a position: a hole of the index)";
  }

  // ---- probe ----
  static std::unique_ptr<probe::Locator> locator(std::span<const std::string> segments);
  static Result<Report> probe_report(const Database& db, std::string_view position);
  static Result<Report> stats_report(const Database& db, const std::optional<std::string>& plot);

  // ---- solve: the tables the database holds are leaves (up to the asked piece count) ----
  static Result<int> leaf_limit(const probe::Prober& db, std::optional<int> asked);
  static Result<Report> solve_report(const SolveRun& run);
};
static_assert(GameDescriptor<Module>);

const GameModule& module();

}  // namespace retra::chess
