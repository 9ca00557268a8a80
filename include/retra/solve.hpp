// Proof-number solvers over one tree / transposition-table core with pluggable leaf
// initialization: PN (Allis, mobility), PN-Naive (1/1), PN-Eval, PN² (Breuker), EF-PN and IEF-PN
// (Winands & Schadd), EF-PN², MC-PNS (Saito et al.) and df-pn with the 1+ε trick (Pawlewicz &
// Lew). Positions inside the built databases are exact leaves (read through retra::probe).
// A search proves or disproves a binary goal; multi-valued Awari roots are solved by binary
// search over thresholds, as Allis did; xiangqi roots (win / draw / loss) the same way over two.
// docs/SOLVER.md describes every rule and the experiments.
// Thread safety: a Solver runs one search at a time; distinct Solvers may run concurrently on
// one Prober (probing is thread-safe).
#pragma once

#include <array>
#include <cstdint>
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

// Awari: value = the side to move's final difference.
using AwariResult = Solution;

class AwariSolver {
 public:
  // db: an Awari database holding every stone count 0..db_max; positions with at most db_max
  // stones are exact leaves read from it, positions with more are searched.
  AwariSolver(const probe::Prober& db, int db_max, Options opt);

  // Whether the side to move can end with a final difference >= threshold (unknown when a limit
  // was hit or a database read failed).
  Outcome prove(const std::array<int, 12>& pits, int threshold, Stats* stats);
  // The exact value by binary search over thresholds.
  Result<AwariResult> solve(const std::array<int, 12>& pits);
  // Why the last prove() answered unknown other than by a limit (a damaged database block).
  const std::optional<Error>& last_error() const { return error_; }

  struct Impl;

 private:
  const probe::Prober& db_;
  int db_max_;
  Options opt_;
  std::optional<Error> error_;  // of the last prove(): a database read failed (corrupt block)
};

// Xiangqi: value = +1 the side to move wins, 0 draws, -1 loses.
struct XiangqiResult : Solution {
  std::string fen;  // the position, normalized
};

class XiangqiSolver {
 public:
  // The board encoding of probe::Prober::xiangqi_board (0 empty, else 1 + type + 8 * colour).
  using Board = std::array<std::uint8_t, 90>;

  // db: a xiangqi database; a position with at most max_pieces pieces (kings included) whose
  // endgame the database holds is an exact leaf, every other position is searched.
  XiangqiSolver(const probe::Prober& db, int max_pieces, Options opt);

  // Whether the side to move reaches result >= threshold (1: it wins; 0: it does not lose), or
  // unknown when a limit was hit, a database read failed or the board is impossible (then
  // solve() on it reports the error); side_to_move 0 = Red, 1 = Black.
  Outcome prove(const Board& board, int side_to_move, int threshold, Stats* stats);
  // Win, draw or loss by binary search over the two thresholds; a malformed FEN is an error.
  Result<XiangqiResult> solve(std::string_view fen);
  // Why the last prove() answered unknown other than by a limit (an impossible board, a damaged
  // database block).
  const std::optional<Error>& last_error() const { return error_; }

 private:
  const probe::Prober& db_;
  int max_pieces_;
  Options opt_;
  std::optional<Error> error_;
};

}  // namespace retra::solve
