// The chess game module (module.hpp): table names and closures, per-side statistics, reports,
// probing by FEN (tables.hpp does the lookups), and the module table itself, where the generic
// drivers are compiled for chess. Thread safety: reentrant.
#include "src/games/chess/module.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/games/chess/tables.hpp"
#include "src/io/file.hpp"
#include "src/memory_plan.hpp"
#include "src/module/module_of.hpp"
#include "src/plot/plot.hpp"
#include "src/probe/prober_impl.hpp"
#include "src/solve/report.hpp"
#include "src/util/text.hpp"

namespace retra::chess {

std::string_view wdl_name(int wdl) {
  switch (wdl) {
    case win:
      return "win";
    case cursed_win:
      return "cursed-win";
    case blessed_loss:
      return "blessed-loss";
    case loss:
      return "loss";
    default:
      return "draw";
  }
}

probe::ChessBoard bitboards_of(const Board& b) {
  probe::ChessBoard c;
  for (int s = 0; s < 64; ++s) {
    const std::uint8_t pc = b.piece[s];
    if (!pc) continue;
    const Bitboard m = bit(s);
    (color_of(pc) == white ? c.white : c.black) |= m;
    switch (type_of(pc)) {
      case king:
        c.kings |= m;
        break;
      case queen:
        c.queens |= m;
        break;
      case rook:
        c.rooks |= m;
        break;
      case bishop:
        c.bishops |= m;
        break;
      case knight:
        c.knights |= m;
        break;
      default:
        c.pawns |= m;
    }
  }
  c.rule50 = static_cast<unsigned>(b.halfmove);
  c.ep = b.ep >= 0 ? static_cast<unsigned>(b.ep) : 0;
  c.white_to_move = b.side == white;
  return c;
}

// ---- tables ----------------------------------------------------------------------------------

namespace {

using probe::detail::failure;
using probe::detail::success;

// A segment's key in 64 bits: piece counts (4 bits per colour and type), then the pawns' ranks.
std::uint64_t key_code(const Material& m, const PawnProfile& p) {
  std::uint64_t k = 0;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t) k = k << 4 | m.count[c][t];
  for (int c = 0; c < 2; ++c)
    for (std::int8_t r : p.ranks[c]) k = k << 3 | static_cast<std::uint64_t>(r);
  return k;
}

std::string strip_dtm(const std::string& name, bool* dtm) {
  *dtm = name.size() > 4 && name.ends_with(".dtm");
  return *dtm ? name.substr(0, name.size() - 4) : name;
}

}  // namespace

Board flipped(const Board& b) {
  Board f = b;
  for (int s = 0; s < 64; ++s) {
    const std::uint8_t pc = b.piece[s];
    f.piece[s ^ 56] = pc ? code(type_of(pc), opposite(color_of(pc))) : 0;
  }
  f.side = opposite(b.side);
  f.ep = b.ep >= 0 ? b.ep ^ 56 : -1;
  return f;
}

Board normalized(Board b) {
  if (b.ep < 0) return b;
  bool any = false;
  for_each_legal_move(b, [&](const Move& m) { any = any || m.en_passant; });
  if (!any) b.ep = -1;
  return b;
}

Tables::Tables(std::span<const std::string> segments) {
  std::vector<std::pair<std::string, int>> dtm;
  std::set<std::string> materials;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    auto slot = std::make_unique<Slot>();
    bool is_dtm;
    const std::string base = strip_dtm(segments[i], &is_dtm);
    if (auto k = parse_table_key(base)) {
      slot->key = *k;
      if (is_dtm) {
        dtm.emplace_back(base, static_cast<int>(i));
      } else {
        by_key_.assign(key_code(k->material, k->profile), static_cast<int>(i));
        largest_ = std::max(largest_, k->material.pieces());
        if (materials.insert(k->material.name()).second) held_.push_back(k->material);
      }
    }
    slots_.push_back(std::move(slot));
  }
  for (const auto& [base, slot] : dtm) {
    auto k = parse_table_key(base);
    if (const int* dtz = by_key_.find(key_code(k->material, k->profile)))
      slots_[static_cast<std::size_t>(*dtz)]->dtm_slot = slot;
  }
}

const Indexer& Tables::indexer(int slot) const {
  Slot& s = *slots_[static_cast<std::size_t>(slot)];
  // Every probe asks: once built, one acquire load (std::call_once's own fast path is a library
  // call that writes thread-locals first).
  if (const Indexer* ix = s.ready.load(std::memory_order_acquire)) return *ix;
  std::call_once(s.once, [&] {
    s.indexer = std::make_unique<Indexer>(s.key);
    s.ready.store(s.indexer.get(), std::memory_order_release);
  });
  return *s.indexer;
}

Tables::PieceSets piece_sets(const Board& board) {
  // Occupied squares only: a loop over all 64 would or every empty square into one entry, a
  // chain of dependent stores that cost more than the rest of a probe's locate.
  Tables::PieceSets sets{};
  for (Bitboard o = board.occupied(); o; o &= o - 1) {
    const int s = std::countr_zero(o);
    sets[board.piece[s]] |= bit(s);
  }
  return sets;
}

probe::Value Tables::locate(const Board& board, Where* w) const {
  return locate(piece_sets(board), board.side, w);
}

// The hot path of every probe: bitboards only, no allocation unless the table is missing.
probe::Value Tables::locate(PieceSets sets, Color side, Where* w) const {
  Material m;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t)
      m.count[c][t] = static_cast<std::uint8_t>(std::popcount(sets[code(PieceType(t), Color(c))]));
  if (m.pieces() == 2) {
    w->kings_only = true;
    return success(0);
  }
  if (!m.canonical()) {  // the colours exchanged: ranks mirrored (a byte swap), sides swapped
    PieceSets f{};
    for (int t = 0; t < kTypes; ++t) {
      f[code(PieceType(t), white)] = __builtin_bswap64(sets[code(PieceType(t), black)]);
      f[code(PieceType(t), black)] = __builtin_bswap64(sets[code(PieceType(t), white)]);
    }
    sets = f;
    side = opposite(side);
    m = m.flipped();
  }
  // key_code(m, profile) without building the profile: pawns by ascending square are pawns by
  // ascending rank.
  std::uint64_t key = 0;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t) key = key << 4 | m.count[c][t];
  for (int c = 0; c < 2; ++c)
    for (Bitboard p = sets[code(pawn, Color(c))]; p; p &= p - 1)
      key = key << 3 | static_cast<std::uint64_t>(rank_of(std::countr_zero(p)));
  const int* const found = by_key_.find(key);
  if (!found) {
    if (m.pieces() > kMaxPieces)
      return failure(probe::Status::not_found,
                     fmt::format("{} has {} pieces; chess tables hold at most {}", m.name(),
                                 m.pieces(), kMaxPieces));
    PawnProfile p;
    for (int c = 0; c < 2; ++c)
      for (Bitboard b = sets[code(pawn, Color(c))]; b; b &= b - 1)
        p.ranks[c].push_back(static_cast<std::int8_t>(rank_of(std::countr_zero(b))));
    const std::string segment = TableKey{m, p}.name();
    return failure(
        probe::Status::not_found,
        fmt::format("table {}{} is not in the database; build it with `retra build "
                    "chess --endgame {}`",
                    m.name(), segment == m.name() ? "" : " (segment " + segment + ")", m.name()));
  }
  const Indexer& ix = indexer(*found);
  // The squares in the segment's slot order: each slot takes the lowest matching piece left.
  std::uint8_t sq[kMaxPieces];
  Bitboard used = 0;
  const auto& slots = ix.slots();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Bitboard cand = sets[code(slots[i].type, slots[i].color)] & ~used;
    if (slots[i].type == pawn) cand &= Bitboard{0xff} << (8 * slots[i].rank);
    sq[i] = static_cast<std::uint8_t>(std::countr_zero(cand));
    used |= cand & -cand;
  }
  w->dtz_slot = *found;
  w->dtm_slot = slots_[static_cast<std::size_t>(*found)]->dtm_slot;
  w->index = (side == black ? ix.size() : 0) + ix.rank(sq);
  return success(0);
}

probe::Coverage Tables::coverage() const {
  probe::Coverage c;
  c.units = "pieces";
  c.segments = slots_.size();
  c.largest = largest_;
  c.complete = 2;  // the bare kings need no table
  std::set<std::string> held;
  for (const Material& m : held_) held.insert(m.name());
  for (int n = 3; n <= largest_; ++n) {
    bool all = true;
    for (const Material& m : materials_with(n)) all = all && held.count(m.name());
    if (!all) break;
    c.complete = n;
  }
  return c;
}

// ---- the probe locator --------------------------------------------------------------------

namespace {

class Locator final : public probe::Locator {
 public:
  explicit Locator(std::span<const std::string> segments) : tables_(segments) {}
  probe::Value locate(std::string_view position, probe::Location* where) const override {
    auto b = parse_fen(position);
    if (!b) return failure(b.error());
    if (b->ep >= 0) {
      where->slot = probe::Location::kDerived;
      return success(0);
    }
    Tables::Where w;
    probe::Value v = tables_.locate(*b, &w);
    if (!v) return v;
    if (w.kings_only) {
      where->slot = probe::Location::kExact;
      where->value = draw;
      return v;
    }
    where->slot = w.dtz_slot;
    where->index = w.index;
    return v;
  }
  int decode(std::uint8_t stored) const override { return decode_dtz(stored).wdl; }
  probe::Coverage coverage() const override { return tables_.coverage(); }
  probe::Value derive(std::string_view position, const probe::Reader& read) const override {
    auto b = parse_fen(position);
    if (!b) return failure(b.error());
    const probe::ChessValue v = evaluate(tables_, *b, read, kWdlOnly);
    if (!v) return failure(v.status, v.message);
    return success(v.wdl);
  }
  const Tables& tables() const { return tables_; }

 private:
  Tables tables_;
};

}  // namespace

const Tables& tables_of(const probe::Locator& l) { return static_cast<const Locator&>(l).tables(); }

std::unique_ptr<probe::Locator> Module::locator(std::span<const std::string> segments) {
  return std::make_unique<Locator>(segments);
}

// ---- segments --------------------------------------------------------------------------------

namespace {

constexpr OptionSpec kTargetOptions[] = {
    {"--endgame", "Tables by name, e.g. KQvKR or KRPvKR (either side first)", true, false},
    {"--pieces", "Every table with A-B (or A) pieces, kings included: 3-5", false, false},
    {"--metrics", "wdl, dtz, dtm (comma separated; default all three; wdl and dtz are one table)",
     true, false},
};

Result<std::pair<int, int>> parse_pieces(const std::string& text) {
  auto bad = [&] {
    return Error(
        Errc::invalid_argument,
        fmt::format("--pieces '{}': expected A-B or A with 3 <= A <= B <= {}", text, kMaxPieces));
  };
  int a = 0, b = 0;
  const auto dash = text.find('-');
  auto num = [](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size();
  };
  if (dash == std::string::npos) {
    if (!num(text, a)) return bad();
    b = a;
  } else if (!num(std::string_view(text).substr(0, dash), a) ||
             !num(std::string_view(text).substr(dash + 1), b)) {
    return bad();
  }
  if (a < 3 || b > kMaxPieces || a > b) return bad();
  return std::pair{a, b};
}

}  // namespace

std::span<const OptionSpec> Module::target_options() { return kTargetOptions; }

Result<std::vector<std::string>> Module::targets(const OptionValues& values) {
  std::vector<Material> materials;
  if (auto it = values.find("--pieces"); it != values.end() && !it->second.empty()) {
    auto range = parse_pieces(it->second.front());
    if (!range) return std::move(range).error();
    for (int n = range->first; n <= range->second; ++n)
      for (const Material& m : materials_with(n)) materials.push_back(m);
  }
  if (auto it = values.find("--endgame"); it != values.end())
    for (const auto& e : it->second) {
      auto m = parse_material(e);
      if (!m) return std::move(m).error();
      if (m->pieces() <= 2)
        return Error(Errc::invalid_argument,
                     fmt::format("endgame {}: the bare kings are always a draw; there is no table",
                                 m->name()));
      materials.push_back(m->canonicalized());
    }
  if (materials.empty())
    return Error(Errc::invalid_argument,
                 "name the tables: --endgame KQvKR (repeatable, or comma separated) or --pieces "
                 "3-5");
  bool dtz = true, dtm = true;
  if (auto it = values.find("--metrics"); it != values.end() && !it->second.empty()) {
    dtz = dtm = false;
    for (const auto& x : it->second) {
      if (x == "wdl" || x == "dtz")
        dtz = true;
      else if (x == "dtm")
        dtm = true;
      else
        return Error(Errc::invalid_argument,
                     fmt::format("--metrics '{}': the metrics are wdl, dtz and dtm", x));
    }
  }
  std::vector<std::string> names;
  for (const Material& m : materials)
    for (const PawnProfile& p : profiles(m)) {
      const std::string name = TableKey{m, p}.name();
      if (dtz) names.push_back(name);
      if (dtm) names.push_back(name + ".dtm");
    }
  return names;
}

Result<Selection<Game>> Module::select(std::span<const std::string> names) {
  std::vector<Material> materials;
  std::set<std::string> seen;
  bool with_dtm = false;
  for (const auto& name : names) {
    bool dtm;
    auto k = parse_table_key(strip_dtm(name, &dtm));
    if (!k) return std::move(k).error();
    with_dtm = with_dtm || dtm;
    if (seen.insert(k->material.name()).second) materials.push_back(k->material);
  }
  auto g = Game::closure(materials, with_dtm);
  if (!g) return std::move(g).error();
  Selection<Game> sel;
  sel.game = *g;
  for (int s = 0; s < sel.game->segments(); ++s) sel.order.push_back(s);
  for (const auto& name : names) {
    const int s = sel.game->find(name);
    if (s >= 0) sel.named.push_back(s);
  }
  return sel;
}

bool Module::segment_less(const std::string& a, const std::string& b) {
  bool da, db;
  auto ka = parse_table_key(strip_dtm(a, &da)), kb = parse_table_key(strip_dtm(b, &db));
  const int pa = ka ? ka->material.pieces() : 0, pb = kb ? kb->material.pieces() : 0;
  if (pa != pb) return pa < pb;
  if (da != db) return !da;
  return a < b;
}

// ---- statistics ------------------------------------------------------------------------------

Module::Stats Module::statistics(const Game& g, int s, std::span<const std::uint8_t> values,
                                 std::span<const format::FarValue> far, int threads,
                                 std::span<const std::uint64_t> holes) {
  Stats st;
  st.dtm = g.is_dtm(s);
  const std::uint64_t half = g.table(s).indexer->size();
  st.index_size = half;
  // Per side: how often each byte occurs among legal positions and the smallest index holding
  // it; histogram, classes and longest lines are decoded from those 256 counts at the end (a
  // counter per position instead of a map insertion and a decode: this runs after every build).
  struct Acc {
    std::array<std::uint64_t, 256> count{}, first{};
    Acc() { first.fill(UINT64_MAX); }
  };
  for (int side = 0; side < 2; ++side) {
    const std::uint64_t chunk = 1u << 14, chunks = (half + chunk - 1) / chunk;
    Acc total;
    std::mutex mu;  // not `omp critical`: see kernels/backward.hpp
#pragma omp parallel num_threads(std::max(1, threads)) if (chunks > 1)
    {
      Acc a;
#pragma omp for schedule(dynamic, 1)
      for (std::uint64_t k = 0; k < chunks; ++k) {
        const std::uint64_t first = side * half + k * chunk;
        const std::uint64_t end = std::min(side * half + half, first + chunk);
        if (!holes.empty()) {
          // Holes hold 0 (a draw's byte): count every byte, then take the holes back from the
          // draws. The first index of byte 0 may then be a hole's; it is never used (a draw
          // is no longest line).
          for (std::uint64_t i = first; i < end; ++i) {
            const std::uint8_t b = values[i];
            ++a.count[b];
            a.first[b] = std::min(a.first[b], i);
          }
          for (std::uint64_t i = first; i < end;) {
            const std::uint64_t w = holes[i >> 6] >> (i & 63);
            const std::uint64_t n = std::min<std::uint64_t>(64 - (i & 63), end - i);
            a.count[0] -= static_cast<std::uint64_t>(
                std::popcount(n == 64 ? w : w & ((std::uint64_t{1} << n) - 1)));
            i += n;
          }
          continue;
        }
        Position p = g.unrank(s, first);
        for (std::uint64_t i = first; i < end; ++i) {
          if (i > first) g.next(s, p);
          if (!p.valid) continue;
          const std::uint8_t b = values[i];
          ++a.count[b];
          a.first[b] = std::min(a.first[b], i);
        }
      }
      std::lock_guard lock(mu);
      for (int b = 0; b < 256; ++b) {
        total.count[b] += a.count[b];
        total.first[b] = std::min(total.first[b], a.first[b]);
      }
    }
    Side& out = st.side[static_cast<std::size_t>(side)];
    // The longest (the smallest index among equals) of the wins and of the cursed wins.
    int longest = -1, longest_cursed = -1;
    std::uint64_t at = 0, at_cursed = 0;
    // The values beyond a byte one by one (their bytes, 253 or 254, counted them as 126 plies:
    // taken back), then each byte with its count and first index. That first index of 253 may be
    // a far win's; it counts only when no far win exists on this side, so it is then not.
    std::vector<std::array<std::uint64_t, 3>> items;  // value, count, first index
    const auto far_begin =
        std::lower_bound(far.begin(), far.end(), format::FarValue{side * half, 0});
    const auto far_end =
        std::lower_bound(far.begin(), far.end(), format::FarValue{side * half + half, 0});
    for (auto it = far_begin; it != far_end; ++it) {
      --total.count[values[it->first]];
      items.push_back({it->second, 1, it->first});
    }
    for (int b = 0; b < 256; ++b)
      items.push_back({static_cast<std::uint64_t>(b), total.count[static_cast<std::size_t>(b)],
                       total.first[static_cast<std::size_t>(b)]});
    for (const auto& [value, n, i] : items) {
      if (n == 0) continue;
      const int b = static_cast<int>(value);
      out.legal += n;
      int plies = 0;
      bool cursed = false;
      if (st.dtm) {
        const auto d = decode_dtm(b);
        out.histogram[d ? *d : 0] += n;  // draws and mated positions share 0; WDL tells them apart
        plies = d ? *d : 0;
      } else {
        const Dtz d = decode_dtz(b);
        out.wdl[static_cast<std::size_t>(d.wdl + 2)] += n;
        out.histogram[d.dtz] += n;
        plies = d.wdl > 0 ? d.dtz : 0;
        cursed = d.wdl != win;
      }
      int& best = cursed ? longest_cursed : longest;
      std::uint64_t& best_at = cursed ? at_cursed : at;
      if (plies > 0 && (plies > best || (plies == best && i < best_at))) {
        best = plies;
        best_at = i;
      }
    }
    auto example = [&](std::uint64_t i) { return to_fen(g.board(s, g.unrank(s, i))); };
    if (longest > 0) out.longest = Longest{longest, example(at)};
    if (longest_cursed > 0) out.longest_cursed = Longest{longest_cursed, example(at_cursed)};
  }
  return st;
}

namespace {
constexpr const char* kSideNames[2] = {"white", "black"};
constexpr const char* kWdlKeys[5] = {"loss", "blessed-loss", "draw", "cursed-win", "win"};
}  // namespace

nlohmann::json Module::stats_json(const Stats& s) {
  nlohmann::json j = {{"metric", s.dtm ? "dtm" : "dtz"}, {"index_size", s.index_size}};
  for (int side = 0; side < 2; ++side) {
    const Side& x = s.side[static_cast<std::size_t>(side)];
    nlohmann::json sj = {{"legal_positions", x.legal}};
    nlohmann::json hist = nlohmann::json::object();
    for (const auto& [v, n] : x.histogram) hist[std::to_string(v)] = n;
    auto longest = [](const std::optional<Longest>& l) {
      return l ? nlohmann::json{{"plies", l->plies}, {"fen", l->fen}} : nlohmann::json();
    };
    if (s.dtm) {
      sj["dtm"] = hist;
      sj["longest_dtm"] = longest(x.longest);
    } else {
      nlohmann::json wdl = nlohmann::json::object();
      for (int k = 0; k < 5; ++k) wdl[kWdlKeys[k]] = x.wdl[static_cast<std::size_t>(k)];
      sj["wdl"] = wdl;
      sj["dtz"] = hist;
      sj["longest_dtz"] = longest(x.longest);
      sj["longest_cursed_dtz"] = longest(x.longest_cursed);
    }
    j[kSideNames[side]] = sj;
  }
  return j;
}

Result<Module::Stats> Module::stats_from_json(const nlohmann::json& j) {
  auto bad = [](std::string what) {
    return Error(Errc::corrupt, fmt::format("statistic '{}' is missing or malformed", what));
  };
  if (!j.is_object() || !j.contains("metric") || !j["metric"].is_string()) return bad("metric");
  Stats s;
  s.dtm = j["metric"] == "dtm";
  s.index_size = j.value("index_size", std::uint64_t{0});
  for (int side = 0; side < 2; ++side) {
    if (!j.contains(kSideNames[side]) || !j[kSideNames[side]].is_object())
      return bad(kSideNames[side]);
    const auto& sj = j[kSideNames[side]];
    Side& x = s.side[static_cast<std::size_t>(side)];
    if (!sj.contains("legal_positions") || !sj["legal_positions"].is_number_unsigned())
      return bad("legal_positions");
    x.legal = sj["legal_positions"].get<std::uint64_t>();
    const char* hist_key = s.dtm ? "dtm" : "dtz";
    if (!sj.contains(hist_key) || !sj[hist_key].is_object()) return bad(hist_key);
    for (const auto& [v, n] : sj[hist_key].items()) {
      if (!n.is_number_unsigned()) return bad(hist_key);
      x.histogram[std::stoi(v)] = n.get<std::uint64_t>();
    }
    auto longest = [&](const char* key, std::optional<Longest>& out) -> Status {
      if (!sj.contains(key) || sj[key].is_null()) return {};
      if (!sj[key].is_object() || !sj[key].contains("plies")) return bad(key);
      out = Longest{sj[key]["plies"].get<int>(), sj[key].value("fen", "")};
      return {};
    };
    if (s.dtm) {
      RETRA_TRY(longest("longest_dtm", x.longest));
    } else {
      if (!sj.contains("wdl") || !sj["wdl"].is_object()) return bad("wdl");
      for (int k = 0; k < 5; ++k)
        x.wdl[static_cast<std::size_t>(k)] = sj["wdl"].value(kWdlKeys[k], std::uint64_t{0});
      RETRA_TRY(longest("longest_dtz", x.longest));
      RETRA_TRY(longest("longest_cursed_dtz", x.longest_cursed));
    }
  }
  return s;
}

std::optional<std::string> Module::stats_mismatch(const Stats& a, const Stats& b) {
  if (a.dtm != b.dtm) return "metric";
  for (int side = 0; side < 2; ++side) {
    const Side &x = a.side[static_cast<std::size_t>(side)],
               &y = b.side[static_cast<std::size_t>(side)];
    const std::string w = kSideNames[side];
    if (x.legal != y.legal) return w + ".legal_positions";
    if (x.wdl != y.wdl) return w + ".wdl";
    if (x.histogram != y.histogram) return w + (a.dtm ? ".dtm" : ".dtz");
    auto plies = [](const std::optional<Longest>& l) { return l ? l->plies : -1; };
    if (plies(x.longest) != plies(y.longest)) return w + (a.dtm ? ".longest_dtm" : ".longest_dtz");
    if (plies(x.longest_cursed) != plies(y.longest_cursed)) return w + ".longest_cursed_dtz";
  }
  return std::nullopt;
}

// ---- build report ----------------------------------------------------------------------------

std::string Module::report_header() {
  return fmt::format("{:<18} {:>12} {:>12} {:>30} {:>7} {:>8} {:>10} {:>10} {:>7}", "segment",
                     "index", "legal", "w/cw/d/bl/l (white to move)", "longest", "seconds", "RSS",
                     "on disk", "bits/pos");
}

namespace {
double bits_per_position(const SegmentReport& r) {
  return r.entries ? 8.0 * static_cast<double>(r.file_bytes) / static_cast<double>(r.entries) : 0.0;
}
}  // namespace

std::string Module::report_row(const SegmentReport& r) {
  const auto& w = r.stats.contains("white") ? r.stats["white"] : nlohmann::json::object();
  std::string classes = "-", longest = "-";
  if (w.contains("wdl")) {
    const auto& c = w["wdl"];
    classes =
        fmt::format("{}/{}/{}/{}/{}", c.value("win", 0ull), c.value("cursed-win", 0ull),
                    c.value("draw", 0ull), c.value("blessed-loss", 0ull), c.value("loss", 0ull));
  }
  const char* lk = w.contains("longest_dtm") ? "longest_dtm" : "longest_dtz";
  if (w.contains(lk) && !w[lk].is_null()) longest = std::to_string(w[lk]["plies"].get<int>());
  return fmt::format("{:<18} {:>12} {:>12} {:>30} {:>7} {:>8.2f} {:>10} {:>10} {:>7.3f}{}", r.name,
                     r.entries / 2, w.value("legal_positions", 0ull), classes, longest, r.seconds,
                     r.rss_bytes ? format_bytes(r.rss_bytes) : std::string("-"),
                     format_bytes(r.file_bytes), bits_per_position(r),
                     r.skipped ? " (already built)" : "");
}

nlohmann::json Module::report_json(const SegmentReport& r) {
  return {{"segment", r.name},
          {"index_size", r.entries / 2},
          {"positions", r.entries},
          {"skipped", r.skipped},
          {"kernel", r.kernel},
          {"levels", r.iterations},
          {"threads", r.threads},
          {"kernel_seconds", r.kernel_seconds},
          {"seconds", r.seconds},
          {"rss_bytes", r.rss_bytes},
          {"file_bytes", r.file_bytes},
          {"raw_bytes", r.raw_bytes},
          {"bits_per_position", bits_per_position(r)},
          {"stats", r.stats}};
}

void Module::report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                           std::string& line) {
  std::uint64_t positions = 0, bytes = 0;
  std::set<std::string> tables;
  for (const auto& r : reports) {
    positions += r.entries;
    bytes += r.file_bytes;
    bool dtm;
    if (auto k = parse_table_key(strip_dtm(r.name, &dtm))) tables.insert(k->material.name());
  }
  json["tables"] = tables.size();
  json["positions"] = positions;
  json["file_bytes"] = bytes;
  json["bits_per_position"] =
      positions ? 8.0 * static_cast<double>(bytes) / static_cast<double>(positions) : 0.0;
  line = fmt::format("{} tables in {} segments, {} positions, {} on disk", tables.size(),
                     reports.size(), grouped(positions), format_bytes(bytes));
}

// ---- probe report ----------------------------------------------------------------------------

namespace {

std::vector<std::string> manifest_names(const Database& db) {
  std::vector<std::string> names;
  for (const auto& rec : db.manifest().segments) names.push_back(rec.name);
  return names;
}

nlohmann::json value_json(const probe::ChessValue& v) {
  return {{"wdl", wdl_name(v.wdl)},
          {"dtz", v.dtz},
          {"dtm", v.has_dtm ? nlohmann::json(v.dtm) : nlohmann::json()},
          {"outcome", v.outcome > 0   ? "win"
                      : v.outcome < 0 ? "loss"
                                      : "draw"}};
}

std::string value_text(const probe::ChessValue& v) {
  return fmt::format("{} (dtz {}, dtm {}; with the 50-move counter: {})", wdl_name(v.wdl), v.dtz,
                     v.has_dtm ? std::to_string(v.dtm) : std::string("-"),
                     v.outcome > 0   ? "win"
                     : v.outcome < 0 ? "loss"
                                     : "draw");
}

}  // namespace

std::optional<std::array<std::uint8_t, 256>> Module::dont_care_rank(ValueKind kind) {
  if (kind != ValueKind::dtz) return std::nullopt;
  // Dense ranks of dtz_order: equal values (the unused byte 1 and a draw) rank equal.
  std::array<int, 256> order;
  for (int b = 0; b < 256; ++b) order[static_cast<std::size_t>(b)] = dtz_order(b);
  std::array<int, 256> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  const auto last = std::unique(sorted.begin(), sorted.end());
  std::array<std::uint8_t, 256> rank;
  for (std::size_t b = 0; b < 256; ++b)
    rank[b] = static_cast<std::uint8_t>(std::lower_bound(sorted.begin(), last, order[b]) -
                                        sorted.begin());
  return rank;
}

Result<Report> Module::probe_report(const Database& db, std::string_view position) {
  auto b = parse_fen(position);
  if (!b) return std::move(b).error();
  const auto names = manifest_names(db);
  const Tables tables(names);
  auto read = [&](int slot, std::uint64_t index) -> probe::Value {
    auto seg = db.segment(names[static_cast<std::size_t>(slot)]);
    if (!seg) return failure(seg.error());
    auto v = (*seg)->value_at(index);  // a distance beyond a byte from the far section
    if (!v) return failure(v.error());
    // probe::Reader's contract: a class-only entry is marked, evaluate() searches its distance;
    // so is a value from a segment with don't-care entries, where evaluate() searches the zeroing
    // moves (a far value is exact).
    const bool far = (*seg)->far_value(index).has_value();
    return success(static_cast<int>(*v) | ((*seg)->class_only(index) ? probe::kClassOnly : 0) |
                   (far ? 0 : probe::detail::dont_care_marks(**seg)));
  };
  std::vector<probe::ChessMove> moves(256);
  probe::ChessValue pos;
  const int n = root(tables, *b, read, moves, &pos);
  if (!pos)
    return Error(pos.status == probe::Status::not_found ? Errc::not_found : Errc::corrupt,
                 pos.message);
  moves.resize(static_cast<std::size_t>(std::max(n, 0)));
  Report r;
  nlohmann::json mj = nlohmann::json::array();
  std::string rows;
  for (const auto& m : moves) {
    Move mv;
    mv.from = m.from;
    mv.to = m.to;
    mv.promotion = m.promotion ? static_cast<PieceType>(m.promotion) : kNoPromotion;
    nlohmann::json j = value_json(m.value);
    j["uci"] = uci(mv);
    j["move"] = uci(mv);
    // The position the move leads to, for a front end to play it (the legal move itself knows
    // whether it captures, en passant included, which the halfmove clock needs).
    for_each_legal_move(*b, [&](const Move& legal) {
      if (legal.from == mv.from && legal.to == mv.to && legal.promotion == mv.promotion)
        j["child"] = to_fen(play(*b, legal));
    });
    mj.push_back(j);
    rows += fmt::format("  {:<6} {}\n", uci(mv), value_text(m.value));
  }
  const std::string best = moves.empty() ? "" : mj[0]["uci"].get<std::string>();
  r.json = value_json(pos);
  r.json["ok"] = true;
  r.json["game"] = Game::kName;
  r.json["fen"] = to_fen(*b);
  r.json["endgame"] = material_of(*b).canonicalized().name();
  r.json["side_to_move"] = b->side == white ? "white" : "black";
  r.json["halfmove_clock"] = b->halfmove;
  r.json["moves"] = mj;
  r.json["best"] = best.empty() ? nlohmann::json() : nlohmann::json(best);
  r.text = fmt::format("position {}\ntable    {} ({} to move)\nvalue    {}\n", to_fen(*b),
                       material_of(*b).canonicalized().name(), b->side == white ? "white" : "black",
                       value_text(pos));
  r.text += rows;
  r.text += "best     " + (best.empty() ? std::string("-") : best) + "\n";
  return r;
}

Result<Report> Module::stats_report(const Database& db, const std::optional<std::string>& plot) {
  // Per table (material), both metrics and every pawn profile summed per side to move.
  struct PerTable {
    std::array<Side, 2> dtz, dtm;
    bool has_dtm = false;
  };
  std::map<std::string, PerTable> tables;
  auto merge = [](Side& into, const Side& x) {
    into.legal += x.legal;
    for (int k = 0; k < 5; ++k) into.wdl[k] += x.wdl[k];
    for (const auto& [v, n] : x.histogram) into.histogram[v] += n;
    auto keep = [](std::optional<Longest>& a, const std::optional<Longest>& y) {
      if (y && (!a || y->plies > a->plies)) a = y;
    };
    keep(into.longest, x.longest);
    keep(into.longest_cursed, x.longest_cursed);
  };
  for (const auto& rec : db.manifest().segments) {
    auto st = stats_from_json(rec.stats);
    if (!st)
      return Error(Errc::corrupt, fmt::format("manifest has no statistics for segment {} ({}); "
                                              "rebuild it",
                                              rec.name, st.error().message()));
    bool dtm;
    auto k = parse_table_key(strip_dtm(rec.name, &dtm));
    if (!k) continue;
    PerTable& t = tables[k->material.name()];
    t.has_dtm = t.has_dtm || st->dtm;
    for (int side = 0; side < 2; ++side)
      merge((st->dtm ? t.dtm : t.dtz)[static_cast<std::size_t>(side)],
            st->side[static_cast<std::size_t>(side)]);
  }
  Report r;
  nlohmann::json all = nlohmann::json::object();
  r.text = fmt::format("{:<10} {:<6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}\n",
                       "table", "side", "legal", "win", "cursed-win", "draw", "blessed-loss",
                       "loss", "max dtz", "max dtm");
  std::vector<plot::Series> series;
  for (const auto& [name, t] : tables) {
    nlohmann::json tj;
    for (int side = 0; side < 2; ++side) {
      const Side& z = t.dtz[static_cast<std::size_t>(side)];
      const Side& m = t.dtm[static_cast<std::size_t>(side)];
      nlohmann::json sj;
      nlohmann::json wdl = nlohmann::json::object(), hz = nlohmann::json::object(),
                     hm = nlohmann::json::object();
      for (int k = 0; k < 5; ++k) wdl[kWdlKeys[k]] = z.wdl[static_cast<std::size_t>(k)];
      for (const auto& [v, n] : z.histogram) hz[std::to_string(v)] = n;
      for (const auto& [v, n] : m.histogram) hm[std::to_string(v)] = n;
      auto longest = [](const std::optional<Longest>& l) {
        return l ? nlohmann::json{{"plies", l->plies}, {"fen", l->fen}} : nlohmann::json();
      };
      sj["legal_positions"] = z.legal;
      sj["wdl"] = wdl;
      sj["dtz"] = hz;
      sj["dtm"] = t.has_dtm ? hm : nlohmann::json();
      sj["longest_dtz"] = longest(z.longest);
      sj["longest_cursed_dtz"] = longest(z.longest_cursed);
      sj["longest_dtm"] = t.has_dtm ? longest(m.longest) : nlohmann::json();
      tj[kSideNames[side]] = sj;
      r.text += fmt::format("{:<10} {:<6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}\n",
                            name, kSideNames[side], z.legal, z.wdl[4], z.wdl[3], z.wdl[2], z.wdl[1],
                            z.wdl[0], z.longest ? std::to_string(z.longest->plies) : "-",
                            t.has_dtm && m.longest ? std::to_string(m.longest->plies) : "-");
      if (plot) {
        plot::Series sz{name + " " + kSideNames[side] + " DTZ", {}};
        for (const auto& [v, n] : z.histogram)
          if (v != 0) sz.points.emplace_back(v, static_cast<double>(n));
        series.push_back(std::move(sz));
        if (t.has_dtm) {
          plot::Series sm{name + " " + kSideNames[side] + " DTM", {}};
          for (const auto& [v, n] : m.histogram)
            if (v != 0) sm.points.emplace_back(v, static_cast<double>(n));
          series.push_back(std::move(sm));
        }
      }
    }
    all[name] = tj;
  }
  r.json = {{"ok", true}, {"game", Game::kName}, {"endgames", all}};
  if (plot) {
    const std::string svg =
        plot::svg_lines(series, {"Distance to zeroing and to mate in the chess tables",
                                 "plies (wins > 0, losses < 0)", "positions", 960, 600});
    if (auto w = io::write_file_atomic(*plot, svg); !w) return std::move(w).error();
    r.text += "plot written to " + *plot + "\n";
    r.json["plot"] = *plot;
  }
  return r;
}

// ---- solve -----------------------------------------------------------------------------------

Result<int> Module::leaf_limit(const probe::Prober&, std::optional<int> asked) {
  return asked.value_or(32);  // every table the database holds is a leaf
}

Result<Report> Module::solve_report(const SolveRun& run) {
  auto b = parse_fen(run.position);
  if (!b) return std::move(b).error();
  const int pieces = std::popcount(b->occupied());
  return solve::wdl_report(run, Game::kName, to_fen(*b), material_of(*b).name(), pieces, "table",
                           " (the 50-move rule ignored)");
}

const GameModule& module() {
  static const ModuleOf<Module> m;
  return m;
}

}  // namespace retra::chess
