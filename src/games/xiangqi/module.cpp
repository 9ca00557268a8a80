// The xiangqi game module (module.hpp): endgame names and closures, the spec's statistics,
// reports, the probe locator and what `retra probe`, `stats` and `solve` print; and the module
// table itself, where the generic drivers are compiled for xiangqi. Thread safety: reentrant.
#include "src/games/xiangqi/module.hpp"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <functional>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/memory_plan.hpp"
#include "src/module/module_of.hpp"
#include "src/probe/prober_impl.hpp"
#include "src/solve/report.hpp"

namespace retra::xiangqi {

namespace {

constexpr OptionSpec kTargetOptions[] = {
    {"--endgame", "Endgame names, e.g. KRKGGMM or KNP(9)KGM", true, false},
    {"--set", "A named set of endgames: fang151 (the paper's 151)", false, false},
};

}  // namespace

// The result for the side to move, as every game's probe names it (front ends colour by it).
std::string_view outcome(int v) { return v == 0 ? "draw" : v & 1 ? "win" : "loss"; }

std::string describe(int v, const std::string& metric) {
  if (v == 0) return "draw";
  if (v == 1) return "wins at once: the side to move can capture the opponent's king";
  if (v == 2) return "lost: every move lets the opponent capture the king (checkmate or stalemate)";
  if (metric == "dtc")
    return v & 1 ? fmt::format("wins: reaches a won conversion within {} plies", v)
                 : fmt::format("loses: the opponent converts to a win within {} plies", v);
  return v & 1 ? fmt::format("wins: captures the king in {} plies (mate in {})", v, v - 2)
               : fmt::format("loses: the king is captured in {} plies (mated in {})", v, v - 2);
}

// ---- segments --------------------------------------------------------------------------------

std::span<const OptionSpec> Module::target_options() { return kTargetOptions; }

Result<std::vector<std::string>> Module::targets(const OptionValues& values) {
  std::vector<std::string> names;
  if (auto set = values.find("--set"); set != values.end() && !set->second.empty()) {
    if (set->second.front() != "fang151")
      return Error(Errc::invalid_argument,
                   fmt::format("--set '{}': the known set is fang151", set->second.front()));
    names = fang151();
  }
  // Every name is checked here, as the module contract says (a fuzzer found "" passed through to
  // the build, which refused it only later).
  if (auto eg = values.find("--endgame"); eg != values.end())
    for (const auto& e : eg->second) {
      auto m = parse_material(e);
      if (!m) return std::move(m).error();
      names.push_back(e);
    }
  if (names.empty())
    return Error(Errc::invalid_argument,
                 "name the endgames: --endgame KRKGGMM (repeatable, or comma separated) or "
                 "--set fang151");
  return names;
}

Result<Selection<Game>> Module::select(std::span<const std::string> names) {
  std::vector<Material> materials;
  for (const auto& name : names) {
    auto m = parse_material(name);
    if (!m) return std::move(m).error();
    materials.push_back(*m);
  }
  auto g = Game::closure(materials);
  if (!g) return std::move(g).error();
  Selection<Game> sel;
  sel.game = *g;
  for (int s = 0; s < sel.game->segments(); ++s) sel.order.push_back(s);  // dependencies first
  for (const Material& m : materials) sel.named.push_back(sel.game->find(m.name()));
  return sel;
}

bool Module::segment_less(const std::string& a, const std::string& b) {
  auto ma = parse_material(a), mb = parse_material(b);
  const int pa = ma ? ma->pieces() : 0, pb = mb ? mb->pieces() : 0;
  return pa != pb ? pa < pb : a < b;
}

// ---- statistics ------------------------------------------------------------------------------

Module::Stats Module::statistics(const Game& g, int s, std::span<const std::uint8_t> values,
                                 std::span<const format::FarValue> far, int threads) {
  assert(far.empty());  // distances to mate fit a byte (or fall back to distance to conversion)
  (void)far;
  const std::uint64_t half = g.endgame(s).indexer->size();
  struct Counts {
    std::uint64_t valid = 0, kfk = 0, okic[2] = {}, mate[2] = {}, stale[2] = {}, draws[2] = {};
    std::uint64_t hist[2][256] = {};
    int max_dtm = -1;
  };
  Counts total;
  const std::uint64_t chunk = 1u << 14, chunks = (half + chunk - 1) / chunk;
  std::mutex mu;  // not `omp critical`: see kernels/backward.hpp
#pragma omp parallel num_threads(std::max(1, threads)) if (chunks > 1)
  {
    Counts c;
#pragma omp for schedule(dynamic, 1)
    for (std::uint64_t k = 0; k < chunks; ++k) {
      const std::uint64_t end = std::min(half, (k + 1) * chunk);
      Position p = g.unrank(s, k * chunk);
      for (std::uint64_t i = k * chunk; i < end; ++i) {
        if (i > k * chunk) g.next(s, p);
        if (!p.valid) continue;
        ++c.valid;
        const Board b = g.board(s, p);
        const bool facing = kings_facing(b);
        c.kfk += facing;
        for (int side = 0; side < 2; ++side) {
          const int v = values[side * half + i];
          ++c.hist[side][v];
          if (v == 0) ++c.draws[side];
          if (v == 1 && !facing) ++c.okic[side];
          if (v == 2) ++(in_check(b, Color(side)) ? c.mate : c.stale)[side];
          if (v >= 2) c.max_dtm = std::max(c.max_dtm, v - 2);
        }
      }
    }
    {
      std::lock_guard lock(mu);
      total.valid += c.valid;
      total.kfk += c.kfk;
      for (int side = 0; side < 2; ++side) {
        total.okic[side] += c.okic[side];
        total.mate[side] += c.mate[side];
        total.stale[side] += c.stale[side];
        total.draws[side] += c.draws[side];
        for (int v = 0; v < 256; ++v) total.hist[side][v] += c.hist[side][v];
      }
      total.max_dtm = std::max(total.max_dtm, c.max_dtm);
    }
  }
  const Indexer& ix = *g.endgame(s).indexer;
  Stats st;
  st.index_size = half;
  st.paper_index_size = ix.paper_size();
  st.scheme = ix.scheme();
  st.valid = total.valid;
  st.kfk = total.kfk;
  for (int side = 0; side < 2; ++side) {
    st.okic[side] = total.okic[side];
    st.checkmate[side] = total.mate[side];
    st.stalemate[side] = total.stale[side];
    st.draws[side] = total.draws[side];
    for (int v = 0; v < 256; ++v)
      if (total.hist[side][v]) st.histogram[side][v] = total.hist[side][v];
  }
  if (total.max_dtm >= 0) st.max_dtm_plies = total.max_dtm;
  return st;
}

nlohmann::json Module::stats_json(const Stats& s) {
  auto pair = [](const std::array<std::uint64_t, 2>& a) {
    return nlohmann::json::array({a[0], a[1]});
  };
  nlohmann::json hist = {{"red", nlohmann::json::object()}, {"black", nlohmann::json::object()}};
  for (int side = 0; side < 2; ++side)
    for (const auto& [v, n] : s.histogram[side])
      hist[side == 0 ? "red" : "black"][std::to_string(v)] = n;
  return {{"index_size", s.index_size},
          {"paper_index_size", s.paper_index_size},
          {"scheme", s.scheme},
          {"valid_positions", s.valid},
          {"kfk", s.kfk},
          {"okic", pair(s.okic)},
          {"checkmate", pair(s.checkmate)},
          {"stalemate", pair(s.stalemate)},
          {"draws", pair(s.draws)},
          {"histogram", hist},
          {"max_dtm_plies", s.max_dtm_plies ? nlohmann::json(*s.max_dtm_plies) : nlohmann::json()}};
}

Result<Module::Stats> Module::stats_from_json(const nlohmann::json& j) {
  auto bad = [](const char* what) {
    return Error(Errc::corrupt, fmt::format("statistic '{}' is missing or malformed", what));
  };
  if (!j.is_object()) return bad("(all)");
  Stats s;
  auto number = [&](const char* k, std::uint64_t& out) {
    if (!j.contains(k) || !j[k].is_number_unsigned()) return false;
    out = j[k].get<std::uint64_t>();
    return true;
  };
  auto pair = [&](const char* k, std::array<std::uint64_t, 2>& out) {
    if (!j.contains(k) || !j[k].is_array() || j[k].size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      if (!j[k][i].is_number_unsigned()) return false;
      out[i] = j[k][i].get<std::uint64_t>();
    }
    return true;
  };
  if (!number("index_size", s.index_size)) return bad("index_size");
  if (!number("valid_positions", s.valid)) return bad("valid_positions");
  if (!number("kfk", s.kfk)) return bad("kfk");
  number("paper_index_size", s.paper_index_size);
  s.scheme = j.value("scheme", "");
  for (auto [k, a] : {std::pair{"okic", &s.okic}, std::pair{"checkmate", &s.checkmate},
                      std::pair{"stalemate", &s.stalemate}, std::pair{"draws", &s.draws}})
    if (!pair(k, *a)) return bad(k);
  if (!j.contains("histogram") || !j["histogram"].is_object()) return bad("histogram");
  for (int side = 0; side < 2; ++side) {
    const char* key = side == 0 ? "red" : "black";
    if (!j["histogram"].contains(key) || !j["histogram"][key].is_object()) return bad("histogram");
    for (const auto& [v, n] : j["histogram"][key].items()) {
      if (!n.is_number_unsigned()) return bad("histogram");
      s.histogram[side][std::stoi(v)] = n.get<std::uint64_t>();
    }
  }
  if (j.contains("max_dtm_plies") && j["max_dtm_plies"].is_number_integer())
    s.max_dtm_plies = j["max_dtm_plies"].get<int>();
  return s;
}

std::optional<std::string> Module::stats_mismatch(const Stats& a, const Stats& b) {
  if (a.valid != b.valid) return "valid_positions";
  if (a.kfk != b.kfk) return "kfk";
  if (a.okic != b.okic) return "okic";
  if (a.checkmate != b.checkmate) return "checkmate";
  if (a.stalemate != b.stalemate) return "stalemate";
  if (a.draws != b.draws) return "draws";
  if (a.histogram != b.histogram) return "histogram";
  if (a.max_dtm_plies != b.max_dtm_plies) return "max_dtm_plies";
  return std::nullopt;
}

// ---- build report ----------------------------------------------------------------------------

std::string Module::report_header() {
  return fmt::format("{:<12} {:>11} {:>11} {:>11} {:>17} {:>5} {:>8} {:>10} {:>10}  {}", "endgame",
                     "index", "paper", "valid", "draws r/b", "dtm", "seconds", "RSS", "on disk",
                     "metric");
}

std::string Module::report_row(const SegmentReport& r) {
  const auto& st = r.stats;
  auto pair = [&](const char* k) {
    return st.contains(k)
               ? fmt::format("{}/{}", st[k][0].get<std::uint64_t>(), st[k][1].get<std::uint64_t>())
               : std::string("-");
  };
  return fmt::format("{:<12} {:>11} {:>11} {:>11} {:>17} {:>5} {:>8.2f} {:>10} {:>10}  {}{}",
                     r.name, r.entries / 2, st.value("paper_index_size", std::uint64_t{0}),
                     st.value("valid_positions", std::uint64_t{0}), pair("draws"),
                     st.contains("max_dtm_plies") && !st["max_dtm_plies"].is_null()
                         ? std::to_string(st["max_dtm_plies"].get<int>())
                         : "-",
                     r.seconds, r.rss_bytes ? format_bytes(r.rss_bytes) : std::string("-"),
                     format_bytes(r.file_bytes), r.metric, r.skipped ? " (already built)" : "");
}

nlohmann::json Module::report_json(const SegmentReport& r) {
  return {{"endgame", r.name},
          {"index_size", r.entries / 2},
          {"paper_index_size", r.stats.value("paper_index_size", std::uint64_t{0})},
          {"scheme", r.stats.value("scheme", "")},
          {"skipped", r.skipped},
          {"metric", r.metric},
          {"levels", r.iterations},
          {"threads", r.threads},
          {"kernel_seconds", r.kernel_seconds},
          {"seconds", r.seconds},
          {"rss_bytes", r.rss_bytes},
          {"file_bytes", r.file_bytes},
          {"raw_bytes", r.raw_bytes},
          {"stats", r.stats}};
}

void Module::report_totals(const std::vector<SegmentReport>& reports, nlohmann::json& json,
                           std::string& line) {
  std::uint64_t index = 0, paper = 0, bytes = 0;
  for (const auto& r : reports) {
    index += r.entries / 2;
    paper += r.stats.value("paper_index_size", std::uint64_t{0});
    bytes += r.file_bytes;
  }
  json["index_size"] = index;
  json["paper_index_size"] = paper;
  json["file_bytes"] = bytes;
  line = fmt::format("{} endgames, index {} entries per side (paper's scheme: {}), {} on disk",
                     reports.size(), index, paper, format_bytes(bytes));
}

// ---- probe -----------------------------------------------------------------------------------

namespace {

using probe::detail::failure;
using probe::detail::success;

// Piece counts packed 3 bits per (colour, type); 0 for the armless.
std::uint64_t count_key(const Board& board) {
  std::uint64_t key = 0;
  bool armed = false;
  for (std::uint8_t pc : board)
    if (pc) {
      key += std::uint64_t{1} << (3 * (pc - 1));
      armed |= attacking(type_of(pc));
    }
  return armed ? key : 0;
}
std::uint64_t count_key(const Material& m) {
  std::uint64_t key = 0;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < kTypes; ++t) key += std::uint64_t{m.count[c][t]} << (3 * (t + 8 * c));
  return key;
}

// The same endgame with every pawn pinned to its rank.
Material pinned_material(const Board& board) {
  Material pinned = material_of(board);
  for (int s = 0; s < kSquares; ++s)
    if (board[s] && type_of(board[s]) == pawn)
      pinned.levels[color_of(board[s])].push_back(static_cast<std::int8_t>(rank_of(s)));
  for (auto& l : pinned.levels) std::sort(l.begin(), l.end());
  return pinned;
}

}  // namespace

Locator::Locator(std::span<const std::string> segments) {
  for (std::size_t i = 0; i < segments.size(); ++i) {
    auto slot = std::make_unique<Slot>();
    slot->name = segments[i];
    by_name_[segments[i]] = static_cast<int>(i);
    if (auto m = parse_material(segments[i]);
        m && m->levels[0].empty() && m->levels[1].empty() && !m->armless())
      by_counts_[count_key(*m)] = static_cast<int>(i);
    slots_.push_back(std::move(slot));
  }
}

probe::Value Locator::locate(std::string_view position, probe::Location* where) const {
  auto fp = parse_fen(position);
  if (!fp) return failure(fp.error());
  return locate(fp->board, fp->side, where);
}

probe::Value Locator::locate(const Board& board, Color side, probe::Location* where) const {
  if (const std::uint64_t key = count_key(board); key != 0)
    if (auto f = by_counts_.find(key); f != by_counts_.end())
      return place(f->second, board, side, where);
  const Material m = material_of(board);
  if (m.armless()) {
    where->slot = -1;  // no table: only the flying general decides anything
    where->value = can_capture_king(board, side) ? 1 : 0;
    return success(where->value);
  }
  auto it = by_name_.find(m.name());
  if (it == by_name_.end()) it = by_name_.find(pinned_material(board).name());
  if (it == by_name_.end())
    return failure(probe::Status::not_found,
                   fmt::format("endgame {} is not in the database; build it with `retra build "
                               "xiangqi --endgame {}`",
                               m.name(), m.name()));
  return place(it->second, board, side, where);
}

// The index of a board in the endgame of slot `id` (its game built on first use).
probe::Value Locator::place(int id, const Board& board, Color side, probe::Location* where) const {
  Slot& s = *slots_[static_cast<std::size_t>(id)];
  std::call_once(s.once, [&] {
    auto m = parse_material(s.name);
    auto g = m ? Game::closure({*m}) : Result<std::shared_ptr<const Game>>(m.error());
    if (!g) {
      s.error = g.error();
      return;
    }
    s.game = *g;
    s.segment = s.game->find(m->name());
  });
  if (s.error) return failure(*s.error);
  auto pos = s.game->from_board(s.segment, board, side);
  if (!pos) return failure(pos.error());
  where->slot = id;
  where->index = s.game->rank(s.segment, *pos);
  return {};
}

probe::Coverage Locator::coverage() const {
  probe::Coverage c;
  c.units = "pieces";
  c.segments = slots_.size();
  // Every position with 2 pieces (the kings) is valued by the rules; beyond that a size is
  // complete when every endgame of that many pieces with one side armed is held.
  c.complete = 2;
  std::set<std::string> held;
  for (const auto& s : slots_)
    if (auto m = parse_material(s->name)) {
      c.largest = std::max(c.largest, m->pieces());
      held.insert(m->name());
    }
  c.largest = std::max(c.largest, 2);
  // One side armed, the other any defenders, kings included: enumerate by piece count.
  for (int size = 3; size <= c.largest; ++size) {
    bool all = true;
    for (int armed = 0; armed < 2 && all; ++armed) {
      // Materials of `size` pieces with only colour `armed` holding attackers.
      std::vector<Material> list;
      Material m;
      m.count[0][king] = m.count[1][king] = 1;
      std::function<void(int, int)> fill = [&](int slot, int left) {
        // slot enumerates (colour, type) pairs other than kings
        if (slot == 2 * kTypes) {
          if (left == 0 && m.armed(Color(armed)) && !m.armed(Color(1 - armed))) list.push_back(m);
          return;
        }
        const int colour = slot / kTypes, t = slot % kTypes;
        if (t == king || (colour != armed && attacking(PieceType(t)))) return fill(slot + 1, left);
        for (int k = 0; k <= std::min(left, kMaxOfType[t]); ++k) {
          m.count[colour][t] = static_cast<std::uint8_t>(k);
          fill(slot + 1, left - k);
        }
        m.count[colour][t] = 0;
      };
      fill(0, size - 2);
      for (const auto& x : list) all = all && held.count(x.name());
    }
    if (!all) break;
    c.complete = size;
  }
  return c;
}

std::unique_ptr<probe::Locator> Module::locator(std::span<const std::string> segments) {
  return std::make_unique<Locator>(segments);
}

namespace {

// A child's value as the mover sees it (Table 1: the better the child's value for the opponent,
// the worse for the mover).
int propagate(int child) { return child == 0 ? 0 : child + 1; }

Result<int> stored(const Database& db, const std::string& name, std::uint64_t index) {
  auto seg = db.segment(name);
  if (!seg) return std::move(seg).error();
  auto b = (*seg)->byte_at(index);
  if (!b) return std::move(b).error();
  return static_cast<int>(*b);
}

std::string move_name(const Board& b, const Move& m) {
  const std::uint8_t pc = b[m.from];
  return fmt::format("{}{}{}{}", piece_letter(type_of(pc), red), square_name(m.from),
                     m.captured ? "x" : "-", square_name(m.to));
}

}  // namespace

Result<Report> Module::probe_report(const Database& db, std::string_view fen) {
  auto fp = parse_fen(fen);
  if (!fp) return std::move(fp).error();
  const std::string normalized = to_fen(fp->board, fp->side);
  Material m = material_of(fp->board);
  std::string metric = "dtm";
  std::uint64_t index = 0;
  int value = 0;
  struct MoveValue {
    std::string move;
    bool capture;
    int value;
    std::string child;  // the FEN the move leads to, for a front end to play it
  };
  std::vector<MoveValue> moves;
  if (m.armless()) {
    // Nothing to look up: only the flying general decides anything.
    value = can_capture_king(fp->board, fp->side) ? 1 : 0;
  } else {
    // The endgame in the database: the plain name, or with every pawn pinned to its rank.
    if (!db.has_segment(m.name())) {
      const Material pinned = pinned_material(fp->board);
      if (!db.has_segment(pinned.name()))
        return Error(Errc::not_found,
                     fmt::format("endgame {} is not in database '{}'; build it with `retra build "
                                 "xiangqi --endgame {} --db {}`",
                                 m.name(), db.dir().string(), m.name(), db.dir().string()));
      m = pinned;
    }
    auto gr = Game::closure({m});
    if (!gr) return std::move(gr).error();
    const Game& g = **gr;
    const int s = g.find(m.name());
    metric = db.manifest().find(m.name())->stats.value("metric", "dtm");
    auto pos = g.from_board(s, fp->board, fp->side);
    if (!pos) return std::move(pos).error();
    index = g.rank(s, *pos);
    auto v = stored(db, m.name(), index);
    if (!v) return std::move(v).error();
    value = *v;
    // Every move, with the value it leads to. Game::for_each_move and piece_moves visit the
    // pieces of the side to move in slot order and each piece's moves in the same order, so the
    // k-th child belongs to the k-th move.
    struct ChildInfo {
      int value;
      bool converts;
    };
    std::vector<ChildInfo> children;
    std::optional<Error> err;
    g.for_each_move(s, *pos, [&](const Child<int>& c) {
      if (err) return;
      if (Game::virtual_segment(c.segment)) {
        children.push_back({static_cast<int>(c.index), true});
        return;
      }
      auto x = stored(db, g.endgame(c.segment).name, c.index);
      if (!x) {
        err = x.error();
        return;
      }
      children.push_back({*x, c.converts});
    });
    if (err) return *err;
    const Board b = g.board(s, *pos);
    std::vector<Move> ordered;
    for (int i = 0; i < g.endgame(s).n; ++i) {
      if (g.endgame(s).slots[i].color != fp->side) continue;
      auto on_move = [&](const Move& mv) { ordered.push_back(mv); };
      detail::piece_moves(b, pos->sq[i], on_move);
    }
    for (std::size_t k = 0; k < ordered.size(); ++k) {
      Board after = b;
      after[ordered[k].to] = after[ordered[k].from];
      after[ordered[k].from] = 0;
      MoveValue mv{move_name(b, ordered[k]), ordered[k].captured != 0, 0,
                   to_fen(after, opposite(fp->side))};
      // In a distance-to-conversion endgame a conversion is a win now (1) or a loss (2).
      if (metric == "dtc" && children[k].converts && children[k].value != 0)
        mv.value = (children[k].value & 1) ? 2 : 1;
      else
        mv.value = propagate(children[k].value);
      moves.push_back(mv);
    }
  }
  std::vector<std::string> best;
  if (value != 1)
    for (const auto& mv : moves)
      if (mv.value == value) best.push_back(mv.move);
  Report r;
  nlohmann::json mj = nlohmann::json::array();
  for (const auto& mv : moves)
    mj.push_back({{"move", mv.move},
                  {"capture", mv.capture},
                  {"value", mv.value},
                  {"meaning", describe(mv.value, metric)},
                  {"outcome", outcome(mv.value)},
                  {"child", mv.child}});
  r.json = {{"ok", true},
            {"game", Game::kName},
            {"fen", normalized},
            {"endgame", m.name()},
            {"side_to_move", fp->side == red ? "red" : "black"},
            {"index", index},
            {"value", value},
            {"metric", metric},
            {"meaning", describe(value, metric)},
            {"outcome", outcome(value)},
            {"distance_plies", value >= 2 ? nlohmann::json(value - 2) : nlohmann::json()},
            {"moves", mj},
            {"best", best}};
  r.text = fmt::format("position {}\nendgame  {} ({} to move, index {})\nvalue    {} ({})\n",
                       normalized, m.name(), fp->side == red ? "red" : "black", index, value,
                       describe(value, metric));
  for (const auto& mv : moves)
    r.text += fmt::format("  {:<10} {:>4}  {}\n", mv.move, mv.value, describe(mv.value, metric));
  std::string best_text;
  for (const auto& b : best) best_text += (best_text.empty() ? "" : " ") + b;
  r.text += "best     " + (best_text.empty() ? std::string("-") : best_text) + "\n";
  return r;
}

Result<Report> Module::stats_report(const Database& db, const std::optional<std::string>& plot) {
  if (plot)
    return Error(Errc::invalid_argument,
                 "--plot draws Awari value frequencies; xiangqi statistics are tables (use "
                 "--json for all of them)");
  Report r;
  nlohmann::json all = nlohmann::json::object();
  r.text = fmt::format("{:<12} {:>11} {:>11} {:>9} {:>15} {:>15} {:>15} {:>15} {:>5}\n", "endgame",
                       "index", "valid", "kfk", "okic r/b", "checkmate r/b", "stalemate r/b",
                       "draws r/b", "dtm");
  for (const auto& rec : db.manifest().segments) {
    auto st = stats_from_json(rec.stats);
    if (!st)
      return Error(Errc::corrupt, fmt::format("manifest has no statistics for endgame {} ({}); "
                                              "rebuild it",
                                              rec.name, st.error().message()));
    all[rec.name] = rec.stats;
    auto pair = [](const std::array<std::uint64_t, 2>& a) {
      return fmt::format("{}/{}", a[0], a[1]);
    };
    r.text += fmt::format("{:<12} {:>11} {:>11} {:>9} {:>15} {:>15} {:>15} {:>15} {:>5}\n",
                          rec.name, st->index_size, st->valid, st->kfk, pair(st->okic),
                          pair(st->checkmate), pair(st->stalemate), pair(st->draws),
                          st->max_dtm_plies ? std::to_string(*st->max_dtm_plies) : "-");
  }
  r.json = {{"ok", true}, {"game", Game::kName}, {"endgames", all}};
  return r;
}

// ---- solve -----------------------------------------------------------------------------------

Result<int> Module::leaf_limit(const probe::Prober&, std::optional<int> asked) {
  return asked.value_or(32);  // every endgame the database holds is a leaf
}

Result<Report> Module::solve_report(const SolveRun& run) {
  auto fp = parse_fen(run.position);
  if (!fp) return std::move(fp).error();
  const int pieces = static_cast<int>(
      std::count_if(fp->board.begin(), fp->board.end(), [](std::uint8_t pc) { return pc != 0; }));
  const std::string fen = to_fen(fp->board, fp->side);
  const std::string endgame = material_of(fp->board).name();
  return solve::wdl_report(run, Game::kName, fen, endgame, pieces, "database");
}

const GameModule& module() {
  static const ModuleOf<Module> m;
  return m;
}

}  // namespace retra::xiangqi
