// ModuleOf<D>: the game-blind table (src/module/module.hpp) of a typed game descriptor
// (src/module/descriptor.hpp). Each game instantiates it once, in its own folder
// (src/games/<game>/module.cpp), which is where the generic build and verify drivers and the
// solver engine are compiled for that game.
// Thread safety: immutable; every member is reentrant.
#pragma once

#include <memory>

#include <fmt/format.h>

#include "src/build/driver.hpp"
#include "src/module/descriptor.hpp"
#include "src/module/dont_care.hpp"
#include "src/module/entry_rules.hpp"
#include "src/module/module.hpp"
#include "src/solve/engine_solver.hpp"
#include "src/verify/driver.hpp"

namespace retra {

template <GameDescriptor D>
class ModuleOf final : public GameModule {
  using G = typename D::Game;

 public:
  std::string_view name() const override { return G::kName; }
  std::string_view summary() const override { return D::kSummary; }
  DatabaseIdentity identity() const override {
    return {std::string(G::kName), std::string(G::kVariant), std::string(G::kIndexer),
            std::string(G::kValueEncoding)};
  }
  ValueKind value_kind() const override { return G::kValueKind; }
  bool dtc_metric() const override {
    if constexpr (requires { G::kDtcFallback; })
      return G::kDtcFallback;
    else
      return false;
  }
  const Nouns& nouns() const override { return D::kNouns; }

  std::span<const OptionSpec> target_options() const override { return D::target_options(); }
  Result<std::vector<std::string>> targets(const OptionValues& values) const override {
    return D::targets(values);
  }
  format::WriteDefaults write_defaults() const override {
    if constexpr (requires { D::kWriteDefaults; })
      return D::kWriteDefaults;
    else
      return {};
  }
  Result<std::vector<SegmentReport>> build(const BuildRequest& request) const override {
    BuildRequest r = request;
    const format::WriteDefaults d = write_defaults();
    if (r.zstd_level == 0) r.zstd_level = d.zstd_level;
    if (r.block_entries == 0) r.block_entries = d.block_entries;
    return builder::run<D>(r);
  }
  std::string report_header() const override { return D::report_header(); }
  std::string report_row(const SegmentReport& r) const override { return D::report_row(r); }
  nlohmann::json report_json(const SegmentReport& r) const override { return D::report_json(r); }
  void report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                     std::string& line) const override {
    D::report_totals(reports, json, line);
  }

  Result<VerifyReport> verify(const Database& db, const VerifyOptions& opt) const override {
    return verifier::run<D>(db, opt);
  }

  Result<std::shared_ptr<const format::EntryRules>> entry_rules(
      std::string_view segment) const override {
    if constexpr (!kHasEntryRules<G>) {
      (void)segment;
      return std::shared_ptr<const format::EntryRules>();
    } else {
      auto found = find_segment(segment);
      if (!found) return std::move(found).error();
      return std::shared_ptr<const format::EntryRules>(
          std::make_shared<GameEntryRules<G>>(found->first, found->second));
    }
  }
  Result<std::vector<std::uint64_t>> index_digits(std::string_view segment) const override {
    if constexpr (!HasIndexDigits<G>) {
      (void)segment;
      return std::vector<std::uint64_t>();
    } else {
      auto found = find_segment(segment);
      if (!found) return std::move(found).error();
      return std::vector<std::uint64_t>(found->first->index_digits(found->second));
    }
  }
  Result<std::optional<std::array<std::uint8_t, 256>>> class_bytes(
      std::string_view segment) const override {
    using Bytes = std::optional<std::array<std::uint8_t, 256>>;
    if constexpr (!HasClassHalves<G>) {
      (void)segment;
      return Bytes();
    } else {
      auto found = find_segment(segment);
      if (!found) return std::move(found).error();
      const G& g = *found->first;
      if (!g.drops_distances(found->second)) return Bytes();
      return Bytes(retra::class_bytes(g, found->second));
    }
  }
  Result<std::optional<DontCareMask>> dont_care(const Database& db, std::string_view segment,
                                                format::ClassHalf half,
                                                std::span<const format::FarValue> far,
                                                std::span<const std::uint8_t> values,
                                                format::DontCareMoves moves,
                                                int threads) const override {
    if constexpr (!HasDontCare<D>) {
      (void)db, (void)segment, (void)half, (void)far, (void)values, (void)moves, (void)threads;
      return std::optional<DontCareMask>();
    } else {
      auto found = find_segment(segment);
      if (!found) return std::move(found).error();
      return dont_care_entries<D>(db, *found->first, found->second, half, far, values, moves,
                                  threads);
    }
  }
  Result<std::vector<std::string>> dependency_order(
      std::span<const std::string> names) const override {
    const std::vector<std::string> asked(names.begin(), names.end());
    auto sel = D::select(asked);
    if (!sel) return std::move(sel).error();
    std::vector<std::string> out;
    for (const auto& s : sel->order) {
      std::string n = D::segment_name(*sel->game, s);
      if (std::find(asked.begin(), asked.end(), n) != asked.end()) out.push_back(std::move(n));
    }
    return out;
  }
  std::unique_ptr<probe::Locator> locator(std::span<const std::string> segments) const override {
    return D::locator(segments);
  }
  Result<Report> probe_report(const Database& db, std::string_view position) const override {
    return D::probe_report(db, position);
  }
  Result<Report> stats_report(const Database& db,
                              const std::optional<std::string>& plot) const override {
    return D::stats_report(db, plot);
  }

  const SolverSpec& solver_spec() const override { return D::kSolver; }
  Result<std::unique_ptr<solve::Solver>> solver(const probe::Prober& db, const solve::Options& opt,
                                                std::optional<int> leaf_max) const override {
    if (leaf_max && (*leaf_max < D::kSolver.leaf_min || *leaf_max > D::kSolver.leaf_max))
      return Error(Errc::invalid_argument,
                   fmt::format("--leaf-max {}: {} leaves hold {}..{} {}", *leaf_max, G::kName,
                               D::kSolver.leaf_min, D::kSolver.leaf_max, D::kSolver.units));
    auto leaves = D::leaf_limit(db, leaf_max);
    if (!leaves) return std::move(leaves).error();
    return std::unique_ptr<solve::Solver>(
        std::make_unique<solve::EngineSolver<typename D::Solver>>(db, opt, *leaves));
  }
  Result<Report> solve_report(const SolveRun& run) const override { return D::solve_report(run); }

 private:
  // The game (with the segment's dependencies) and the id of the segment named `segment`.
  static Result<std::pair<std::shared_ptr<const G>, typename G::SegmentId>> find_segment(
      std::string_view segment) {
    const std::vector<std::string> names{std::string(segment)};
    auto sel = D::select(names);
    if (!sel) return std::move(sel).error();
    for (const auto& s : sel->order)
      if (D::segment_name(*sel->game, s) == segment)
        return std::pair<std::shared_ptr<const G>, typename G::SegmentId>(sel->game, s);
    return Error(Errc::internal, fmt::format("{} has no segment '{}'", G::kName, segment));
  }
};

}  // namespace retra
