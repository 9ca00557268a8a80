// Chess endgame tables as a retra::Game. One table per canonical material (the stronger side
// white), split into segments by the pawns' ranks, so that every pawn move and every capture
// converts into a segment built earlier. Both sides to move share a segment (index = side * size +
// placement index). Each table has two stored segments: its distance to zeroing under the 50-move
// rule (value kind dtz, which also gives the five WDL50 classes) with ids [0, n), and, when asked
// for, its distance to mate (kind dtm) with ids [n, 2n). A double pawn push after which the
// opponent can capture en passant leads to a virtual child whose value combines the stored one
// with the en-passant captures (positions with an en-passant right are never stored).
// Thread safety: a Game is immutable after closure() but for own_kernel's cache of pushes
// (behind a mutex); share it freely.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/own_kernel.hpp"
#include "retra/error.hpp"
#include "retra/game.hpp"
#include "src/games/chess/board.hpp"
#include "src/games/chess/index.hpp"
#include "src/games/chess/material.hpp"
#include "src/games/chess/values.hpp"
#include "src/memory.hpp"

namespace retra::chess {

struct Position {
  std::array<std::uint8_t, kMaxPieces> sq{};  // square of each slot of the segment's layout
  std::uint64_t index = 0;                    // where unrank() found it (for next())
  Color side = white;
  bool valid = true;  // a canonical placement whose side not to move is not in check
};

// How a converting move's child is laid out in its target segment.
struct Transition {
  int target = -1;    // table id (the dtz segment); -1: none
  bool flip = false;  // the child's material is the colour-flipped table
  // For each slot of the target: the parent's slot its piece comes from (the mover's piece at its
  // new square), or -1 for the promoted piece.
  std::array<std::int8_t, kMaxPieces> from{};
};

struct Table {
  TableKey key;
  std::string name;
  std::unique_ptr<Indexer> indexer;
  std::vector<Slot> slots;
  std::vector<std::uint8_t> codes;  // board code of each slot
  int n = 0, bk_slot = 0;
  // Transitions of the converting moves, by the slots involved.
  std::vector<Transition> capture;                    // [victim]: a piece (not a pawn) captures
  std::vector<std::array<Transition, 2>> push;        // [pawn][0: one step, 1: two steps]
  std::vector<std::vector<Transition>> pawn_capture;  // [pawn][victim]
  std::vector<std::array<Transition, 4>> promote;     // [pawn][Q R B N]
  std::vector<std::vector<std::array<Transition, 4>>> capture_promote;  // [pawn][victim][piece]
};

class Game {
 public:
  using Position = chess::Position;
  using SegmentId = int;
  static constexpr std::string_view kName = "chess";
  static constexpr std::string_view kVariant = "fide-50";
  static constexpr std::string_view kIndexer = "chess-sym-v2";
  static constexpr std::string_view kValueEncoding = "dtz50-dtm1-u8";  // docs/FORMAT.md
  static constexpr ValueKind kValueKind = ValueKind::dtz;
  using Kinds = ValueKinds<ValueKind::dtz, ValueKind::dtm>;
  // K + 4 Q (6 pieces): 8 + 4 x 27 non-converting moves; more queens need wider counters.
  static constexpr int kMaxMoves = 116;
  // Distance to mate without a king capture: a byte is plies + 1 (values.hpp), up to 254 plies.
  static constexpr int kMatedCode = kMatedDtm;
  // Virtual segments: double pushes after which en passant is possible, and captures that leave
  // only the kings (a draw; no table holds it).
  static constexpr int kEnPassant = -1, kKingsOnly = -2;
  static bool virtual_segment(int s) { return s < 0; }

  // The given tables (all their pawn profiles) and every table their moves lead to, in an order
  // where dependencies come first; with_dtm adds the distance-to-mate segments.
  static Result<std::shared_ptr<const Game>> closure(const std::vector<Material>& targets,
                                                     bool with_dtm);

  int tables() const { return static_cast<int>(tables_.size()); }
  int segments() const { return with_dtm_ ? 2 * tables() : tables(); }
  // Segment s < tables() is a table's DTZ, s >= tables() its DTM (a subtraction, not a modulo:
  // this runs for every move of every position the kernels touch).
  const Table& table(int s) const {
    const int n = tables();
    return tables_[static_cast<std::size_t>(s < n ? s : s - n)];
  }
  bool is_dtm(int s) const { return s >= tables(); }
  ValueKind value_kind(int s) const { return is_dtm(s) ? ValueKind::dtm : ValueKind::dtz; }
  int find(const std::string& segment_name) const;  // -1 if absent
  std::string segment_name(int s) const {
    return is_dtm(s) ? table(s).name + ".dtm" : table(s).name;
  }
  std::vector<int> dependencies(int s) const;

  std::uint64_t segment_size(int s) const { return 2 * table(s).indexer->size(); }
  // Side to move, then the indexer's digits (the writer may store them in another order).
  std::vector<std::uint64_t> index_digits(int s) const {
    std::vector<std::uint64_t> d{2};
    const auto r = table(s).indexer->radices();
    d.insert(d.end(), r.begin(), r.end());
    return d;
  }
  // Class halves (include/retra/game.hpp): a DTZ segment may keep one side to move's values as
  // WDL50 classes, the distances found by a one-move search (every non-converting move hands
  // the move to the other side; a conversion counts only by its child's class). DTM segments
  // keep both sides: a capture's DTM depends on its child's distance.
  bool drops_distances(int s) const { return !is_dtm(s); }
  int class_of(int, int v) const { return dtz_class_byte(v); }
  Position unrank(int s, std::uint64_t i) const;
  std::uint64_t rank(int s, const Position& p) const;
  bool next(int s, Position& p) const;
  bool is_valid(int, const Position& p) const { return p.valid; }
  int no_move_value(int s, const Position& p) const;  // mate: 2 (dtz), 1 (dtm); stalemate: 0

  Board board(int s, const Position& p) const;
  // A position of segment s from a board in the table's orientation.
  Result<Position> from_board(int s, const Board& b) const;

  template <class F>
  int for_each_move(int s, const Position& p, F&& f) const;
  template <class F>
  MoveCount for_each_conversion(int s, const Position& p, F&& f) const;
  template <class F>
  void for_each_unmove(int s, const Position& q, F&& f) const;
  // The value of the virtual child of an en-passant-enabling double push, combining the stored
  // value with every legal en-passant capture (from the child's mover's view).
  template <class Lower>
  int virtual_value(int s, std::uint64_t packed, const Lower& lower) const;

  // The game's own kernel (sweep.hpp) for the DTZ and DTM segments of 3-5 piece tables, with or
  // without pawns, whose sub-tables and pawn moves it reads through lower (a pawn alone of its
  // colour, its pushes from what the sweep kept of the segment a rank, or two, ahead, where it
  // built that one in this process); declines 6-piece tables, tables whose distances pass 254
  // plies (or whose sub-table's DTM does, which a capture would read as illegal), and tables
  // whose arrays need more than limits.spare_bytes.
  std::optional<Result<kernels::OwnKernelRun>> own_kernel(
      int s, std::span<std::uint8_t> values, const kernels::Lower<int>& lower,
      const kernels::KernelOptions& options, const kernels::OwnKernelLimits& limits) const;

  bool packable(int) const { return true; }
  // Every slot, not only the segment's n: no table lookup and no loop bound per parent (the
  // kernels pack each predecessor). unpack reads only n slots, so whatever a slot past n holds
  // never matters; 1 + 6 * kMaxPieces bits stay clear of the kernels' flag bit.
  std::uint64_t pack(int, const Position& p) const {
    std::uint64_t bits = p.side;
    for (int i = 0; i < kMaxPieces; ++i) bits |= std::uint64_t{p.sq[i]} << (1 + 6 * i);
    return bits;
  }
  Position unpack(int s, std::uint64_t bits) const {
    Position p;
    p.side = Color(bits & 1);
    for (int i = 0; i < table(s).n; ++i)
      p.sq[i] = static_cast<std::uint8_t>((bits >> (1 + 6 * i)) & 63);
    return p;
  }

 private:
  friend struct MoveGen;
  std::vector<Table> tables_;
  std::map<std::string, int, std::less<>> by_name_;
  bool with_dtm_ = false;
  // What the sweep kept of the pawn segments it built, by 2 * segment id + the pushing pawns'
  // colour, for the segments a rank behind those pawns (own_kernel, sweep.cpp): what a single
  // push into each position of the side not to move leads to (and a double push, from a segment
  // two ranks behind). The last of an entry's readers takes it out; a reader that never comes
  // (one declined before reading) leaves it, so the map's bytes count against the memory the
  // plan leaves, and the oldest entries make room (pushes_room). A mutex guards the map, since
  // a build may run segments at once.
  struct KeptPushes {
    std::shared_ptr<const LargeArray<std::uint8_t>> bytes;
    int readers = 0;        // the segments still to read them
    std::uint64_t age = 0;  // the order kept in
  };
  // Drops the oldest entries until `need` bytes and what the map holds fit in `spare` bytes;
  // whether they do, and, in held and dropped, the map's bytes after and the entries dropped.
  bool pushes_room(std::uint64_t need, std::uint64_t spare, std::uint64_t* held = nullptr,
                   int* dropped = nullptr) const;
  mutable std::mutex pushes_mutex_;
  mutable std::map<int, KeptPushes> pushes_;
  mutable std::uint64_t pushes_age_ = 0;
};

}  // namespace retra::chess

#include "src/games/chess/movegen.inl"
