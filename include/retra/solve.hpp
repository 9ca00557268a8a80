// Proof-number solvers over one tree / transposition-table core with pluggable leaf
// initialization: PN (Allis, mobility), PN-Naive (1/1), PN-Eval, PN² (Breuker), EF-PN and IEF-PN
// (Winands & Schadd), EF-PN², MC-PNS (Saito et al.) and df-pn with the 1+ε trick (Pawlewicz &
// Lew). Positions inside the built databases are exact leaves (read through retra::probe).
// A search proves or disproves a binary goal; multi-valued roots are solved by binary search over
// thresholds, as Allis did. Each game plugs in through an adapter in its module; this interface
// names none. docs/SOLVER.md describes every rule and the experiments.
// Thread safety: a Solver runs one search at a time; distinct Solvers may run concurrently on
// one Prober (probing is thread-safe).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "retra/error.hpp"
#include "retra/probe.hpp"

namespace retra::solve {

enum class Algorithm { pn, pn_naive, pn_eval, pn2, ef_pn, ief_pn, ef_pn2, mc_pns, dfpn };
inline constexpr Algorithm kAlgorithms[] = {
    Algorithm::pn,     Algorithm::pn_naive, Algorithm::pn_eval, Algorithm::pn2, Algorithm::ef_pn,
    Algorithm::ief_pn, Algorithm::ef_pn2,   Algorithm::mc_pns,  Algorithm::dfpn};
std::string_view name(Algorithm a);
Result<Algorithm> parse_algorithm(std::string_view s);

struct Options {
  Algorithm algorithm = Algorithm::pn;
  std::uint64_t max_nodes = 2'000'000;  // nodes stored at once (tree nodes, or TT entries)
  std::uint64_t max_work = 50'000'000;  // node expansions per threshold search, then give up
  // Bytes the tree (or df-pn's table) may hold, 0 for no limit beyond max_nodes: the node limit
  // becomes min(max_nodes, max_memory / bytes per node) (Stats::node_bytes says the size).
  std::uint64_t max_memory = 0;
  // EF-PN / PN-Eval (Winands & Schadd eq. 2-6): a, b and the step threshold t (eval units).
  double a = 20, b = 5;
  int t = 100;
  // MC-PNS: N random sequences of length la per new leaf.
  int mc_n = 4, mc_la = 25;
  std::uint64_t seed = 1;
  // df-pn: the 1+ε trick (a child's threshold is the second-best number times 1 + ε).
  double epsilon = 0.25;
};

struct Stats {
  std::uint64_t expanded = 0;      // nodes expanded (df-pn: internal nodes visited)
  std::uint64_t generated = 0;     // nodes created
  std::uint64_t largest = 0;       // most nodes stored at once (tree or TT)
  std::uint64_t searches = 0;      // threshold searches (binary search steps)
  std::uint64_t leaves_exact = 0;  // leaves valued from the databases or the rules
  std::uint64_t repetitions = 0;   // of those, states repeating one on their path (endless play)
  std::uint64_t node_bytes = 0;    // bytes per stored node (tree node or table entry)
  double seconds = 0;
};

// The outcome of one goal: proven, disproven, or unknown (a limit was hit).
enum class Outcome { proven, disproven, unknown };

// The value of a root found by binary search over thresholds, or the bounds proven before a
// limit was hit (value in [lower, upper]).
struct Solution {
  bool solved = false;
  int value = 0;  // the exact value, when solved
  int lower = 0, upper = 0;
  Stats stats;
};

// A solver over one database: positions inside the database's segments (up to a leaf limit) are
// exact leaves, every other position is searched. The game comes from the database; the solver
// takes positions in the game's text notation (what `retra probe` takes).
class Solver {
 public:
  // A solver for the game of `db`. leaf_max: database values only for positions of at most this
  // size (stones, pieces; docs/SOLVER.md), nullopt for everything the database covers. Errors: a
  // game without a solver, a leaf limit outside the game's range.
  static Result<std::unique_ptr<Solver>> open(const probe::Prober& db, const Options& opt,
                                              std::optional<int> leaf_max = std::nullopt);
  virtual ~Solver() = default;

  // Whether the side to move reaches a value >= threshold (values in the game's terms, as
  // `retra solve` documents them), or unknown when a limit was hit, a database read failed or the
  // position is malformed (last_error() says which of the last two).
  virtual Outcome prove(std::string_view position, int threshold, Stats* stats) = 0;
  // The exact value by binary search over thresholds; a malformed position is an error.
  virtual Result<Solution> solve(std::string_view position) = 0;
  // Why the last prove() answered unknown other than by a limit.
  const std::optional<Error>& last_error() const { return error_; }
  // The leaf limit in use (the given one, or what the database covers).
  int leaf_max() const { return leaf_max_; }

 protected:
  explicit Solver(int leaf_max) : leaf_max_(leaf_max) {}
  std::optional<Error> error_;
  int leaf_max_;
};

}  // namespace retra::solve
