// The chess game's own kernel for pawnless tables (src/games/chess/sweep.hpp, the Syzygy-style
// sweep retra builds them with) run alone on one table, timed, and checked against retra's files:
// its sub-tables built in memory by the same kernel, or read from retra's segments as a build
// reads them; every legal position compared with retra's tables through the probe API; or its
// values converted to retra's segment order and encoding (as a build hands them to the writer)
// and compared entry by entry. bench/chess_sweep.sh times it beside `retra build`, and
// tests/chess_sweep_test.sh checks it against tables built by retra's generic kernel.
// Thread safety: one build at a time.
//
// Usage: chess_sweep MATERIAL [--threads N] [--subtables DB] [--check DB] [--stride K]
//                    [--compare DB] [--rebase-at K] [--metric dtz|dtm]
//   --subtables DB  the sub-tables are read from retra's segments in DB (as the product would
//                   find them), not built in memory
//   --check DB      every legal position (every K-th index with --stride K) against retra's
//                   tables through the probe API: WDL class and DTZ
//   --compare DB    the values converted to retra's DTZ segment order and encoding, timed (what
//                   writing them would take first), and compared entry by entry with the
//                   segment retra built
//   --rebase-at K   codes rebased each time distances pass K plies beyond the last rebase
//                   (default 124; for tests)
//   --metric dtm    distance to mate (default dtz): the sub-tables are read from retra's DTM
//                   segments (--subtables DB, required), --compare reads the table's DTM
//                   segment, and --check is refused (it probes DTZ)
// Exit 1 on any difference.
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "retra/probe.hpp"
#include "src/database.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/index.hpp"
#include "src/games/chess/sweep.hpp"
#include "src/games/chess/values.hpp"
#include "src/memory.hpp"

namespace {

using namespace retra::chess;
using namespace retra::chess::sweep;
using Clock = std::chrono::steady_clock;

void fail(const std::string& what) {
  std::fprintf(stderr, "chess_sweep: %s\n", what.c_str());
  std::exit(1);
}

int g_threads = 1;
int g_rebase_at = kMaxWin;
bool g_dtm = false;  // --metric dtm
// The segment of table `name` (canonical) that this run builds or reads: DTZ, or DTM.
std::string segment_name(const std::string& name) { return g_dtm ? name + ".dtm" : name; }

// retra's DTZ segment (with --metric dtm, DTM segment) of table `name` in db, of `size`
// placements per side, and its entries decoded in index order.
const retra::format::SegmentReader& table_segment(const retra::Database& db,
                                                  const std::string& name, std::uint64_t size) {
  auto seg = db.segment(segment_name(name));
  if (!seg) fail(seg.error().message());
  if ((*seg)->info().entries != 2 * size || (*seg)->info().entry_bytes != 1)
    fail(segment_name(name) + ": the segment in " + db.dir().string() +
         " is not a segment of this table");
  return **seg;
}
retra::LargeArray<std::uint8_t> decoded(const retra::format::SegmentReader& seg) {
  auto values = retra::LargeArray<std::uint8_t>::allocate(seg.info().entries);
  if (!values) fail("out of memory");
  if (auto st = seg.read_all(values->span(), g_threads); !st) fail(st.error().message());
  return std::move(*values);
}

// Fills a sub-table from retra's DTZ segment of the same material in DB, as a build does from
// its finished segments: retra keeps each material once, the stronger side white, so a material
// named the other way round (KBvKR) reads the colours exchanged and the board turned over.
void load_from(Table& t, const retra::Database& db) {
  auto material = parse_material(t.name);
  if (!material) fail(material.error().message());
  const bool flip = !(material->canonicalized() == *material);
  const std::string name = material->canonicalized().name();
  const Indexer ix(*parse_table_key(name));
  const std::uint64_t size = ix.size();
  const auto values = decoded(table_segment(db, name, size));
  t.dtm = g_dtm;
  const auto loaded =
      load(t, ix, flip, [&](Color s, std::uint64_t r) { return values[s * size + r]; });
  if (!loaded) fail(t.name + ": " + loaded.error().message());
}

// ---- materials ------------------------------------------------------------------------------
std::map<std::string, std::unique_ptr<Table>> g_tables;
std::map<std::string, double> g_seconds;
const retra::Database* g_db = nullptr;  // --subtables: where sub-tables are read, not built

Table* build(const std::vector<std::pair<PieceType, Color>>& ps, bool top) {
  auto made = std::make_unique<Table>(make_table(ps, g_threads));
  const std::string name = made->name;
  if (auto it = g_tables.find(name); it != g_tables.end()) return it->second.get();
  Table* t = g_tables.emplace(name, std::move(made)).first->second.get();
  if (top) t->dtm = g_dtm;
  const auto start = Clock::now();
  if (!top && g_db && t->m > 0) {  // retra stores no KvK
    load_from(*t, *g_db);
    g_seconds[name] = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("sub-table %-8s %13llu slots per side, read from %s in %.2f s\n", name.c_str(),
                static_cast<unsigned long long>(t->size), g_db->dir().string().c_str(),
                g_seconds[name]);
    return t;
  }
  for (int j = 0; j < t->m; ++j)
    t->sub[static_cast<std::size_t>(j)] = build(pieces_without(*t, j), false);
  // A sub-table built here keeps codes rebased past 124 plies, which solve() cannot read as
  // distances beyond the horizon (read from retra's files, they are).
  for (int j = 0; j < t->m; ++j)
    if (t->sub[static_cast<std::size_t>(j)]->longest > kHorizon)
      fail(name +
           ": a capture may lead beyond the 50-move horizon into a sub-table built here; "
           "read the sub-tables from retra's files instead (--subtables DB)");
  SolveOptions o;
  o.rebase_at = g_rebase_at;
  o.note = [top](const std::string& line) {
    if (top || line.find("rebased") != std::string::npos) std::printf("  %s\n", line.c_str());
  };
  auto solved = solve(*t, o);
  if (!solved) fail(name + ": " + solved.error().message());
  if (!*solved)
    fail(name + ": a distance beyond this kernel's " + std::to_string(kMaxPlies) + " plies");
  if (g_dtm && !top) draws_as_dtm(*t);  // the bare kings, the one sub-table built here
  g_seconds[name] = std::chrono::duration<double>(Clock::now() - start).count();
  if (!top)
    std::printf("sub-table %-8s %13llu slots per side, %6.2f s\n", name.c_str(),
                static_cast<unsigned long long>(t->size), g_seconds[name]);
  return t;
}

std::optional<std::vector<std::pair<PieceType, Color>>> parse(const std::string& s) {
  const std::size_t v = s.find('v');
  if (v == std::string::npos || v == 0 || s[0] != 'K' || v + 1 >= s.size() || s[v + 1] != 'K')
    return std::nullopt;
  std::vector<std::pair<PieceType, Color>> ps;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (i == v || i == v + 1) continue;
    const auto t = piece_type_of(s[i]);
    if (!t || *t == king || *t == pawn || s[i] != piece_letter(*t, white)) return std::nullopt;
    ps.emplace_back(*t, i < v ? white : black);
  }
  if (ps.size() > 3) return std::nullopt;
  return ps;
}

// Every legal position (every stride-th index) against retra's WDL and DTZ: the WDL class (win
// and loss within 100 plies of the next zeroing move, cursed win and blessed loss beyond) and
// the DTZ must be equal.
int check(const Table& t, const retra::probe::Prober& prober, const std::string& db,
          std::uint64_t stride) {
  std::uint64_t positions = 0, wrong_value = 0, wrong_dtz = 0, cursed = 0;
  for (std::uint64_t idx = 0; idx < t.size; idx += stride) {
    const Pos p = decode(t, idx);
    for (int s = 0; s < 2; ++s) {
      const std::uint8_t x = t.v[s][idx];
      if (x == kIllegal) continue;
      retra::probe::ChessBoard b;
      b.white = p.side[white];
      b.black = p.side[black];
      b.kings = bit(p.wk) | bit(p.bk);
      for (int i = 0; i < t.m; ++i) {
        const auto u = static_cast<std::size_t>(i);
        std::uint64_t* member[] = {&b.kings, &b.queens, &b.rooks, &b.bishops, &b.knights};
        *member[t.type[u]] |= bit(p.sq[u]);
      }
      b.white_to_move = s == white;
      const retra::probe::ChessValue r = prober.chess(b);
      if (!r) fail("probe: " + r.message);
      ++positions;
      const int sign = is_win(x) - is_loss(x);
      const int dtz = sign == 0 ? 0 : sign * t.plies_to_go(static_cast<Color>(s), idx);
      const int mine = std::abs(dtz) > kHorizon ? sign : 2 * sign;
      if (mine != r.wdl) {
        if (++wrong_value <= 5)
          std::printf("value differs at index %llu, %s to move: retra wdl %d dtz %d, sweep %d\n",
                      static_cast<unsigned long long>(idx), s == white ? "white" : "black", r.wdl,
                      r.dtz, static_cast<int>(x));
        continue;
      }
      cursed += r.wdl == 1 || r.wdl == -1;
      if (r.dtz != dtz && ++wrong_dtz <= 5)
        std::printf("DTZ differs at index %llu, %s to move: retra %d, sweep %d\n",
                    static_cast<unsigned long long>(idx), s == white ? "white" : "black", r.dtz,
                    dtz);
    }
  }
  std::printf(
      "check against %s: %llu positions, %llu WDL classes differ, %llu DTZ differ, %llu cursed "
      "wins or blessed losses\n",
      db.c_str(), static_cast<unsigned long long>(positions),
      static_cast<unsigned long long>(wrong_value), static_cast<unsigned long long>(wrong_dtz),
      static_cast<unsigned long long>(cursed));
  return wrong_value == 0 && wrong_dtz == 0 && positions > 0 ? 0 : 1;
}

// What a build hands the writer, and a check of every position at once: the values in retra's
// DTZ (or DTM) segment's index order and encoding (to_segment), timed, then compared byte by byte
// with the segment retra built (by class where the segment keeps a side as classes), and the far
// values as lists. The kernel's own arrays are freed once converted, as a build frees them before
// writing.
int compare(Table& t, const std::string& db) {
  auto key = parse_table_key(t.name);
  if (!key || key->name() != t.name)
    fail(t.name + ": --compare takes a table in its canonical orientation (" +
         (key ? key->name() : key.error().message()) + ")");
  const Indexer ix(*key);
  auto opened = retra::Database::open(db);
  if (!opened) fail(opened.error().message());
  const std::uint64_t size = ix.size();
  const retra::format::SegmentReader& seg = table_segment(**opened, t.name, size);
  auto mine = retra::LargeArray<std::uint8_t>::allocate(2 * size);
  if (!mine) fail("out of memory");
  const auto start = Clock::now();
  const auto far = to_segment(t, ix, mine->span());
  const double convert = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& v : t.v) v = {};
  const auto read_start = Clock::now();
  const auto theirs = decoded(seg);
  const double read = std::chrono::duration<double>(Clock::now() - read_start).count();
  // A side kept as classes holds every entry's class, also where the far values hold the exact
  // value.
  std::uint64_t differ = 0, classes = 0;
  const auto half = seg.class_half();
  for (std::uint64_t i = 0; i < 2 * size; ++i) {
    std::uint8_t a = (*mine)[i];
    if (half != retra::format::ClassHalf::none &&
        (i < size) == (half == retra::format::ClassHalf::lower)) {
      a = static_cast<std::uint8_t>(retra::chess::dtz_class_byte(a));
      ++classes;
    }
    if (a != theirs[i] && ++differ <= 5)
      std::printf("entry %llu differs: retra %d (far %d), sweep %d\n",
                  static_cast<unsigned long long>(i), theirs[i],
                  static_cast<int>(seg.far_value(i).value_or(0)), a);
  }
  // The far values: the same entries, the same exact values.
  if (far != seg.far()) {
    ++differ;
    std::printf("far values differ: retra lists %zu, sweep %zu\n", seg.far().size(), far.size());
  }
  std::printf(
      "compare with %s: %llu entries in retra's order (converted in %.2f s; retra's segment "
      "read in %.2f s), %llu compared by class only, %zu far values, %llu differ\n",
      db.c_str(), static_cast<unsigned long long>(2 * size), convert, read,
      static_cast<unsigned long long>(classes), far.size(),
      static_cast<unsigned long long>(differ));
  return differ == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: chess_sweep MATERIAL [--threads N] [--subtables DB] [--check DB] [--stride K]\n"
        "                   [--compare DB] [--rebase-at K] [--metric dtz|dtm]\n"
        "  MATERIAL: a pawnless table of 3-5 pieces, e.g. KQRvKR\n");
    return 2;
  }
  std::string db, compare_db, sub_db;
  std::uint64_t stride = 1;
  g_threads = omp_get_max_threads();
  if (argc % 2 != 0) {
    std::fprintf(stderr, "chess_sweep: every option takes a value\n");
    return 2;
  }
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (a == "--threads" && value >= 1 && value <= 1024) {
      g_threads = static_cast<int>(value);
    } else if (a == "--check") {
      db = argv[i + 1];
    } else if (a == "--compare") {
      compare_db = argv[i + 1];
    } else if (a == "--subtables") {
      sub_db = argv[i + 1];
    } else if (a == "--rebase-at" && value >= 2 && value <= kMaxWin) {
      g_rebase_at = static_cast<int>(value);
    } else if (a == "--metric" &&
               (argv[i + 1] == std::string("dtz") || argv[i + 1] == std::string("dtm"))) {
      g_dtm = argv[i + 1] == std::string("dtm");
    } else if (a == "--stride" && value >= 1) {
      stride = static_cast<std::uint64_t>(value);
    } else {
      std::fprintf(stderr, "chess_sweep: bad option %s %s\n", a.c_str(), argv[i + 1]);
      return 2;
    }
  }
  const auto ps = parse(argv[1]);
  if (!ps) {
    std::fprintf(stderr, "chess_sweep: '%s' is not a pawnless material of 3-5 pieces (KQRvKR)\n",
                 argv[1]);
    return 2;
  }
  if (kKp.pairs.size() != 462) fail("king pairs: " + std::to_string(kKp.pairs.size()));
  if (g_dtm && sub_db.empty())
    fail("--metric dtm reads the sub-tables from retra's DTM segments: give --subtables DB");
  if (g_dtm && !db.empty()) fail("--check probes DTZ; with --metric dtm, use --compare DB");
  std::unique_ptr<retra::probe::Prober> prober;  // opened first: a bad path fails at once
  if (!db.empty()) {
    retra::probe::Options opt;
    opt.cache_bytes = std::size_t{1} << 30;  // a 5-piece table's blocks stay decompressed
    retra::probe::Value err;
    prober = retra::probe::Prober::open(db, opt, &err);
    if (!prober) fail(err.message);
  }
  std::unique_ptr<retra::Database> subtables;
  if (!sub_db.empty()) {
    auto opened = retra::Database::open(sub_db);
    if (!opened) fail(opened.error().message());
    subtables = std::move(*opened);
    g_db = subtables.get();
  }
  Table& t = *build(*ps, true);
  std::uint64_t legal = 0, wins = 0, losses = 0;
  for (int s = 0; s < 2; ++s)
    for (std::uint8_t x : t.v[s].span()) {
      legal += x != kIllegal;
      wins += is_win(x);
      losses += is_loss(x);
    }
  std::printf(
      "%s: %d threads, %llu slots, %llu legal (%llu wins, %llu losses), longest %d "
      "plies, %d plies swept, %.2f s\n",
      t.name.c_str(), g_threads, static_cast<unsigned long long>(2 * t.size),
      static_cast<unsigned long long>(legal), static_cast<unsigned long long>(wins),
      static_cast<unsigned long long>(losses), t.longest, t.plies, g_seconds[t.name]);
  int rc = prober ? check(t, *prober, db, stride) : 0;
  if (!compare_db.empty()) rc |= compare(t, compare_db);
  return rc;
}
