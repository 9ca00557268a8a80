// The probing library (include/retra/probe.hpp): lazily opened segments, one sharded LRU cache of
// decompressed blocks, position -> segment/index for Awari and xiangqi.
// Thread safety: probes run concurrently; each segment opens once (call_once), each cache shard
// has its own lock, and a block is decompressed outside any lock.
#include "retra/probe.hpp"

#include <algorithm>
#include <atomic>
#include <list>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "src/database.hpp"
#include "src/games/awari/board.hpp"
#include "src/games/awari/index.hpp"
#include "src/games/xiangqi/game.hpp"

namespace retra::probe {

std::string_view status_name(Status s) noexcept {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::invalid_argument:
      return "invalid_argument";
    case Status::not_found:
      return "not_found";
    case Status::corrupt:
      return "corrupt";
    case Status::io:
      return "io";
    case Status::mismatch:
      return "mismatch";
    case Status::resource:
      return "resource";
    case Status::internal:
      return "internal";
    case Status::null_handle:
      return "null_handle";
    case Status::wrong_game:
      return "wrong_game";
    case Status::closed_handle:
      return "closed_handle";
  }
  return "unknown";
}

namespace {

Status status_of(Errc e) {
  switch (e) {
    case Errc::invalid_argument:
      return Status::invalid_argument;
    case Errc::not_found:
      return Status::not_found;
    case Errc::corrupt:
      return Status::corrupt;
    case Errc::io:
      return Status::io;
    case Errc::mismatch:
      return Status::mismatch;
    case Errc::resource:
      return Status::resource;
    default:
      return Status::internal;
  }
}

Value failure(Status s, std::string msg) {
  Value v;
  v.status = s;
  v.message = std::move(msg);
  return v;
}
Value failure(const Error& e) { return failure(status_of(e.code()), e.message()); }
Value success(int value) {
  Value v;
  v.value = value;
  return v;
}

// One LRU of decompressed blocks per shard; the shard is chosen by the block key's hash, so
// threads probing different blocks rarely share a lock. Capacity is in bytes, split evenly.
class BlockCache {
 public:
  static constexpr std::size_t kShards = 64;
  explicit BlockCache(std::size_t bytes) : per_shard_(bytes / kShards) {}

  // Reads the byte at `offset` of block `key`, loading the block with `load` on a miss.
  template <class Load>
  Value byte(std::uint64_t key, std::uint32_t offset, Load&& load) {
    Shard& s = shard(key);
    {
      std::lock_guard lock(s.mu);
      if (auto it = s.map.find(key); it != s.map.end()) {
        s.lru.splice(s.lru.begin(), s.lru, it->second);
        s.hits.fetch_add(1, std::memory_order_relaxed);
        return success(it->second->data[offset]);
      }
    }
    s.misses.fetch_add(1, std::memory_order_relaxed);
    std::vector<std::uint8_t> block;
    if (Status st = load(block); st != Status::ok) return failure(st, std::move(last_error_));
    const int v = block[offset];
    insert(s, key, std::move(block));
    return success(v);
  }

  // Several offsets of one block under one lock (batches).
  template <class Load>
  void bytes(std::uint64_t key, std::span<const std::uint32_t> offsets, std::span<Value*> out,
             Load&& load) {
    Shard& s = shard(key);
    {
      std::lock_guard lock(s.mu);
      if (auto it = s.map.find(key); it != s.map.end()) {
        s.lru.splice(s.lru.begin(), s.lru, it->second);
        s.hits.fetch_add(offsets.size(), std::memory_order_relaxed);
        for (std::size_t i = 0; i < offsets.size(); ++i)
          *out[i] = success(it->second->data[offsets[i]]);
        return;
      }
    }
    s.misses.fetch_add(1, std::memory_order_relaxed);
    s.hits.fetch_add(offsets.size() - 1, std::memory_order_relaxed);
    std::vector<std::uint8_t> block;
    if (Status st = load(block); st != Status::ok) {
      const std::string msg = last_error_;
      for (Value* v : out) *v = failure(st, msg);
      return;
    }
    for (std::size_t i = 0; i < offsets.size(); ++i) *out[i] = success(block[offsets[i]]);
    insert(s, key, std::move(block));
  }

  void set_error(std::string msg) { last_error_ = std::move(msg); }

  CacheStats stats() const {
    CacheStats c;
    for (const Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      c.hits += s.hits.load(std::memory_order_relaxed);
      c.misses += s.misses.load(std::memory_order_relaxed);
      c.bytes += s.bytes;
    }
    return c;
  }

 private:
  struct Entry {
    std::uint64_t key;
    std::vector<std::uint8_t> data;
  };
  struct Shard {
    mutable std::mutex mu;
    std::list<Entry> lru;  // most recent first
    std::unordered_map<std::uint64_t, std::list<Entry>::iterator> map;
    std::size_t bytes = 0;
    std::atomic<std::uint64_t> hits{0}, misses{0};
  };

  Shard& shard(std::uint64_t key) {
    return shards_[(key * 0x9E3779B97F4A7C15ull) >> 58];  // top 6 bits: 64 shards
  }
  void insert(Shard& s, std::uint64_t key, std::vector<std::uint8_t> block) {
    const std::size_t size = block.size();
    if (size > per_shard_) return;  // a cache too small to hold a block: read through
    std::lock_guard lock(s.mu);
    if (s.map.count(key)) return;  // another thread loaded it meanwhile
    s.lru.push_front({key, std::move(block)});
    s.map.emplace(key, s.lru.begin());
    s.bytes += size;
    while (s.bytes > per_shard_) {
      s.bytes -= s.lru.back().data.size();
      s.map.erase(s.lru.back().key);
      s.lru.pop_back();
    }
  }

  std::size_t per_shard_;
  Shard shards_[kShards];
  // Message of the failed load of the calling thread (set just before load returns an error).
  static thread_local std::string last_error_;
};
thread_local std::string BlockCache::last_error_;

}  // namespace

struct Prober::Impl {
  std::unique_ptr<Database> db;
  std::string game;
  // Segments by slot (manifest order), opened on first use.
  struct Slot {
    std::string name;
    std::once_flag once;
    std::atomic<const format::SegmentReader*> reader{nullptr};
    Error error{Errc::internal, ""};
    // xiangqi: the endgame's Game, built on first use as well
    std::shared_ptr<const xiangqi::Game> game;
    int segment = -1;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::map<std::string, int, std::less<>> by_name;
  int awari_slot[awari::kMaxStones + 1];
  // xiangqi: slot by piece counts (count_key) for the endgames without pinned pawns, so that a
  // probe finds its segment without building a Material and its name.
  std::unordered_map<std::uint64_t, int> by_counts;
  std::unique_ptr<BlockCache> cache;

  const format::SegmentReader* reader(Slot& s, Value* err) const {
    std::call_once(s.once, [&] {
      auto r = db->segment(s.name);
      if (!r) {
        s.error = r.error();
        return;
      }
      if (game == "xiangqi") {
        auto m = xiangqi::parse_material(s.name);
        auto g = m ? xiangqi::Game::closure({*m})
                   : Result<std::shared_ptr<const xiangqi::Game>>(m.error());
        if (!g) {
          s.error = g.error();
          return;
        }
        s.game = *g;
        s.segment = s.game->find(m->name());
      }
      s.reader.store(*r, std::memory_order_release);
    });
    const format::SegmentReader* r = s.reader.load(std::memory_order_acquire);
    if (!r) *err = failure(s.error);
    return r;
  }

  // The stored byte of slot `slot` at `index`, through the cache.
  Value byte(int slot, std::uint64_t index) const {
    Slot& s = *slots[static_cast<std::size_t>(slot)];
    Value err;
    const format::SegmentReader* r = reader(s, &err);
    if (!r) return err;
    if (index >= r->info().entries)
      return failure(Status::invalid_argument,
                     fmt::format("index {} is outside segment '{}' ({} entries)", index, s.name,
                                 r->info().entries));
    const std::uint32_t be = r->info().block_entries;
    const std::uint64_t block = index / be;
    return cache->byte((static_cast<std::uint64_t>(slot) << 40) | block,
                       static_cast<std::uint32_t>(index % be),
                       [&](std::vector<std::uint8_t>& out) { return load(*r, block, out); });
  }

  Status load(const format::SegmentReader& r, std::uint64_t block,
              std::vector<std::uint8_t>& out) const {
    out.resize(r.raw_bytes(block));
    if (retra::Status st = r.read_block(block, out); !st) {
      cache->set_error(st.error().message());
      return status_of(st.error().code());
    }
    return Status::ok;
  }

  // Awari: position -> (slot, index), or an error value.
  Value awari_locate(const std::array<int, 12>& pits, int* slot, std::uint64_t* index) const {
    awari::Board b;
    int n = 0;
    for (int i = 0; i < 12; ++i) {
      if (pits[i] < 0 || pits[i] > awari::kMaxStones)
        return failure(Status::invalid_argument,
                       fmt::format("pit {} holds {} stones; a pit holds 0..{}", i, pits[i],
                                   awari::kMaxStones));
      n += pits[i];
      b.pit[i] = static_cast<std::uint8_t>(pits[i]);
    }
    if (n > awari::kMaxStones)
      return failure(
          Status::invalid_argument,
          fmt::format("{} stones in total; an Awari board holds at most {}", n, awari::kMaxStones));
    if (awari_slot[n] < 0)
      return failure(Status::not_found, fmt::format("the database has no {}-stone segment; build "
                                                    "it with `retra build awari --stones {}`",
                                                    n, n));
    *slot = awari_slot[n];
    *index = awari::rank(b);
    return success(n);
  }

  // Piece counts packed 3 bits per (colour, type); 0 for the armless.
  static std::uint64_t count_key(const xiangqi::Board& board) {
    std::uint64_t key = 0;
    bool armed = false;
    for (std::uint8_t pc : board)
      if (pc) {
        key += std::uint64_t{1} << (3 * (pc - 1));
        armed |= xiangqi::attacking(xiangqi::type_of(pc));
      }
    return armed ? key : 0;
  }
  static std::uint64_t count_key(const xiangqi::Material& m) {
    std::uint64_t key = 0;
    for (int c = 0; c < 2; ++c)
      for (int t = 0; t < xiangqi::kTypes; ++t)
        key += std::uint64_t{m.count[c][t]} << (3 * (t + 8 * c));
    return key;
  }

  Value xiangqi_locate(const xiangqi::Board& board, xiangqi::Color side, int* slot,
                       std::uint64_t* index) const {
    using namespace xiangqi;
    if (const std::uint64_t key = count_key(board); key != 0)
      if (auto f = by_counts.find(key); f != by_counts.end())
        return place(f->second, board, side, slot, index);
    Material m = material_of(board);
    if (m.armless()) return success(can_capture_king(board, side) ? 1 : 0);
    auto it = by_name.find(m.name());
    if (it == by_name.end()) {
      Material pinned = m;  // the same endgame with every pawn pinned to its rank
      for (int s = 0; s < kSquares; ++s)
        if (board[s] && type_of(board[s]) == pawn)
          pinned.levels[color_of(board[s])].push_back(static_cast<std::int8_t>(rank_of(s)));
      for (auto& l : pinned.levels) std::sort(l.begin(), l.end());
      it = by_name.find(pinned.name());
      if (it == by_name.end())
        return failure(Status::not_found,
                       fmt::format("endgame {} is not in the database; build it with `retra "
                                   "build xiangqi --endgame {}`",
                                   m.name(), m.name()));
    }
    return place(it->second, board, side, slot, index);
  }

  // The index of a board in the endgame of slot `id`.
  Value place(int id, const xiangqi::Board& board, xiangqi::Color side, int* slot,
              std::uint64_t* index) const {
    Slot& s = *slots[static_cast<std::size_t>(id)];
    Value err;
    if (!reader(s, &err)) return err;
    auto pos = s.game->from_board(s.segment, board, side);
    if (!pos) return failure(pos.error());
    *slot = id;
    *index = s.game->rank(s.segment, *pos);
    return success(-1);  // located: the caller reads the byte
  }
};

Prober::Prober(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Prober::~Prober() = default;

std::unique_ptr<Prober> Prober::open(const std::string& dir, const Options& opt, Value* error) {
  auto fail = [&](Value v) {
    if (error) *error = std::move(v);
    return nullptr;
  };
  auto db = Database::open(dir);
  if (!db) return fail(failure(db.error()));
  auto impl = std::make_unique<Impl>();
  impl->game = (*db)->manifest().game;
  if (impl->game != "awari" && impl->game != "xiangqi")
    return fail(failure(Status::mismatch, fmt::format("'{}' holds a {} database, which this "
                                                      "library cannot probe",
                                                      dir, impl->game)));
  std::fill(std::begin(impl->awari_slot), std::end(impl->awari_slot), -1);
  for (const auto& rec : (*db)->manifest().segments) {
    auto slot = std::make_unique<Impl::Slot>();
    slot->name = rec.name;
    const int id = static_cast<int>(impl->slots.size());
    impl->by_name[rec.name] = id;
    if (impl->game == "awari") {
      const int n = std::atoi(rec.name.c_str());
      if (n >= 0 && n <= awari::kMaxStones) impl->awari_slot[n] = id;
    } else if (auto m = xiangqi::parse_material(rec.name);
               m && m->levels[0].empty() && m->levels[1].empty() && !m->armless()) {
      impl->by_counts[Impl::count_key(*m)] = id;
    }
    impl->slots.push_back(std::move(slot));
  }
  impl->db = std::move(*db);
  impl->cache = std::make_unique<BlockCache>(opt.cache_bytes);
  if (error) *error = Value{};
  return std::unique_ptr<Prober>(new Prober(std::move(impl)));
}

std::string_view Prober::game() const noexcept { return impl_->game; }

Value Prober::awari(const std::array<int, 12>& pits) const {
  if (impl_->game != "awari")
    return failure(Status::wrong_game, fmt::format("an Awari probe on a {} database", impl_->game));
  int slot = 0;
  std::uint64_t index = 0;
  Value where = impl_->awari_locate(pits, &slot, &index);
  if (!where) return where;
  Value v = impl_->byte(slot, index);
  if (v) v.value = static_cast<std::int8_t>(v.value);  // score-i8
  return v;
}

Value Prober::xiangqi(std::string_view fen) const {
  if (impl_->game != "xiangqi")
    return failure(Status::wrong_game,
                   fmt::format("a xiangqi probe on a {} database", impl_->game));
  auto fp = xiangqi::parse_fen(fen);
  if (!fp) return failure(fp.error());
  int slot = -1;
  std::uint64_t index = 0;
  Value where = impl_->xiangqi_locate(fp->board, fp->side, &slot, &index);
  if (!where || slot < 0) return where;  // an error, or an armless position's value
  return impl_->byte(slot, index);
}

Value Prober::xiangqi_board(std::span<const std::uint8_t, 90> board, int side_to_move) const {
  if (impl_->game != "xiangqi")
    return failure(Status::wrong_game,
                   fmt::format("a xiangqi probe on a {} database", impl_->game));
  if (side_to_move != 0 && side_to_move != 1)
    return failure(Status::invalid_argument,
                   fmt::format("side to move {}: use 0 for Red, 1 for Black", side_to_move));
  xiangqi::Board b;
  std::copy(board.begin(), board.end(), b.begin());
  if (auto why = xiangqi::board_error(b))
    return failure(Status::invalid_argument, fmt::format("xiangqi board: {}", *why));
  int slot = -1;
  std::uint64_t index = 0;
  Value where = impl_->xiangqi_locate(b, xiangqi::Color(side_to_move), &slot, &index);
  if (!where || slot < 0) return where;
  return impl_->byte(slot, index);
}

Value Prober::stored(std::string_view segment, std::uint64_t index) const {
  auto it = impl_->by_name.find(segment);
  if (it == impl_->by_name.end())
    return failure(Status::not_found, fmt::format("the database has no segment '{}'", segment));
  return impl_->byte(it->second, index);
}

namespace {

// Groups located probes by block and reads each block once.
struct Located {
  int slot;
  std::uint64_t index;
  std::size_t out;
};

}  // namespace

void Prober::awari_batch(std::span<const std::array<int, 12>> positions,
                         std::span<Value> out) const {
  const std::size_t n = std::min(positions.size(), out.size());
  if (impl_->game != "awari") {
    for (std::size_t i = 0; i < n; ++i) out[i] = awari(positions[i]);
    return;
  }
  std::vector<Located> todo;
  todo.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    int slot = 0;
    std::uint64_t index = 0;
    Value where = impl_->awari_locate(positions[i], &slot, &index);
    if (!where) {
      out[i] = std::move(where);
      continue;
    }
    todo.push_back({slot, index, i});
  }
  std::sort(todo.begin(), todo.end(), [](const Located& a, const Located& b) {
    return a.slot != b.slot ? a.slot < b.slot : a.index < b.index;
  });
  std::vector<std::uint32_t> offsets;
  std::vector<Value*> dest;
  for (std::size_t i = 0; i < todo.size();) {
    Impl::Slot& s = *impl_->slots[static_cast<std::size_t>(todo[i].slot)];
    Value err;
    const format::SegmentReader* r = impl_->reader(s, &err);
    if (!r) {
      for (; i < todo.size() && &s == impl_->slots[static_cast<std::size_t>(todo[i].slot)].get();
           ++i)
        out[todo[i].out] = err;
      continue;
    }
    const std::uint32_t be = r->info().block_entries;
    const std::uint64_t block = todo[i].index / be;
    offsets.clear();
    dest.clear();
    std::size_t j = i;
    for (; j < todo.size() && todo[j].slot == todo[i].slot && todo[j].index / be == block; ++j) {
      offsets.push_back(static_cast<std::uint32_t>(todo[j].index % be));
      dest.push_back(&out[todo[j].out]);
    }
    impl_->cache->bytes((static_cast<std::uint64_t>(todo[i].slot) << 40) | block, offsets, dest,
                        [&](std::vector<std::uint8_t>& b) { return impl_->load(*r, block, b); });
    for (Value* v : dest)
      if (*v) v->value = static_cast<std::int8_t>(v->value);
    i = j;
  }
}

void Prober::xiangqi_batch(std::span<const std::string_view> fens, std::span<Value> out) const {
  const std::size_t n = std::min(fens.size(), out.size());
  for (std::size_t i = 0; i < n; ++i) out[i] = xiangqi(fens[i]);
}

CacheStats Prober::cache_stats() const noexcept { return impl_->cache->stats(); }

}  // namespace retra::probe
