// The inside of retra::probe::Prober, shared by the game-blind core (prober.cpp) and the thin
// typed entry points that each game adds in its own folder: segment slots opened on first use,
// one sharded LRU cache of decompressed blocks, and reads of located positions, one at a time or
// grouped by block. Nothing here knows a game.
// Thread safety: every member may be called from many threads; each slot opens once
// (call_once), each cache shard has its own lock, and a block is decompressed outside any lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "retra/error.hpp"
#include "retra/probe.hpp"
#include "src/database.hpp"
#include "src/probe/block_arena.hpp"
#include "src/probe/locator.hpp"
#include "src/util/flat_map.hpp"

namespace retra::probe {

namespace detail {

Status status_of(Errc e);
// The inverse, for callers above the probe library that speak Errc (the Python module): the C
// ABI's own statuses (wrong game, null or closed handles) are invalid arguments there.
Errc errc_of(Status s);
inline Value failure(Status s, std::string msg) {
  Value v;
  v.status = s;
  v.message = std::move(msg);
  return v;
}
inline Value failure(const Error& e) { return failure(status_of(e.code()), e.message()); }
inline Value success(int value) {
  Value v;
  v.value = value;
  return v;
}
Value wrong_game(std::string_view asked, std::string_view held);

// Decompressed blocks in shards chosen by the block key's hash, so that threads probing different
// blocks rarely share a lock. Capacity is in bytes, split evenly, counted as the blocks'
// footprints in the arena (BlockArena: huge pages where the kernel gives them: warm probes of a
// 1.5 GB table ran about 1.3 times faster, docs/PROBING.md). Each shard evicts by CLOCK (second
// chance), an approximation of least-recently-used whose hit only sets a flag: a warm probe's
// lookup is a lock, a flat-map find and that store, where a list-kept LRU relinked three nodes
// and std::unordered_map divided and chased a pointer (docs/PROBING.md has the measurements).
class BlockCache {
 public:
  static constexpr std::size_t kShards = 64;  // shard_of's 6 bits
  explicit BlockCache(std::size_t bytes) : per_shard_(bytes / kShards) {}

  // Reads the byte at `offset` of block `key`, loading the block with `load` on a miss.
  template <class Load>
  Value byte(std::uint64_t key, std::uint32_t offset, Load&& load) {
    Shard& s = shard(key);
    {
      std::lock_guard lock(s.mu);
      if (Entry* e = s.hit(key)) {
        ++s.hits;
        return success(e->data[offset]);  // within the block: load()'s contract
      }
      ++s.misses;
    }
    std::vector<std::uint8_t> block;
    if (Status st = load(block); st != Status::ok) return failure(st, std::move(last_error_));
    const int v = block[offset];
    insert(s, key, std::move(block));
    return success(v);
  }

  // Asks the processor to fetch the byte at `offset` of block `key` if the block is cached, and
  // does nothing else (no LRU update, no load): a caller that knows its next reads issues them
  // all first, so that their cache misses overlap instead of following one another.
  void prefetch(std::uint64_t key, std::uint32_t offset) {
    Shard& s = shard(key);
    std::lock_guard lock(s.mu);
    if (const std::uint32_t* at = s.map.find(key)) __builtin_prefetch(s.entries[*at].data + offset);
  }

  // Several offsets of one block under one lock (batches).
  template <class Load>
  void bytes(std::uint64_t key, std::span<const std::uint32_t> offsets, std::span<Value*> out,
             Load&& load) {
    Shard& s = shard(key);
    {
      std::lock_guard lock(s.mu);
      if (Entry* e = s.hit(key)) {
        s.hits += offsets.size();
        for (std::size_t i = 0; i < offsets.size(); ++i) *out[i] = success(e->data[offsets[i]]);
        return;
      }
      ++s.misses;
      s.hits += offsets.size() - 1;
    }
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
  CacheStats stats() const;
  // The shard of a block key (public for tests that fill one shard).
  static std::size_t shard_of(std::uint64_t key) { return fibonacci_hash(key, 6); }

 private:
  struct Entry {
    std::uint64_t key;
    std::uint8_t* data;  // size bytes from arena_
    std::size_t size;
    bool referenced;  // read since the clock hand last passed it
  };
  // Everything under mu.
  struct Shard {
    mutable std::mutex mu;
    std::vector<Entry> entries;        // the clock's ring; data == nullptr: a hole
    std::vector<std::uint32_t> holes;  // places in entries free for the next blocks
    FlatMap64<std::uint32_t> map;      // key -> its place in entries
    std::size_t hand = 0;              // the next entry the clock looks at
    std::size_t bytes = 0;
    std::uint64_t hits = 0, misses = 0;
    // The entry of key, marked as read; null if absent.
    Entry* hit(std::uint64_t key) {
      const std::uint32_t* at = map.find(key);
      if (!at) return nullptr;
      Entry& e = entries[*at];
      e.referenced = true;
      return &e;
    }
  };

  Shard& shard(std::uint64_t key) { return shards_[shard_of(key)]; }
  void insert(Shard& s, std::uint64_t key, std::vector<std::uint8_t> block);

  std::size_t per_shard_;
  BlockArena arena_;  // declared before the shards, so destroyed after them: it unmaps every buffer
  Shard shards_[kShards];
  // Message of the failed load of the calling thread (set just before load returns an error).
  static thread_local std::string last_error_;
};

// A located probe of a batch: where it reads, and which output it fills.
struct Located {
  int slot;
  std::uint64_t index;
  std::size_t out;
  std::uint64_t at = 0;  // where the entry lies in its file's order (read_sorted fills it in)
};

// The marks (locator.hpp) that a value of segment r carries where r has don't-care entries:
// kDontCare, with kDontCareCaptures where the captures alone decided them; 0 where it has none.
inline int dont_care_marks(const format::SegmentReader& r) noexcept {
  if (!r.dont_care()) return 0;
  return r.dont_care_moves() == format::DontCareMoves::captures ? kDontCare | kDontCareCaptures
                                                                : kDontCare;
}

}  // namespace detail

struct Prober::Impl {
  std::unique_ptr<Database> db;
  std::string game;
  std::unique_ptr<Locator> locator;  // the game's: position text -> slot and index
  // Segments by slot (manifest order), opened on first use.
  struct Slot {
    std::string name;
    std::once_flag once;
    std::atomic<const format::SegmentReader*> reader{nullptr};
    Error error{Errc::internal, ""};
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::map<std::string, int, std::less<>> by_name;
  std::unique_ptr<detail::BlockCache> cache;

  const format::SegmentReader* reader(Slot& s, Value* err) const;
  // Whether slot `slot`'s segment has don't-care entries (docs/FORMAT.md, kDontCare): its values
  // then come from the game's search (Locator::derive), not from the byte alone. The marks its
  // values carry (dont_care_marks), 0 where none.
  int dont_care(int slot) const;
  // The block cache's key of block `block` (in the file's order) of slot `slot`.
  static std::uint64_t cache_key(int slot, std::uint64_t block) {
    return static_cast<std::uint64_t>(slot) << 40 | block;
  }
  Status load(const format::SegmentReader& r, std::uint64_t block,
              std::vector<std::uint8_t>& out) const;
  // What byte() gives: the entry's byte (its class where the value is far, for decoders of one
  // byte), its value (the far value where it has one), or that value marked with kClassOnly
  // where the entry holds only a class and kDontCare where the segment has don't-care entries
  // (probe::Reader's contract, locator.hpp).
  enum class Read { byte, value, marked };
  // Entry `index` of slot `slot`, through the cache.
  Value byte(int slot, std::uint64_t index, Read how = Read::value) const;
  // Where the next byte() of (slot, index) will read, fetched into the processor's cache if its
  // block is cached (a hint: nothing happens otherwise).
  void prefetch(int slot, std::uint64_t index) const;
  // byte() as a probe::Reader, for locators and games that derive values from stored ones; its
  // prefetch() lets a game that reads many entries at once (a search over a position's moves)
  // announce them first.
  struct ByteReader {
    const Impl* impl;
    Value operator()(int slot, std::uint64_t index) const {
      return impl->byte(slot, index, Read::marked);
    }
    void prefetch(int slot, std::uint64_t index) const { impl->prefetch(slot, index); }
  };
  ByteReader byte_reader() const { return {this}; }

  // A located position's value: exact, or the stored byte decoded.
  template <class Decode>
  Value read(const Location& where, Decode&& decode) const {
    if (where.slot == Location::kExact) return detail::success(where.value);
    Value v = byte(where.slot, where.index, Read::byte);
    if (v) v.value = decode(static_cast<std::uint8_t>(v.value));
    return v;
  }
  // Reads every located probe of a batch, each block once; out[todo[i].out] gets its value.
  template <class Decode>
  void read_batch(std::vector<detail::Located>& todo, std::span<Value> out, Decode&& decode) const {
    read_sorted(todo, out);
    for (const auto& t : todo)
      if (out[t.out]) out[t.out].value = decode(static_cast<std::uint8_t>(out[t.out].value));
  }

 private:
  void read_sorted(std::vector<detail::Located>& todo, std::span<Value> out) const;
};

}  // namespace retra::probe
