// The one concept through which a game plugs into retra's kernels and drivers. A game is an
// immutable object (thread-safe to share) that defines positions, segments, a bijective index per
// segment, and moves. Members marked OPTIONAL unlock faster paths, detected with `if constexpr`.
// Thread safety: the concept itself is compile-time only.
//
// REQUIRED (the kernels)
//   Position, SegmentId          value types; SegmentId names one database segment (a stone
//                                count, a material signature's place in a closure, ...).
//   kName                        the game's name in the registry, manifests and file names.
//   kVariant, kIndexer,          what identifies a database's contents, written into every
//   kValueEncoding               manifest and segment header: the rules variant, the index scheme
//                                and the byte encoding of the values (one spelling, here only).
//   kValueKind                   what a value means (ValueKind below).
//   segment_size(s)              number of indices in segment s; the index is a bijection between
//                                the positions of s and [0, segment_size(s)).
//   unrank(s, i), rank(s, p)     the bijection and its inverse.
//   next(s, p)                   advance p to the position with the next index; false at the end.
//                                Kernels walk index ranges with it instead of unranking each index.
//   for_each_move(s, p, f)       calls f(const Child<SegmentId>&) once per legal move and returns
//                                the number of legal moves. A move that leaves the segment (a
//                                capture, a conversion) has converts = true.
//   no_move_value(s, p)          the value of p when it has no legal move.
//
// REQUIRED (the build and verify drivers, concept BuildableGame)
//   segments()                   SegmentIds are the integers [0, segments()).
//   dependencies(s)              the segments converting moves of s lead to, which must be
//                                finished first (build order, memory planning, verification).
//
// OPTIONAL
//   kMaxMoves                    an upper bound on the non-converting moves of any position. The
//                                backward kernel counts unknown children in 7 bits when this is at
//                                most 126 (the default when absent) and in 15 bits otherwise.
//   for_each_quiet_child(s, p, f)  f(child_index) for the non-converting moves only, cheaper than
//                                  for_each_move when the kernel needs only those.
//   for_each_conversion(s, p, f)   f(const Child&) for the converting moves only; returns
//                                  MoveCount{legal, quiet}. Kernels that only count the
//                                  non-converting moves (initialization) skip ranking them.
//   for_each_unmove(s, q, f)       f(parent_index, parent) for every (parent, move) pair inside
//                                  segment s whose non-converting move leads to q: the
//                                  predecessors. Needed by the backward kernel. Contract: over all
//                                  q of the segment, each parent is reported exactly as often as it
//                                  has non-converting legal moves (the games' tests check this).
//   terminal_value(s, p)           std::optional<int>: a value fixed by the rules without looking
//                                  at moves (a mover that can capture the king: value 1).
//   score_bound(s)                 score games: the largest |value| in segment s.
//   is_valid(s, p)                 false for indices that are holes of the index (pieces
//                                  overlapping, mirror duplicates); kernels store 0 and skip them.
//                                  With terminal_value these are the "rule entries" a segment
//                                  file may store as filler (docs/FORMAT.md, "Rule entries";
//                                  src/module/entry_rules.hpp), so both must depend on p only.
//   virtual_segment(s)             static; true for a segment that is never stored because the
//                                  rules give its values: a converting move into it reports the
//                                  child's value itself as Child::index, or, with
//   virtual_value(s, i, lower)     the game computes the value of virtual child i from stored
//                                  values it reads through lower(segment, index) (a child whose
//                                  mover has extra moves that positions do not record).
//   Kinds, value_kind(s)           a game that stores several value kinds lists them
//                                  (ValueKinds<...>) and says which one segment s holds (its
//                                  converting moves stay within segments of that kind);
//                                  kValueKind is then the first kind.
//   kMatedCode                     distance-to-mate games: the byte of a mated position, 2 (the
//                                  default: Fang's encoding, where 1 is capturing the king) or 1
//                                  (games without a king capture: every byte is plies + 1, losses
//                                  odd, and a byte holds up to 254 plies).
//   kDtcFallback                   distance-to-mate games: true when a distance that overflows a
//                                  byte may be stored as distance to conversion instead (Fang
//                                  3.3), and --metric dtc may ask for it everywhere.
//   index_digits(s)                std::vector<std::uint64_t>: the index of segment s as a
//                                  mixed-radix number, most significant digit first (side to
//                                  move, piece groups, ...; their product is segment_size(s)).
//                                  The segment writer may then store the entries with the digits
//                                  in another order of significance, the one that compresses best
//                                  (docs/FORMAT.md, "Entry order"); values and indices do not
//                                  change.
//   drops_distances(s),            a segment whose first index digit is 2 (index_digits: the
//   class_of(s, v)                 side to move) may store one half of its entries as classes:
//                                  class_of(s, v) is the stored byte that stands for value v
//                                  there (a win for a win in n plies). The build chooses the half
//                                  that compresses better (docs/FORMAT.md, "Class halves"); the
//                                  verifier and the game's probe compute such an entry's value
//                                  from its moves. Contract (the game's tests check it): every
//                                  non-converting move leads into the other half, and the value
//                                  of a position depends on the children its converting moves
//                                  reach only through class_of of their values.
//   packable(s), pack(s, p),       a position of segment s in 63 bits and back. When packable(s),
//   unpack(s, bits)                the backward kernel keeps positions instead of indices in its
//                                  frontiers and never has to unrank.
//   own_kernel(s, values, lower,   the game's own kernel for the segments it builds faster than
//   options, limits)               the generic ones (kernels/own_kernel.hpp, HasOwnKernel): it
//                                  fills values from lower(segment, index) of the finished
//                                  segments, or declines (std::nullopt) and the generic kernel
//                                  runs. The build driver asks it first, in memory and on one
//                                  machine only; --tune own_kernel=0 turns it off.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace retra {

enum class ValueKind {
  score,  // int8: a number -n..n from the mover's view; endless play is worth 0
  dtm,    // uint8, Fang's Table 1: 0 draw, odd n: mover wins in n plies, even n: loses in n plies,
          // 1 = the mover can capture the king now, 255 reserved; with kMatedCode 1 the parities
          // swap: n = plies + 1, odd n loses (1: mated), even n wins, up to 255
  wdl,    // uint8: 0 draw, 1 win, 2 loss for the mover
  dtz,    // uint8, distance to zeroing under a 100-ply horizon (the 50-move rule): 0 draw,
          // 2d + 1: the mover wins and the next zeroing move (a conversion, or mate) comes in d
          // plies; 2d + 2: it loses so (d = 0: it is mated). d > 100: the horizon makes the
          // result a draw (a cursed win, a blessed loss); a conversion into a decided position
          // starts at d = 1, or at d = 101 when the position it leads to is decided beyond the
          // horizon. 1 is unused. d >= 127 does not fit: the byte holds 253 / 254 and the
          // kernel lists the exact code (BackwardStats::far; the segment's far section).
};

// A stored byte as a number: score values are signed, the other kinds are not.
template <ValueKind K>
constexpr int decode_value(std::uint8_t b) {
  if constexpr (K == ValueKind::score)
    return static_cast<std::int8_t>(b);
  else
    return b;
}
constexpr int decode_value(ValueKind k, std::uint8_t b) {
  return k == ValueKind::score ? static_cast<std::int8_t>(b) : b;
}

// The value kinds a game stores when it stores several (Game::Kinds, with value_kind(s)).
template <ValueKind... Ks>
struct ValueKinds {};

// A move as the kernels see it: where the child lives and what the move itself earns.
template <class SegmentId>
struct Child {
  SegmentId segment;    // the child's segment (the position's own one unless converts)
  std::uint64_t index;  // the child's index in that segment
  int gain;             // score games: what the mover earns on the move itself (stones captured)
  bool converts;        // the move leaves the segment
};

struct MoveCount {
  int legal = 0;  // all legal moves
  int quiet = 0;  // the non-converting ones
};

namespace archetype {
template <class SegmentId>
struct ChildSink {
  void operator()(const Child<SegmentId>&) const {}
};
struct IndexSink {
  void operator()(std::uint64_t) const {}
};
template <class Position>
struct UnmoveSink {
  void operator()(std::uint64_t, const Position&) const {}
};
}  // namespace archetype

template <class G>
concept Game = requires(const G& g, const typename G::Position& cp, typename G::Position& p,
                        const typename G::SegmentId& s, std::uint64_t i) {
  typename G::Position;
  typename G::SegmentId;
  { G::kName } -> std::convertible_to<std::string_view>;
  { G::kVariant } -> std::convertible_to<std::string_view>;
  { G::kIndexer } -> std::convertible_to<std::string_view>;
  { G::kValueEncoding } -> std::convertible_to<std::string_view>;
  { G::kValueKind } -> std::convertible_to<ValueKind>;
  { g.segment_size(s) } -> std::same_as<std::uint64_t>;
  { g.unrank(s, i) } -> std::same_as<typename G::Position>;
  { g.rank(s, cp) } -> std::same_as<std::uint64_t>;
  { g.next(s, p) } -> std::same_as<bool>;
  { g.for_each_move(s, cp, archetype::ChildSink<typename G::SegmentId>{}) } -> std::same_as<int>;
  { g.no_move_value(s, cp) } -> std::same_as<int>;
};

// What the build and verify drivers need beyond the kernels: dense segment ids and the
// dependency graph.
template <class G>
concept BuildableGame = Game<G> && std::convertible_to<typename G::SegmentId, int> &&
    requires(const G& g, const typename G::SegmentId& s) {
  { g.segments() } -> std::convertible_to<int>;
  { g.dependencies(s) } -> std::same_as<std::vector<typename G::SegmentId>>;
};

template <class G>
concept HasQuietChildren = Game<G> &&
    requires(const G& g, const typename G::Position& cp, const typename G::SegmentId& s) {
  g.for_each_quiet_child(s, cp, archetype::IndexSink{});
};

template <class G>
concept HasConversions = Game<G> &&
    requires(const G& g, const typename G::Position& cp, const typename G::SegmentId& s) {
  {
    g.for_each_conversion(s, cp, archetype::ChildSink<typename G::SegmentId>{})
    } -> std::same_as<MoveCount>;
};

template <class G>
concept HasUnmoves = Game<G> &&
    requires(const G& g, const typename G::Position& cp, const typename G::SegmentId& s) {
  g.for_each_unmove(s, cp, archetype::UnmoveSink<typename G::Position>{});
};

template <class G>
concept HasValidity = Game<G> &&
    requires(const G& g, const typename G::Position& cp, const typename G::SegmentId& s) {
  { g.is_valid(s, cp) } -> std::same_as<bool>;
};

template <class G>
concept HasPacking = Game<G> && requires(const G& g, const typename G::Position& cp,
                                         const typename G::SegmentId& s, std::uint64_t bits) {
  { g.packable(s) } -> std::same_as<bool>;
  { g.pack(s, cp) } -> std::same_as<std::uint64_t>;
  { g.unpack(s, bits) } -> std::same_as<typename G::Position>;
};

template <class G>
concept HasIndexDigits = Game<G> && requires(const G& g, const typename G::SegmentId& s) {
  { g.index_digits(s) } -> std::convertible_to<std::vector<std::uint64_t>>;
};

template <class G>
concept HasClassHalves = HasIndexDigits<G> &&
    requires(const G& g, const typename G::SegmentId& s, int v) {
  { g.drops_distances(s) } -> std::same_as<bool>;
  { g.class_of(s, v) } -> std::same_as<int>;
};

template <class G>
concept HasTerminalValue = Game<G> &&
    requires(const G& g, const typename G::Position& cp, const typename G::SegmentId& s) {
  { g.terminal_value(s, cp) } -> std::convertible_to<std::optional<int>>;
};

template <class G>
concept HasVirtualSegments = Game<G> && requires(const typename G::SegmentId& s) {
  { G::virtual_segment(s) } -> std::same_as<bool>;
};

namespace archetype {
template <class SegmentId>
struct Lower {
  int operator()(const SegmentId&, std::uint64_t) const { return 0; }
};
}  // namespace archetype

template <class G>
concept HasVirtualValues = HasVirtualSegments<G> &&
    requires(const G& g, const typename G::SegmentId& s, std::uint64_t i) {
  { g.virtual_value(s, i, archetype::Lower<typename G::SegmentId>{}) } -> std::convertible_to<int>;
};

template <class G>
concept HasSegmentKinds = Game<G> && requires(const G& g, const typename G::SegmentId& s) {
  typename G::Kinds;
  { g.value_kind(s) } -> std::same_as<ValueKind>;
};

namespace detail {
template <class F, ValueKind K, ValueKind... Ks>
auto dispatch_kind(ValueKind k, F& f, ValueKinds<K, Ks...>) {
  if constexpr (sizeof...(Ks) == 0) {
    return f.template operator()<K>();
  } else {
    if (k == K) return f.template operator()<K>();
    return dispatch_kind(k, f, ValueKinds<Ks...>{});
  }
}
}  // namespace detail

// Calls f.template operator()<K>() with K the value kind k, among the kinds game G stores (the
// one kind of a game that stores one), so that code templated on the kind runs for segments of
// any kind.
template <class G, class F>
auto with_value_kind(ValueKind k, F&& f) {
  if constexpr (HasSegmentKinds<G>) {
    return detail::dispatch_kind(k, f, typename G::Kinds{});
  } else {
    (void)k;
    return f.template operator()<G::kValueKind>();
  }
}

// The value kind of segment s.
template <Game G>
ValueKind value_kind_of(const G& g, const typename G::SegmentId& s) {
  if constexpr (HasSegmentKinds<G>)
    return g.value_kind(s);
  else
    return G::kValueKind;
}

}  // namespace retra
