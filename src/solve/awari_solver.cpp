// Proof-number solvers for Awari positions beyond the built databases (include/retra/solve.hpp).
// One goal per search: "the side to move at the root (OR) ends with a final difference >= T".
// A node carries its board (seen from its mover), whose turn it is and `need`, the difference OR
// still needs from here on (captures along the path move it). Exact leaves: positions inside the
// databases, positions without moves (rules 3 and 4), goals out of reach (|need| > stones), and a
// position repeating one on the current path: endless play adds 0 (spec rule 5), and because
// cycles capture nothing, ending the game at the first repetition gives the same value as the
// infinite game (Ehrenfeucht–Mycielski). The PN-family trees merge no transpositions, so they
// have no graph-history interaction; df-pn's table never stores a result that rests on a
// repetition (docs/SOLVER.md). Thread safety: one search per Impl.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "retra/games/awari/board.hpp"
#include "retra/solve.hpp"

namespace retra::solve {

std::string_view name(Algorithm a) {
  switch (a) {
    case Algorithm::pn:
      return "pn";
    case Algorithm::pn_naive:
      return "pn-naive";
    case Algorithm::pn_eval:
      return "pn-eval";
    case Algorithm::pn2:
      return "pn2";
    case Algorithm::ef_pn:
      return "ef-pn";
    case Algorithm::ief_pn:
      return "ief-pn";
    case Algorithm::ef_pn2:
      return "ef-pn2";
    case Algorithm::mc_pns:
      return "mc-pns";
    case Algorithm::dfpn:
      return "df-pn";
  }
  return "?";
}

Result<Algorithm> parse_algorithm(std::string_view s) {
  for (Algorithm a : kAlgorithms)
    if (name(a) == s) return a;
  return Error(Errc::invalid_argument,
               fmt::format("unknown algorithm '{}'; known: pn, pn-naive, pn-eval, pn2, ef-pn, "
                           "ief-pn, ef-pn2, mc-pns, df-pn",
                           s));
}

namespace {

using awari::Board;
constexpr std::uint64_t kInf = std::uint64_t{1} << 60;
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) { return std::min(kInf, a + b); }

struct State {
  Board b;       // seen from its mover
  int need = 0;  // OR's required final difference from here on
  bool or_turn = true;
};

std::uint64_t key_of(const State& s) {
  std::uint64_t lo, hi;
  std::memcpy(&lo, s.b.pit.data(), 8);
  std::memcpy(&hi, s.b.pit.data() + 8, 8);
  std::uint64_t h =
      lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= (static_cast<std::uint64_t>(s.need + 128) << 1 | s.or_turn) * 0x165667B19E3779F9ull;
  return h ^ (h >> 29);
}

}  // namespace

struct AwariSolver::Impl {
  const probe::Prober& db;
  int db_max;
  const Options& opt;
  Stats& st;
  std::optional<Error> error;
  std::mt19937_64 rng;
  std::uint64_t work = 0;

  Impl(const probe::Prober& d, int m, const Options& o, Stats& s)
      : db(d), db_max(m), opt(o), st(s), rng(o.seed) {}

  static std::array<int, 12> pits_of(const Board& b) {
    std::array<int, 12> p;
    for (int i = 0; i < 12; ++i) p[i] = b.pit[i];
    return p;
  }

  // Exact outcome of a state without search, if the rules or the databases give one.
  Outcome exact(const State& s) {
    const int n = s.b.stones();
    if (s.need <= -n) return Outcome::proven;  // OR cannot end below -n
    if (s.need > n) return Outcome::disproven;
    int v;
    if (n <= db_max) {
      const probe::Value pv = db.awari(pits_of(s.b));
      if (!pv) {
        if (!error) error = Error(Errc::corrupt, pv.message);
        return Outcome::disproven;  // the search stops at the error
      }
      v = pv.value;
    } else {
      bool any = false;
      for (int i = 0; i < awari::kSidePits && !any; ++i) any = awari::make_move(s.b, i).legal();
      if (any) return Outcome::unknown;
      v = awari::no_move_value(s.b);
    }
    ++st.leaves_exact;
    return (s.or_turn ? v : -v) >= s.need ? Outcome::proven : Outcome::disproven;
  }

  // Children of a state (legal moves in pit order).
  static int children(const State& s, State* out) {
    int k = 0;
    awari::for_each_legal_move(s.b, [&](int, const awari::MoveResult& m) {
      State c;
      c.b = m.child;
      c.or_turn = !s.or_turn;
      c.need = s.or_turn ? s.need - m.captured : s.need + m.captured;
      out[k++] = c;
    });
    return k;
  }

  // The evaluation for EF-PN and PN-Eval, from OR's view: the store difference relative to the
  // goal (100 per stone) first, then mobility (legal moves of OR minus those of AND, 10 each).
  static int eval(const State& s) {
    State kids[6];
    const int mine = children(s, kids);
    State flipped = s;
    flipped.b = awari::detail::store(awari::detail::flip(awari::detail::load(s.b)));
    const int theirs = children(flipped, kids);
    const int mob = s.or_turn ? mine - theirs : theirs - mine;
    return -100 * s.need + 10 * mob;
  }
  int step(int e) const { return e >= opt.t ? 1 : e <= -opt.t ? -1 : 0; }

  // MC-PNS: of N random sequences of at most la moves, how many reach a proof.
  int mc_proofs(const State& s) {
    int proofs = 0;
    State kids[6];
    for (int k = 0; k < opt.mc_n; ++k) {
      State x = s;
      for (int d = 0; d < opt.mc_la; ++d) {
        const int n = children(x, kids);
        if (n == 0) break;
        x = kids[rng() % static_cast<unsigned>(n)];
        const Outcome o = exact(x);
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
    State kids[6];
    switch (alg) {
      case Algorithm::pn_naive:
      case Algorithm::dfpn:
        return {1, 1};
      case Algorithm::pn_eval: {
        const int st_ = step(eval(s));
        return {r(1 + opt.a * (1 - st_)), r(1 + opt.a * (1 + st_))};
      }
      case Algorithm::ef_pn:
      case Algorithm::ief_pn:
      case Algorithm::ef_pn2: {
        const int e = alg == Algorithm::ief_pn ? eval(s) : e_parent;
        const double n = children(s, kids), sp = step(e);
        if (s.or_turn) return {r(1 + opt.a * (1 - sp)), r(n + n * opt.b * (1 + sp))};
        return {r(n + n * opt.b * (1 - sp)), r(1 + opt.a * (1 + sp))};
      }
      case Algorithm::mc_pns: {
        const int plus = mc_proofs(s);
        return {static_cast<std::uint64_t>(opt.mc_n - plus + 1),
                static_cast<std::uint64_t>(plus + 1)};
      }
      default: {  // PN, PN²: mobility
        const std::uint64_t n = static_cast<std::uint64_t>(children(s, kids));
        return s.or_turn ? std::pair{std::uint64_t{1}, n} : std::pair{n, std::uint64_t{1}};
      }
    }
  }

  // ---- best-first PN tree ----------------------------------------------------------------------
  struct Node {
    State s;
    std::uint64_t pn = 1, dn = 1;
    std::int32_t parent = -1, first = -1;
    std::uint8_t kids = 0;
  };

  // Whether `s` repeats a state on the path above `parent` (same stone count, board and turn).
  static bool repeats(const std::vector<Node>& t, std::int32_t parent, const State& s,
                      const std::vector<State>& outer) {
    const int n = s.b.stones();
    for (std::int32_t a = parent; a >= 0; a = t[static_cast<std::size_t>(a)].parent) {
      const State& x = t[static_cast<std::size_t>(a)].s;
      if (x.b.stones() != n) return false;
      if (x.or_turn == s.or_turn && x.b == s.b) return true;
    }
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) {
      if (it->b.stones() != n) return false;
      if (it->or_turn == s.or_turn && it->b == s.b) return true;
    }
    return false;
  }

  void set_leaf(Node& c, Outcome o) {
    c.pn = o == Outcome::proven ? 0 : kInf;
    c.dn = o == Outcome::proven ? kInf : 0;
  }

  // A PN search from `root` (with `outer`: the states above it, for repetitions) until it is
  // solved, `limit` nodes are stored or the work budget is spent. Returns the tree.
  // second: the algorithm that values new leaves; pn2_inner: PN² first level (children valued by
  // a second-level search, delayed evaluation).
  std::vector<Node> pn_search(const State& root, const std::vector<State>& outer, Algorithm alg,
                              std::uint64_t limit, bool two_level) {
    std::vector<Node> t;
    t.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(limit, 1u << 20)) + 8);
    t.push_back({root});
    ++st.generated;
    if (Outcome o = exact(root); o != Outcome::unknown) {
      set_leaf(t[0], o);
      return t;
    }
    State kids[6];
    // The first expansion always happens (a second-level search of y >= 2 nodes expands its root).
    while (t[0].pn != 0 && t[0].dn != 0 && (t.size() < limit || t[0].first < 0) && !error) {
      if (work >= opt.max_work) break;
      // Select the most-proving node.
      std::int32_t m = 0;
      while (t[static_cast<std::size_t>(m)].first >= 0) {
        const Node& x = t[static_cast<std::size_t>(m)];
        std::int32_t best = x.first;
        for (std::int32_t c = x.first; c < x.first + x.kids; ++c) {
          const Node& y = t[static_cast<std::size_t>(c)];
          const Node& b = t[static_cast<std::size_t>(best)];
          if (x.s.or_turn ? y.pn < b.pn : y.dn < b.dn) best = c;
        }
        m = best;
      }
      // Expand it.
      ++work;
      ++st.expanded;
      const State ms = t[static_cast<std::size_t>(m)].s;
      const int n = children(ms, kids);
      const std::int32_t first = static_cast<std::int32_t>(t.size());
      t[static_cast<std::size_t>(m)].first = first;
      t[static_cast<std::size_t>(m)].kids = static_cast<std::uint8_t>(n);
      const int e_parent = (alg == Algorithm::ef_pn || alg == Algorithm::ef_pn2) ? eval(ms) : 0;
      for (int k = 0; k < n; ++k) {
        Node c;
        c.s = kids[k];
        c.parent = m;
        ++st.generated;
        Outcome o = exact(c.s);
        if (o == Outcome::unknown && repeats(t, m, c.s, outer)) {
          o = c.s.need <= 0 ? Outcome::proven : Outcome::disproven;  // endless play adds 0
          ++st.leaves_exact;
        }
        if (o != Outcome::unknown)
          set_leaf(c, o);
        else
          std::tie(c.pn, c.dn) = init(two_level ? Algorithm::pn : alg, c.s, e_parent);
        t.push_back(c);
      }
      if (two_level && n > 0) {
        // PN²: the selected node gets a second-level PN search of y = min(x, M - x) nodes
        // (Breuker); its children keep the numbers found there and the deeper tree is dropped.
        // The children themselves are searched only when selected (delayed evaluation).
        std::vector<State> above = outer;
        std::vector<State> up;
        for (std::int32_t a = t[static_cast<std::size_t>(m)].parent; a >= 0;
             a = t[static_cast<std::size_t>(a)].parent)
          up.push_back(t[static_cast<std::size_t>(a)].s);
        above.insert(above.end(), up.rbegin(), up.rend());
        const std::uint64_t x = t.size();
        const std::uint64_t y =
            std::max<std::uint64_t>(2, std::min(x, opt.max_nodes - std::min(opt.max_nodes, x)));
        const Algorithm inner = alg == Algorithm::ef_pn2 ? Algorithm::ef_pn : Algorithm::pn;
        const auto sub = pn_search(ms, above, inner, y, false);
        st.largest = std::max<std::uint64_t>(st.largest, t.size() + sub.size());
        if (sub[0].first >= 0 && sub[0].kids == n)
          for (int k = 0; k < n; ++k) {
            Node& c = t[static_cast<std::size_t>(first + k)];
            const Node& sc = sub[static_cast<std::size_t>(sub[0].first + k)];
            if (c.pn != 0 && c.dn != 0) {
              c.pn = sc.pn;
              c.dn = sc.dn;
            }
          }
      }
      // Update the ancestors.
      for (std::int32_t a = m; a >= 0; a = t[static_cast<std::size_t>(a)].parent) {
        Node& x = t[static_cast<std::size_t>(a)];
        std::uint64_t pn, dn;
        if (x.kids == 0) {
          // No moves can only be an exact leaf; keep its numbers.
          break;
        }
        if (x.s.or_turn) {
          pn = kInf;
          dn = 0;
          for (std::int32_t c = x.first; c < x.first + x.kids; ++c) {
            pn = std::min(pn, t[static_cast<std::size_t>(c)].pn);
            dn = sat_add(dn, t[static_cast<std::size_t>(c)].dn);
          }
        } else {
          pn = 0;
          dn = kInf;
          for (std::int32_t c = x.first; c < x.first + x.kids; ++c) {
            pn = sat_add(pn, t[static_cast<std::size_t>(c)].pn);
            dn = std::min(dn, t[static_cast<std::size_t>(c)].dn);
          }
        }
        if (pn == x.pn && dn == x.dn && a != m) break;  // nothing changes further up
        x.pn = pn;
        x.dn = dn;
      }
      st.largest = std::max<std::uint64_t>(st.largest, t.size());
    }
    return t;
  }

  // ---- df-pn -----------------------------------------------------------------------------------
  struct Entry {
    std::uint64_t pn, dn, work;
  };
  std::unordered_map<std::uint64_t, Entry> tt;

  void gc() {
    // Drop the cheapest unsolved entries first (their subtrees are quick to redo), then the
    // cheapest solved ones, until a quarter of the table is free.
    const std::size_t target = static_cast<std::size_t>(opt.max_nodes) * 3 / 4;
    for (int pass = 0; pass < 2 && tt.size() > target; ++pass)
      for (std::uint64_t w = 1; tt.size() > target && w < kInf; w *= 2)
        std::erase_if(tt, [&](const auto& kv) {
          const bool solved = kv.second.pn == 0 || kv.second.dn == 0;
          return (pass == 1 || !solved) && kv.second.work <= w;
        });
  }

  struct Kid {
    State s;
    std::uint64_t key, pn, dn;
    bool solved_local = false, dep = false;
  };

  // Returns the node's (pn, dn) and whether a (dis)proof rests on a repetition of the path.
  std::tuple<std::uint64_t, std::uint64_t, bool> mid(const State& s, std::uint64_t key,
                                                     std::uint64_t thpn, std::uint64_t thdn,
                                                     std::vector<State>& path) {
    ++st.expanded;
    const std::uint64_t work0 = work++;
    State buf[6];
    const int n = children(s, buf);
    std::vector<Kid> kids(static_cast<std::size_t>(n));
    path.push_back(s);
    for (int k = 0; k < n; ++k) {
      Kid& c = kids[static_cast<std::size_t>(k)];
      c.s = buf[k];
      c.key = key_of(c.s);
      ++st.generated;
      Outcome o = exact(c.s);
      if (o == Outcome::unknown) {
        const int stones = c.s.b.stones();
        for (auto it = path.rbegin(); it != path.rend() && it->b.stones() == stones; ++it)
          if (it->or_turn == c.s.or_turn && it->b == c.s.b) {
            o = c.s.need <= 0 ? Outcome::proven : Outcome::disproven;
            c.dep = true;  // true only on this path
            ++st.leaves_exact;
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
    while (!error) {
      // Fresh numbers of the unsolved children from the table.
      for (Kid& c : kids)
        if (!c.solved_local)
          if (auto it = tt.find(c.key); it != tt.end()) {
            c.pn = it->second.pn;
            c.dn = it->second.dn;
          }
      std::size_t best = 0;
      std::uint64_t second = kInf;
      if (s.or_turn) {
        pn = kInf;
        dn = 0;
        for (std::size_t k = 0; k < kids.size(); ++k) {
          dn = sat_add(dn, kids[k].dn);
          if (kids[k].pn < kids[best].pn) best = k;
        }
        pn = kids.empty() ? kInf : kids[best].pn;
        for (std::size_t k = 0; k < kids.size(); ++k)
          if (k != best) second = std::min(second, kids[k].pn);
        dep = pn == 0 ? kids[best].dep
                      : std::any_of(kids.begin(), kids.end(), [](const Kid& c) { return c.dep; });
      } else {
        pn = 0;
        dn = kInf;
        for (std::size_t k = 0; k < kids.size(); ++k) {
          pn = sat_add(pn, kids[k].pn);
          if (kids[k].dn < kids[best].dn) best = k;
        }
        dn = kids.empty() ? kInf : kids[best].dn;
        for (std::size_t k = 0; k < kids.size(); ++k)
          if (k != best) second = std::min(second, kids[k].dn);
        dep = dn == 0 ? kids[best].dep
                      : std::any_of(kids.begin(), kids.end(), [](const Kid& c) { return c.dep; });
      }
      if (pn >= thpn || dn >= thdn || pn == 0 || dn == 0 || work >= opt.max_work) break;
      Kid& c = kids[best];
      auto grow = [&](std::uint64_t v) {
        if (v >= kInf) return kInf;
        return static_cast<std::uint64_t>(std::ceil(static_cast<double>(v) * (1 + opt.epsilon)));
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
      if ((rp == 0 || rd == 0) && rdep) {
        c.solved_local = true;
        c.dep = true;
      } else if (rp == 0 || rd == 0) {
        c.solved_local = true;
      }
    }
    path.pop_back();
    const bool solved = pn == 0 || dn == 0;
    if (!(solved && dep)) {  // never cache a result that holds only on this path
      tt[key] = {pn, dn, work - work0};
      if (tt.size() > opt.max_nodes) gc();
    }
    st.largest = std::max<std::uint64_t>(st.largest, tt.size());
    return {pn, dn, solved && dep};
  }
};

AwariSolver::AwariSolver(const probe::Prober& db, int db_max, Options opt)
    : db_(db), db_max_(db_max), opt_(opt) {}

Outcome AwariSolver::prove(const std::array<int, 12>& pits, int threshold, Stats* stats) {
  Stats local;
  Stats& st = stats ? *stats : local;
  const auto t0 = std::chrono::steady_clock::now();
  Impl im(db_, db_max_, opt_, st);
  State root;
  for (int i = 0; i < 12; ++i) root.b.pit[i] = static_cast<std::uint8_t>(pits[i]);
  root.need = threshold;
  root.or_turn = true;
  ++st.searches;
  Outcome out = Outcome::unknown;
  if (Outcome o = im.exact(root); o != Outcome::unknown) {
    out = o;
  } else if (opt_.algorithm == Algorithm::dfpn) {
    std::vector<State> path;
    const auto [pn, dn, dep] = im.mid(root, key_of(root), kInf, kInf, path);
    (void)dep;
    out = pn == 0 ? Outcome::proven : dn == 0 ? Outcome::disproven : Outcome::unknown;
  } else {
    const bool two = opt_.algorithm == Algorithm::pn2 || opt_.algorithm == Algorithm::ef_pn2;
    const auto t = im.pn_search(root, {}, opt_.algorithm, opt_.max_nodes, two);
    out = t[0].pn == 0 ? Outcome::proven : t[0].dn == 0 ? Outcome::disproven : Outcome::unknown;
  }
  if (im.error) {
    error_ = im.error;
    out = Outcome::unknown;
  }
  st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Result<AwariResult> AwariSolver::solve(const std::array<int, 12>& pits) {
  int n = 0;
  for (int p : pits) {
    if (p < 0 || p > awari::kMaxStones)
      return Error(Errc::invalid_argument, fmt::format("a pit holds {} stones", p));
    n += p;
  }
  if (n > awari::kMaxStones)
    return Error(Errc::invalid_argument, fmt::format("{} stones; at most 48", n));
  AwariResult r;
  // The value lies in [-n, n]: find the largest T that the side to move can reach.
  int lo = -n, hi = n;  // proven: value >= lo; value <= hi
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    const Outcome o = prove(pits, mid, &r.stats);
    if (error_) return *error_;
    if (o == Outcome::unknown) {
      r.lower = lo;
      r.upper = hi;
      return r;  // a limit was hit: bounds only
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

}  // namespace retra::solve
