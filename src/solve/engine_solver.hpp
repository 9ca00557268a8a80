// solve::Solver for any game, from the game's solver adapter: the adapter is a SolverGame
// (src/solve/pn_engine.hpp) that also parses a position and says which values it can have, and
// this template does everything else once (threshold searches, limits, timing, errors).
// Thread safety: one search at a time per solver; adapters are created per search.
#pragma once

#include <chrono>
#include <concepts>
#include <optional>
#include <string_view>
#include <utility>

#include "retra/solve.hpp"
#include "src/solve/pn_engine.hpp"

namespace retra::solve {

// A game's solver adapter, beyond SolverGame:
//   A(db, leaf_max, options)   one search's adapter over the database
//   Root, parse(text)          a validated position (errors name what is wrong)
//   range(root)                the values the position can have, [lo, hi]: a threshold <= lo is
//                              met without search, one > hi never is
//   root(r, threshold)         the goal's root state (OR to move)
//   error                      a database read that failed during the search
template <class A>
concept SolverAdapter = detail::SolverGame<A> &&
    std::constructible_from<A, const probe::Prober&, int, const Options&> &&
    requires(A& a, const typename A::Root& r, std::string_view text, int t) {
  { A::parse(text) } -> std::same_as<Result<typename A::Root>>;
  { A::range(r) } -> std::same_as<std::pair<int, int>>;
  { a.root(r, t) } -> std::same_as<typename A::State>;
  { a.error } -> std::convertible_to<const std::optional<Error>&>;
};

template <SolverAdapter A>
class EngineSolver final : public Solver {
 public:
  EngineSolver(const probe::Prober& db, const Options& opt, int leaf_max)
      : Solver(leaf_max), db_(db), opt_(opt) {}

  Outcome prove(std::string_view position, int threshold, Stats* stats) override {
    error_.reset();
    auto root = A::parse(position);
    if (!root) {
      error_ = std::move(root).error();
      return Outcome::unknown;
    }
    return prove_root(*root, threshold, stats);
  }

  Result<Solution> solve(std::string_view position) override {
    auto root = A::parse(position);
    if (!root) return std::move(root).error();
    const auto [lo, hi] = A::range(*root);
    return detail::binary_search(
        lo, hi, [&](int t, Stats* st) { return prove_root(*root, t, st); }, error_);
  }

 private:
  Outcome prove_root(const typename A::Root& root, int threshold, Stats* stats) {
    Stats local;
    Stats& st = stats ? *stats : local;
    error_.reset();
    const auto t0 = std::chrono::steady_clock::now();
    ++st.searches;
    const auto [lo, hi] = A::range(root);
    Outcome out;
    if (threshold <= lo) {
      out = Outcome::proven;  // every value is at least lo
    } else if (threshold > hi) {
      out = Outcome::disproven;
    } else {
      A g(db_, leaf_max_, opt_);
      detail::Engine<A> engine(g, opt_, st);
      out = engine.run(g.root(root, threshold));
      if (g.error) {
        error_ = g.error;
        out = Outcome::unknown;
      }
    }
    st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }

  const probe::Prober& db_;
  Options opt_;
};

}  // namespace retra::solve
