// Values of finished segments that later builds read through their converting moves: kept in
// memory after they are built, loaded from disk when needed, or read block-wise through the
// segment reader's cache when the memory plan says they do not fit (FinishedStore); and the
// kernels' view of them for one segment's build (Lookup). Nothing here knows a game.
// Thread safety: FinishedStore's members lock; a Lookup is filled before its kernel starts and is
// then read by all the kernel's threads (a failed block read is recorded under a lock, because the
// kernel cannot stop mid-loop, and reported after the kernel).
#pragma once

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "retra/error.hpp"
#include "retra/game.hpp"
#include "src/database.hpp"
#include "src/memory.hpp"

namespace retra::builder {

using Values = LargeArray<std::uint8_t>;

class FinishedStore {
 public:
  FinishedStore(const Database& db, int segments, int threads)
      : db_(db), threads_(threads), mem_(static_cast<std::size_t>(segments)) {}

  // Segment s in memory: kept since its build, or decompressed from disk now (once).
  Result<std::shared_ptr<const Values>> load(int s, const std::string& name, std::uint64_t size) {
    std::lock_guard lock(mu_);
    if (auto& m = mem_[static_cast<std::size_t>(s)]) return std::shared_ptr<const Values>(m);
    auto reader = this->reader(name);
    if (!reader) return std::move(reader).error();
    auto arr = Values::allocate(size);
    if (!arr) return std::move(arr).error();
    // Kernels read these values only through legal moves, never at a hole of the index: the
    // holes may keep their filler, which saves a pass of the game's rules over every entry of
    // every table a segment's conversions read.
    RETRA_TRY((*reader)->read_all(arr->span(), threads_, format::Exact::reached_by_moves));
    (*reader)->drop_resident_pages();  // decoded now: the compressed pages need not stay
    auto p = std::make_shared<Values>(std::move(*arr));
    mem_[static_cast<std::size_t>(s)] = p;
    return std::shared_ptr<const Values>(p);
  }
  // A finished segment's reader; an error where its bytes are not all values (don't-care
  // entries), which a build's conversions cannot use.
  Result<const format::SegmentReader*> reader(const std::string& name) const {
    auto r = db_.segment(name);
    if (!r) return r;
    RETRA_TRY(format::require_exact_bytes(**r, "a build that converts into it"));
    return r;
  }
  void keep(int s, Values values) {
    std::lock_guard lock(mu_);
    mem_[static_cast<std::size_t>(s)] = std::make_shared<Values>(std::move(values));
  }
  // Forgets segment s (a running build that holds it keeps it alive until it finishes).
  void drop(int s) {
    std::lock_guard lock(mu_);
    mem_[static_cast<std::size_t>(s)].reset();
  }
  void drop_all() {
    std::lock_guard lock(mu_);
    for (auto& m : mem_) m.reset();
  }

 private:
  const Database& db_;
  int threads_;
  std::mutex mu_;
  std::vector<std::shared_ptr<Values>> mem_;
};

// lower(segment, index) and lower.prefetch(segment, index) for the kernels: the decoded value of
// a position in a finished segment of kind K (the kind of the segment being built: conversions
// stay within one kind). Virtual segments (the rules give their values) answer with the index
// itself, or with what the game computes from other stored values.
template <Game G, ValueKind K>
class Lookup {
  using Seg = typename G::SegmentId;

 public:
  Lookup(const G& g, int segments)
      : g_(g),
        mem_(static_cast<std::size_t>(segments), nullptr),
        readers_(static_cast<std::size_t>(segments), nullptr) {}
  void use(int s, std::shared_ptr<const Values> v) {
    mem_[static_cast<std::size_t>(s)] = v->data();
    hold_.push_back(std::move(v));
  }
  void use(int s, const format::SegmentReader* r) { readers_[static_cast<std::size_t>(s)] = r; }
  // Values the caller owns and keeps alive while the kernel runs (`verify --full`).
  void use(int s, const std::uint8_t* values) { mem_[static_cast<std::size_t>(s)] = values; }

  // The hot path: one predictable branch when everything is in memory.
  int operator()(const Seg& s, std::uint64_t index) const {
    if constexpr (HasVirtualSegments<G>) {
      if (G::virtual_segment(s)) {
        if constexpr (HasVirtualValues<G>)
          return g_.virtual_value(s, index, *this);
        else
          return static_cast<int>(index);
      }
    }
    if (const std::uint8_t* d = mem_[static_cast<std::size_t>(s)]) return decode_value<K>(d[index]);
    // Kernels follow legal moves only (Exact::reached_by_moves, as FinishedStore::load reads).
    auto v = readers_[static_cast<std::size_t>(s)]->byte_at(index, format::Exact::reached_by_moves);
    if (v) return decode_value<K>(*v);
    std::lock_guard lock(error_mu_);
    if (!error_) error_ = v.error();
    return 0;
  }
  void prefetch(const Seg& s, std::uint64_t index) const {
    if constexpr (HasVirtualSegments<G>)
      if (G::virtual_segment(s)) return;
    if (const std::uint8_t* d = mem_[static_cast<std::size_t>(s)]) __builtin_prefetch(d + index);
  }
  // Whether some finished segment is read block-wise from disk and has more blocks than its
  // reader's cache holds (the kernel then sorts its lookups so that each block is decoded once
  // per batch; a file whose blocks all stay cached needs no order).
  bool block_wise() const {
    return std::any_of(readers_.begin(), readers_.end(), [](const format::SegmentReader* r) {
      return r && !r->caches_every_block();
    });
  }
  // The block of s's file that holds index, the sort key of block-wise lookups; kAnyOrder for
  // segments in memory, virtual ones and files whose blocks all stay cached, whose lookups
  // the kernel leaves unsorted. Files store entries in their own order (EntryOrder), so sorting
  // by index would visit a permuted file's blocks back and forth, each visit a decode once the
  // reader's cache has let the block go.
  static constexpr std::uint32_t kAnyOrder = UINT32_MAX;
  std::uint32_t block_of(const Seg& s, std::uint64_t index) const {
    if constexpr (HasVirtualSegments<G>)
      if (G::virtual_segment(s)) return kAnyOrder;
    const format::SegmentReader* r = readers_[static_cast<std::size_t>(s)];
    if (!r || r->caches_every_block()) return kAnyOrder;
    assert(r->info().blocks() < kAnyOrder);
    return static_cast<std::uint32_t>(r->position(index) / r->info().block_entries);
  }
  // The first failed block read of the kernel's run, if any.
  Status take_error() {
    std::lock_guard lock(error_mu_);
    if (error_) return *std::exchange(error_, std::nullopt);
    return {};
  }

 private:
  const G& g_;
  std::vector<const std::uint8_t*> mem_;
  std::vector<const format::SegmentReader*> readers_;
  std::vector<std::shared_ptr<const Values>> hold_;
  mutable std::mutex error_mu_;
  mutable std::optional<Error> error_;
};

}  // namespace retra::builder
