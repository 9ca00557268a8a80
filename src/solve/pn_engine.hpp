// The game-generic core of the proof-number solvers (include/retra/solve.hpp): best-first PN
// trees (PN, PN-Naive, PN-Eval, PN², EF-PN, IEF-PN, EF-PN², MC-PNS) and df-pn over one game
// adapter (the SolverGame concept below; each game's adapter lives in its module folder).
// Thread safety: one search per Engine; an Engine owns its tree and table.
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <random>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "retra/solve.hpp"

namespace retra::solve::detail {

inline constexpr std::uint64_t kInf = std::uint64_t{1} << 60;
// Sums saturate just below kInf: only a (dis)proof is infinite, so a huge but finite number never
// reads as solved (df-pn would otherwise stop at an "infinite" threshold with nothing proven).
inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  if (a >= kInf || b >= kInf) return kInf;
  return std::min(kInf - 1, a + b);
}

// A game plugs into the solvers through an adapter. Its State is one node of the AND/OR graph of
// one goal: a position, whether the root's side (OR) moves, and what the goal still asks.
//   exact(s)       the goal's outcome when the rules or the databases decide it, else unknown
//   children(s, v) v := the states after each legal move (none only if exact(s) decided s)
//   eval(s)        heuristic from OR's view, in the units of Options::t (EF-PN, PN-Eval)
//   repetition(s)  the goal's outcome when s repeats a state on the current path (endless play)
//   key(s)         a hash of position, turn and goal (df-pn's table)
//   era(s)         never increases along a path, equal for equal states (captures lower it), so a
//                  repetition scan stops at the first ancestor of another era
//   same(a, b)     equal position, turn and goal
//   failed()       a database read failed: the search stops and reports it
// Optional: random_child(s, rng, out) sets out to a uniformly random child of s and returns
// false when s has none; MC-PNS's random sequences use it instead of generating every child.
template <class G>
concept SolverGame = requires(G& g, const typename G::State& s,
                              std::vector<typename G::State>& kids) {
  { g.exact(s) } -> std::same_as<Outcome>;
  { g.children(s, kids) } -> std::same_as<void>;
  { g.eval(s) } -> std::convertible_to<int>;
  { g.repetition(s) } -> std::same_as<Outcome>;
  { G::key(s) } -> std::same_as<std::uint64_t>;
  { G::era(s) } -> std::convertible_to<int>;
  { G::same(s, s) } -> std::same_as<bool>;
  { g.failed() } -> std::same_as<bool>;
  { s.or_turn } -> std::convertible_to<bool>;
};

// Allis's binary search over the thresholds in [lo, hi]: the value is the largest threshold that
// prove(T) proves. Stops with the bounds so far when a search answers unknown (a limit), and with
// the error when `error` (which prove sets) holds one after a search (a damaged database block).
template <class Prove>
Result<Solution> binary_search(int lo, int hi, Prove&& prove, const std::optional<Error>& error) {
  Solution r;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    const Outcome o = prove(mid, &r.stats);
    if (error) return *error;
    if (o == Outcome::unknown) {
      r.lower = lo;
      r.upper = hi;
      return r;
    }
    if (o == Outcome::proven)
      lo = mid;
    else
      hi = mid - 1;
  }
  r.solved = true;
  r.value = r.lower = r.upper = lo;
  return r;
}

template <SolverGame G>
class Engine {
 public:
  using State = typename G::State;

  Engine(G& g, const Options& o, Stats& s) : g_(g), opt_(o), st_(s), rng_(o.seed) {
    // A tree node, or a table entry with its key and a hash-node's overhead (two pointers).
    const std::uint64_t bytes = o.algorithm == Algorithm::dfpn
                                    ? sizeof(Entry) + sizeof(std::uint64_t) + 2 * sizeof(void*)
                                    : sizeof(Node);
    st_.node_bytes = bytes;
    max_nodes_ = o.max_memory ? std::min(o.max_nodes, o.max_memory / bytes) : o.max_nodes;
    max_nodes_ = std::max<std::uint64_t>(max_nodes_, 2);
  }

  // Searches one goal from `root` with the algorithm of the options.
  Outcome run(const State& root) {
    if (Outcome o = exact_counted(root); o != Outcome::unknown) return o;
    if (opt_.algorithm == Algorithm::dfpn) {
      std::vector<State> path;
      const auto [pn, dn, dep] = mid(root, G::key(root), kInf, kInf, path);
      (void)dep;
      return pn == 0 ? Outcome::proven : dn == 0 ? Outcome::disproven : Outcome::unknown;
    }
    const bool two = opt_.algorithm == Algorithm::pn2 || opt_.algorithm == Algorithm::ef_pn2;
    Tree t = pn_search(root, {}, opt_.algorithm, max_nodes_, two);
    const Node& r = t.nodes[0];
    return r.pn == 0 ? Outcome::proven : r.dn == 0 ? Outcome::disproven : Outcome::unknown;
  }

 private:
  G& g_;
  const Options& opt_;
  Stats& st_;
  std::mt19937_64 rng_;
  std::uint64_t work_ = 0;
  std::uint64_t max_nodes_ = 0;           // max_nodes, lowered by max_memory
  std::vector<State> init_buf_, mc_buf_;  // scratch of init() and mc_proofs() (never nested)

  Outcome exact_counted(const State& s) {
    const Outcome o = g_.exact(s);
    if (o != Outcome::unknown) ++st_.leaves_exact;
    return o;
  }
  int step(int e) const { return e >= opt_.t ? 1 : e <= -opt_.t ? -1 : 0; }

  // MC-PNS: of N random sequences of at most la moves, how many reach a proof.
  int mc_proofs(const State& s) {
    int proofs = 0;
    for (int k = 0; k < opt_.mc_n; ++k) {
      State x = s;
      for (int d = 0; d < opt_.mc_la; ++d) {
        if constexpr (requires { g_.random_child(x, rng_, x); }) {
          if (!g_.random_child(x, rng_, x)) break;  // the adapter's cheaper uniform choice
        } else {
          g_.children(x, mc_buf_);
          if (mc_buf_.empty()) break;
          x = mc_buf_[rng_() % mc_buf_.size()];
        }
        const Outcome o = g_.exact(x);
        if (o == Outcome::proven) ++proofs;
        if (o != Outcome::unknown) break;
      }
    }
    return proofs;
  }

  // Proof and disproof numbers of a new unsolved leaf under the chosen initialization; e_parent
  // is the evaluation of the node being expanded (EF-PN evaluates once per expansion).
  std::pair<std::uint64_t, std::uint64_t> init(Algorithm alg, const State& s, int e_parent) {
    auto r = [](double x) { return static_cast<std::uint64_t>(std::llround(std::max(1.0, x))); };
    switch (alg) {
      case Algorithm::pn_naive:
      case Algorithm::dfpn:
        return {1, 1};
      case Algorithm::pn_eval: {
        const int sp = step(g_.eval(s));
        return {r(1 + opt_.a * (1 - sp)), r(1 + opt_.a * (1 + sp))};
      }
      case Algorithm::ef_pn:
      case Algorithm::ief_pn:
      case Algorithm::ef_pn2: {
        const int e = alg == Algorithm::ief_pn ? g_.eval(s) : e_parent;
        g_.children(s, init_buf_);
        const double n = static_cast<double>(init_buf_.size()), sp = step(e);
        if (s.or_turn) return {r(1 + opt_.a * (1 - sp)), r(n + n * opt_.b * (1 + sp))};
        return {r(n + n * opt_.b * (1 - sp)), r(1 + opt_.a * (1 + sp))};
      }
      case Algorithm::mc_pns: {
        const int plus = mc_proofs(s);
        return {static_cast<std::uint64_t>(opt_.mc_n - plus + 1),
                static_cast<std::uint64_t>(plus + 1)};
      }
      default: {  // PN, PN²: mobility (Allis)
        g_.children(s, init_buf_);
        const std::uint64_t n = init_buf_.size();
        return s.or_turn ? std::pair{std::uint64_t{1}, n} : std::pair{n, std::uint64_t{1}};
      }
    }
  }

  // ---- best-first PN tree ----------------------------------------------------------------------
  struct Node {
    State s;
    std::uint64_t pn = 1, dn = 1;
    std::int32_t parent = -1, first = -1;
    std::uint16_t kids = 0;
  };
  // The children of a node are one contiguous block. When a node other than the root is solved,
  // its subtree is deleted (Breuker): the blocks go to a free list by size and are reused.
  struct Tree {
    std::vector<Node> nodes;
    std::unordered_map<std::uint16_t, std::vector<std::int32_t>> free;
    std::uint64_t freed = 0;
    std::uint64_t live() const { return nodes.size() - freed; }
    Node& operator[](std::int32_t i) { return nodes[static_cast<std::size_t>(i)]; }

    std::int32_t allocate(std::uint16_t n) {
      if (auto it = free.find(n); it != free.end() && !it->second.empty()) {
        const std::int32_t f = it->second.back();
        it->second.pop_back();
        freed -= n;
        return f;
      }
      const auto f = static_cast<std::int32_t>(nodes.size());
      nodes.resize(nodes.size() + n);
      return f;
    }
    void release_below(std::int32_t x) {
      Node& v = (*this)[x];
      if (v.first < 0) return;
      for (std::int32_t c = v.first; c < v.first + v.kids; ++c) release_below(c);
      free[v.kids].push_back(v.first);
      freed += v.kids;
      v.first = -1;
      v.kids = 0;
    }
  };

  // Whether `s` repeats a state on the path above `parent` or in `outer` (the states above the
  // tree's root, outermost first).
  static bool repeats(Tree& t, std::int32_t parent, const State& s,
                      const std::vector<State>& outer) {
    const int era = G::era(s);
    for (std::int32_t a = parent; a >= 0; a = t[a].parent) {
      const State& x = t[a].s;
      if (G::era(x) != era) return false;
      if (G::same(x, s)) return true;
    }
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) {
      if (G::era(*it) != era) return false;
      if (G::same(*it, s)) return true;
    }
    return false;
  }

  static void set_leaf(Node& c, Outcome o) {
    c.pn = o == Outcome::proven ? 0 : kInf;
    c.dn = o == Outcome::proven ? kInf : 0;
  }

  // A PN search from `root` (with `outer`: the states above it, for repetitions) until it is
  // solved, `limit` nodes are stored or the work budget is spent. two_level: PN² first level (a
  // selected node's children are valued by a second-level search of y nodes, delayed evaluation).
  Tree pn_search(const State& root, const std::vector<State>& outer, Algorithm alg,
                 std::uint64_t limit, bool two_level) {
    Tree t;
    t.nodes.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(limit, 1u << 20)) + 8);
    t.nodes.push_back({root});
    ++st_.generated;
    if (Outcome o = exact_counted(root); o != Outcome::unknown) {
      set_leaf(t[0], o);
      return t;
    }
    std::vector<State> kids;
    // The first expansion always happens (a second-level search of y >= 2 nodes expands its root).
    while (t[0].pn != 0 && t[0].dn != 0 && (t.live() < limit || t[0].first < 0) && !g_.failed()) {
      if (work_ >= opt_.max_work) break;
      // Select the most-proving node.
      std::int32_t m = 0;
      while (t[m].first >= 0) {
        const Node& x = t[m];
        std::int32_t best = x.first;
        for (std::int32_t c = x.first; c < x.first + x.kids; ++c) {
          const Node& y = t[c];
          const Node& b = t[best];
          if (x.s.or_turn ? y.pn < b.pn : y.dn < b.dn) best = c;
        }
        m = best;
      }
      // Expand it.
      ++work_;
      ++st_.expanded;
      const State ms = t[m].s;
      g_.children(ms, kids);
      assert(!kids.empty() && "SolverGame contract: a state exact() leaves unknown has moves");
      const auto n = static_cast<std::uint16_t>(kids.size());
      const std::int32_t first = t.allocate(n);
      t[m].first = first;
      t[m].kids = n;
      const int e_parent = (alg == Algorithm::ef_pn || alg == Algorithm::ef_pn2) ? g_.eval(ms) : 0;
      for (std::uint16_t k = 0; k < n; ++k) {
        Node c;
        c.s = kids[k];
        c.parent = m;
        ++st_.generated;
        Outcome o = exact_counted(c.s);
        if (o == Outcome::unknown && repeats(t, m, c.s, outer)) {
          o = g_.repetition(c.s);
          ++st_.leaves_exact;
          ++st_.repetitions;
        }
        if (o != Outcome::unknown)
          set_leaf(c, o);
        else
          std::tie(c.pn, c.dn) = init(two_level ? Algorithm::pn : alg, c.s, e_parent);
        t[first + k] = c;
      }
      if (two_level && n > 0) second_level(t, m, outer, alg);
      // Update the ancestors; a solved node below the root loses its subtree.
      for (std::int32_t a = m; a >= 0; a = t[a].parent) {
        Node& x = t[a];
        if (x.kids == 0) break;  // no moves: an exact leaf, its numbers stay
        std::uint64_t pn, dn;
        if (x.s.or_turn) {
          pn = kInf;
          dn = 0;
          for (std::int32_t c = x.first; c < x.first + x.kids; ++c) {
            pn = std::min(pn, t[c].pn);
            dn = sat_add(dn, t[c].dn);
          }
        } else {
          pn = 0;
          dn = kInf;
          for (std::int32_t c = x.first; c < x.first + x.kids; ++c) {
            pn = sat_add(pn, t[c].pn);
            dn = std::min(dn, t[c].dn);
          }
        }
        if (pn == x.pn && dn == x.dn && a != m) break;  // nothing changes further up
        x.pn = pn;
        x.dn = dn;
        if ((pn == 0 || dn == 0) && a != 0) t.release_below(a);
      }
      st_.largest = std::max<std::uint64_t>(st_.largest, t.live());
    }
    return t;
  }

  // PN²: node m (just expanded) gets a second-level PN search of y = min(x, M - x) nodes
  // (Breuker; x = the first-level tree's size); its children keep the numbers found there and the
  // deeper second-level tree is dropped. The children are searched only when selected themselves
  // (delayed evaluation).
  void second_level(Tree& t, std::int32_t m, const std::vector<State>& outer, Algorithm alg) {
    std::vector<State> above = outer;
    std::vector<State> up;
    for (std::int32_t a = t[m].parent; a >= 0; a = t[a].parent) up.push_back(t[a].s);
    above.insert(above.end(), up.rbegin(), up.rend());
    const std::uint64_t x = t.live();
    const std::uint64_t y =
        std::max<std::uint64_t>(2, std::min(x, max_nodes_ - std::min(max_nodes_, x)));
    const Algorithm inner = alg == Algorithm::ef_pn2 ? Algorithm::ef_pn : Algorithm::pn;
    Tree sub = pn_search(t[m].s, above, inner, y, false);
    st_.largest = std::max<std::uint64_t>(st_.largest, t.live() + sub.live());
    const Node& r = sub[0];
    if (r.first < 0 || r.kids != t[m].kids) return;
    for (std::uint16_t k = 0; k < r.kids; ++k) {
      Node& c = t[t[m].first + k];
      const Node& sc = sub[r.first + k];
      if (c.pn != 0 && c.dn != 0) {
        c.pn = sc.pn;
        c.dn = sc.dn;
      }
    }
  }

  // ---- df-pn -----------------------------------------------------------------------------------
  struct Entry {
    std::uint64_t pn, dn, work;
  };
  std::unordered_map<std::uint64_t, Entry> tt_;

  void gc() {
    // Drop the cheapest unsolved entries first (their subtrees are quick to redo), then the
    // cheapest solved ones, until a quarter of the table is free.
    const std::size_t target = static_cast<std::size_t>(max_nodes_) * 3 / 4;
    for (int pass = 0; pass < 2 && tt_.size() > target; ++pass)
      for (std::uint64_t w = 1; tt_.size() > target && w < kInf; w *= 2)
        std::erase_if(tt_, [&](const auto& kv) {
          const bool solved = kv.second.pn == 0 || kv.second.dn == 0;
          return (pass == 1 || !solved) && kv.second.work <= w;
        });
  }

  struct Kid {
    State s;
    std::uint64_t key, pn, dn;
    bool solved_local = false, dep = false;
  };

  // df-pn's multiple iterative deepening at one node. Returns the node's (pn, dn) and whether a
  // (dis)proof rests on a repetition of the path (such results are never stored in the table).
  std::tuple<std::uint64_t, std::uint64_t, bool> mid(const State& s, std::uint64_t key,
                                                     std::uint64_t thpn, std::uint64_t thdn,
                                                     std::vector<State>& path) {
    ++st_.expanded;
    const std::uint64_t work0 = work_++;
    std::vector<State> buf;
    g_.children(s, buf);
    std::vector<Kid> kids(buf.size());
    path.push_back(s);
    for (std::size_t k = 0; k < buf.size(); ++k) {
      Kid& c = kids[k];
      c.s = buf[k];
      c.key = G::key(c.s);
      ++st_.generated;
      Outcome o = exact_counted(c.s);
      if (o == Outcome::unknown) {
        const int era = G::era(c.s);
        for (auto it = path.rbegin(); it != path.rend() && G::era(*it) == era; ++it)
          if (G::same(*it, c.s)) {
            o = g_.repetition(c.s);
            c.dep = true;  // true only on this path
            ++st_.leaves_exact;
            ++st_.repetitions;
            break;
          }
      }
      if (o != Outcome::unknown) {
        c.pn = o == Outcome::proven ? 0 : kInf;
        c.dn = o == Outcome::proven ? kInf : 0;
        c.solved_local = true;
      } else {
        c.pn = c.dn = 1;
      }
    }
    std::uint64_t pn = 0, dn = 0;
    bool dep = false;
    while (!g_.failed()) {
      // Fresh numbers of the unsolved children from the table.
      for (Kid& c : kids)
        if (!c.solved_local)
          if (auto it = tt_.find(c.key); it != tt_.end()) {
            c.pn = it->second.pn;
            c.dn = it->second.dn;
          }
      std::size_t best = 0;
      std::uint64_t second = kInf;
      // OR minimizes proof numbers and sums disproof numbers; AND the other way round.
      auto prim = [&](const Kid& c) { return s.or_turn ? c.pn : c.dn; };
      auto sum = [&](const Kid& c) { return s.or_turn ? c.dn : c.pn; };
      std::uint64_t mn = kInf, total = 0;
      for (std::size_t k = 0; k < kids.size(); ++k) {
        total = sat_add(total, sum(kids[k]));
        if (prim(kids[k]) < prim(kids[best])) best = k;
      }
      if (!kids.empty()) mn = prim(kids[best]);
      for (std::size_t k = 0; k < kids.size(); ++k)
        if (k != best) second = std::min(second, prim(kids[k]));
      pn = s.or_turn ? mn : total;
      dn = s.or_turn ? total : mn;
      dep = mn == 0 ? kids[best].dep
                    : std::any_of(kids.begin(), kids.end(), [](const Kid& c) { return c.dep; });
      if (pn >= thpn || dn >= thdn || pn == 0 || dn == 0 || work_ >= opt_.max_work) break;
      Kid& c = kids[best];
      auto grow = [&](std::uint64_t v) {
        if (v >= kInf) return kInf;
        return static_cast<std::uint64_t>(std::ceil(static_cast<double>(v) * (1 + opt_.epsilon)));
      };
      std::uint64_t cpn, cdn;
      if (s.or_turn) {
        cpn = std::min(thpn, std::max(grow(second), c.pn + 1));
        cdn = thdn >= kInf ? kInf : sat_add(thdn - std::min(thdn, dn), c.dn);
      } else {
        cdn = std::min(thdn, std::max(grow(second), c.dn + 1));
        cpn = thpn >= kInf ? kInf : sat_add(thpn - std::min(thpn, pn), c.pn);
      }
      auto [rp, rd, rdep] = mid(c.s, c.key, cpn, cdn, path);
      c.pn = rp;
      c.dn = rd;
      if (rp == 0 || rd == 0) {
        c.solved_local = true;
        c.dep = rdep;
      }
    }
    path.pop_back();
    const bool solved = pn == 0 || dn == 0;
    if (!(solved && dep)) {  // never cache a result that holds only on this path
      tt_[key] = {pn, dn, work_ - work0};
      if (tt_.size() > max_nodes_) gc();
    }
    st_.largest = std::max<std::uint64_t>(st_.largest, tt_.size());
    return {pn, dn, solved && dep};
  }
};

}  // namespace retra::solve::detail
