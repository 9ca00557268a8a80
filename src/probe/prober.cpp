// The probing library's game-blind core (include/retra/probe.hpp): lazily opened segments, one
// sharded cache of decompressed blocks, and positions located by the game's module.
// Thread safety: see src/probe/prober_impl.hpp.
#include "retra/probe.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "src/module/module.hpp"
#include "src/probe/prober_impl.hpp"

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

namespace detail {

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

Errc errc_of(Status s) {
  switch (s) {
    case Status::invalid_argument:
    case Status::wrong_game:
    case Status::null_handle:
    case Status::closed_handle:
      return Errc::invalid_argument;
    case Status::not_found:
      return Errc::not_found;
    case Status::corrupt:
      return Errc::corrupt;
    case Status::io:
      return Errc::io;
    case Status::mismatch:
      return Errc::mismatch;
    case Status::resource:
      return Errc::resource;
    case Status::ok:
    case Status::internal:
      break;
  }
  return Errc::internal;
}

Value wrong_game(std::string_view asked, std::string_view held) {
  return failure(Status::wrong_game, fmt::format("{} probe on a {} database", asked, held));
}

thread_local std::string BlockCache::last_error_;

CacheStats BlockCache::stats() const {
  CacheStats c;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    c.hits += s.hits;
    c.misses += s.misses;
    c.bytes += s.bytes;
  }
  return c;
}

void BlockCache::insert(Shard& s, std::uint64_t key, std::vector<std::uint8_t> block) {
  const std::size_t size = block.size(), footprint = BlockArena::footprint(size);
  if (footprint > per_shard_) return;  // a cache too small to hold a block: read through
  {
    std::lock_guard lock(s.mu);
    if (s.map.find(key)) return;  // another thread loaded it meanwhile
  }
  // Copied into the arena outside the shard's lock (a copy costs a small part of the
  // decompression before it); without memory left there, read through.
  std::uint8_t* data = arena_.allocate(size);
  if (!data) return;
  std::memcpy(data, block.data(), size);
  std::lock_guard lock(s.mu);
  if (s.map.find(key)) {  // loaded meanwhile after all
    arena_.release(data, size);
    return;
  }
  // CLOCK makes room first: the hand clears the flags of the entries read since it last passed
  // and evicts the first entry without one. Each step clears a flag, frees a block or passes a
  // hole, and the new block fits alone (footprint <= per_shard_), so the loop ends.
  while (s.bytes + footprint > per_shard_) {
    if (s.hand >= s.entries.size()) s.hand = 0;
    Entry& e = s.entries[s.hand++];
    if (!e.data) continue;  // a hole
    if (e.referenced) {
      e.referenced = false;
      continue;
    }
    s.bytes -= BlockArena::footprint(e.size);
    arena_.release(e.data, e.size);
    s.map.erase(e.key);
    e.data = nullptr;
    s.holes.push_back(static_cast<std::uint32_t>(s.hand - 1));
  }
  // Into the latest hole: where this insert evicted, the last victim's place, just behind the
  // hand, so a whole turn passes before the hand looks at the new block.
  std::uint32_t at;
  if (!s.holes.empty()) {
    at = s.holes.back();
    s.holes.pop_back();
  } else {
    at = static_cast<std::uint32_t>(s.entries.size());
    s.entries.emplace_back();
  }
  s.entries[at] = {key, data, size, false};
  s.map.insert(key, at);
  s.bytes += footprint;
}

}  // namespace detail

using detail::failure;
using detail::success;

const format::SegmentReader* Prober::Impl::reader(Slot& s, Value* err) const {
  std::call_once(s.once, [&] {
    auto r = db->segment(s.name);
    if (!r) {
      s.error = r.error();
      return;
    }
    s.reader.store(*r, std::memory_order_release);
  });
  const format::SegmentReader* r = s.reader.load(std::memory_order_acquire);
  if (!r) *err = failure(s.error);
  return r;
}

Status Prober::Impl::load(const format::SegmentReader& r, std::uint64_t block,
                          std::vector<std::uint8_t>& out) const {
  // The cache keeps blocks as stored; byte() and read_sorted() put the rules' values back per
  // entry read (SegmentReader::entry_value), which is cheaper than a whole block's rules.
  out.resize(r.raw_bytes(block));
  if (retra::Status st = r.read_stored_block(block, out); !st) {
    cache->set_error(st.error().message());
    return detail::status_of(st.error().code());
  }
  return Status::ok;
}

Value Prober::Impl::byte(int slot, std::uint64_t index, Read how) const {
  Slot& s = *slots[static_cast<std::size_t>(slot)];
  Value err;
  const format::SegmentReader* r = reader(s, &err);
  if (!r) return err;
  if (index >= r->info().entries)
    return failure(Status::invalid_argument,
                   fmt::format("index {} is outside segment '{}' ({} entries)", index, s.name,
                               r->info().entries));
  const std::uint32_t be = r->info().block_entries;
  const std::uint64_t at = r->position(index);  // blocks follow the file's entry order
  const std::uint64_t block = at / be;
  Value v = cache->byte(cache_key(slot, block), static_cast<std::uint32_t>(at % be),
                        [&](std::vector<std::uint8_t>& out) { return load(*r, block, out); });
  if (v.status != Status::ok) return v;
  v.value = r->entry_value(index, static_cast<std::uint8_t>(v.value));
  if (how == Read::byte) return v;
  if (const auto far = r->far_value(index)) return success(static_cast<int>(*far));
  if (how == Read::marked && r->class_only(index)) v.value |= kClassOnly;
  if (how == Read::marked) v.value |= detail::dont_care_marks(*r);
  return v;
}

void Prober::Impl::prefetch(int slot, std::uint64_t index) const {
  Slot& s = *slots[static_cast<std::size_t>(slot)];
  const format::SegmentReader* r = s.reader.load(std::memory_order_acquire);
  if (!r || index >= r->info().entries) return;  // not open yet: byte() will open it
  const std::uint32_t be = r->info().block_entries;
  const std::uint64_t at = r->position(index);
  cache->prefetch(cache_key(slot, at / be), static_cast<std::uint32_t>(at % be));
}

void Prober::Impl::read_sorted(std::vector<detail::Located>& todo, std::span<Value> out) const {
  // Sorted by where the entries lie in their files, so that each block is read once.
  for (auto& t : todo) {
    Value ignored;
    const format::SegmentReader* r = reader(*slots[static_cast<std::size_t>(t.slot)], &ignored);
    t.at = r && t.index < r->info().entries ? r->position(t.index) : t.index;
  }
  std::sort(todo.begin(), todo.end(), [](const detail::Located& a, const detail::Located& b) {
    return a.slot != b.slot ? a.slot < b.slot : a.at < b.at;
  });
  std::vector<std::uint32_t> offsets;
  std::vector<Value*> dest;
  for (std::size_t i = 0; i < todo.size();) {
    Slot& s = *slots[static_cast<std::size_t>(todo[i].slot)];
    Value err;
    const format::SegmentReader* r = reader(s, &err);
    if (!r) {
      for (; i < todo.size() && &s == slots[static_cast<std::size_t>(todo[i].slot)].get(); ++i)
        out[todo[i].out] = err;
      continue;
    }
    const std::uint32_t be = r->info().block_entries;
    const std::uint64_t block = todo[i].at / be;
    offsets.clear();
    dest.clear();
    std::size_t j = i;
    for (; j < todo.size() && todo[j].slot == todo[i].slot && todo[j].at / be == block; ++j) {
      if (todo[j].index >= r->info().entries) {
        out[todo[j].out] =
            failure(Status::invalid_argument,
                    fmt::format("index {} is outside segment '{}'", todo[j].index, s.name));
        continue;
      }
      offsets.push_back(static_cast<std::uint32_t>(todo[j].at % be));
      dest.push_back(&out[todo[j].out]);
    }
    if (!offsets.empty())
      cache->bytes(cache_key(todo[i].slot, block), offsets, dest,
                   [&](std::vector<std::uint8_t>& b) { return load(*r, block, b); });
    if (r->rules_filled())
      for (std::size_t k = i; k < j; ++k) {
        Value& v = out[todo[k].out];
        if (v.status == Status::ok)
          v.value = r->entry_value(todo[k].index, static_cast<std::uint8_t>(v.value));
      }
    i = j;
  }
}

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
  auto found = module_of(**db);
  if (!found) return fail(failure(found.error()));
  const GameModule* module = *found;
  std::vector<std::string> names;
  for (const auto& rec : (*db)->manifest().segments) {
    auto slot = std::make_unique<Impl::Slot>();
    slot->name = rec.name;
    impl->by_name[rec.name] = static_cast<int>(impl->slots.size());
    impl->slots.push_back(std::move(slot));
    names.push_back(rec.name);
  }
  impl->locator = module->locator(names);
  impl->db = std::move(*db);
  impl->cache = std::make_unique<detail::BlockCache>(opt.cache_bytes);
  if (error) *error = Value{};
  return std::unique_ptr<Prober>(new Prober(std::move(impl)));
}

std::string_view Prober::game() const noexcept { return impl_->game; }

Value Locator::derive(std::string_view, const Reader&) const {
  return detail::failure(Status::internal, "this game derives no values");
}

int Prober::Impl::dont_care(int slot) const {
  Value err;
  const format::SegmentReader* r = reader(*slots[static_cast<std::size_t>(slot)], &err);
  return r ? detail::dont_care_marks(*r) : 0;  // an error comes back from the read that follows
}

Value Prober::probe(std::string_view position) const {
  Location where;
  Value v = impl_->locator->locate(position, &where);
  if (!v) return v;
  // Where the stored value may be worse than the truth, the game's search finds it.
  if (where.slot == Location::kDerived || (where.slot >= 0 && impl_->dont_care(where.slot)))
    return impl_->locator->derive(position, impl_->byte_reader());
  return impl_->read(where, [&](std::uint8_t b) { return impl_->locator->decode(b); });
}

void Prober::probe_batch(std::span<const std::string_view> positions, std::span<Value> out) const {
  const std::size_t n = std::min(positions.size(), out.size());
  std::vector<detail::Located> todo;
  todo.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Location where;
    out[i] = impl_->locator->locate(positions[i], &where);
    if (!out[i]) continue;
    if (where.slot == Location::kExact)
      out[i] = success(where.value);
    else if (where.slot == Location::kDerived || impl_->dont_care(where.slot))
      out[i] = impl_->locator->derive(positions[i], impl_->byte_reader());
    else
      todo.push_back({where.slot, where.index, i});
  }
  impl_->read_batch(todo, out, [&](std::uint8_t b) { return impl_->locator->decode(b); });
}

Coverage Prober::coverage() const { return impl_->locator->coverage(); }

Value Prober::stored(std::string_view segment, std::uint64_t index) const {
  auto it = impl_->by_name.find(segment);
  if (it == impl_->by_name.end())
    return failure(Status::not_found, fmt::format("the database has no segment '{}'", segment));
  return impl_->byte(it->second, index);
}

CacheStats Prober::cache_stats() const noexcept { return impl_->cache->stats(); }

}  // namespace retra::probe
