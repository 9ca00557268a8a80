// The probing library's C++ API: open a database directory, probe positions of its game by value,
// one at a time or in batches, from any number of threads. Segments are opened on first use and
// memory-mapped; decompressed blocks live in one cache per Prober whose size the caller sets.
// probe() takes a position of any game as text (the notation `retra probe` takes); the typed
// entry points below it skip the parsing for engines that hold a board already.
// This header needs nothing but the standard library (link retra::retra, see docs/PROBING.md).
// Thread safety: every const member may be called concurrently; open/destruction are not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace retra::probe {

// Error classes of the library; the C ABI returns the same numbers (retra.h).
enum class Status : int {
  ok = 0,
  invalid_argument = 1,  // malformed position, wrong stone count, bad option
  not_found = 2,         // no such directory, or the position's segment is not in the database
  corrupt = 3,           // a checksum failed: the file is damaged
  io = 4,                // the operating system refused a read
  mismatch = 5,          // the directory holds another game's database, or a foreign file
  resource = 6,          // out of memory
  internal = 7,          // a bug: please report it
  null_handle = 8,       // C ABI: a null handle or output pointer
  wrong_game = 9,        // a probe for another game than the database holds
  closed_handle = 10,    // C ABI: the handle was closed
};
std::string_view status_name(Status s) noexcept;

// The outcome of one probe: a value, or a status with a message that says what to do.
struct Value {
  Status status = Status::ok;
  int value = 0;        // the value in the game's terms (docs/PROBING.md lists them per game)
  std::string message;  // empty when ok
  explicit operator bool() const noexcept { return status == Status::ok; }
};

// What a database holds, in the game's sizes (stones, pieces, ...).
struct Coverage {
  std::string units;  // "stones", "pieces"
  int largest = -1;   // the largest size of any segment held (Fathom's TB_LARGEST); -1: none
  int complete = -1;  // every position of at most this size has a value here; -1: not even 0
  std::size_t segments = 0;
};

struct Options {
  std::size_t cache_bytes = std::size_t{64} << 20;  // decompressed blocks kept, all segments
};

// Chess by bitboards, as engines hold a position (Fathom's convention): bit k of each mask is
// square k, a1 = 0 .. h8 = 63; rule50 is the half-move clock, ep the en-passant square (0: none).
struct ChessBoard {
  std::uint64_t white = 0, black = 0;
  std::uint64_t kings = 0, queens = 0, rooks = 0, bishops = 0, knights = 0, pawns = 0;
  unsigned rule50 = 0;
  unsigned ep = 0;
  bool white_to_move = true;
};

// A chess position's values from the side to move's view (docs/CHESS.md): WDL50 (-2 loss, -1
// blessed loss, 0 draw, 1 cursed win, 2 win, with the 50-move counter taken as 0), DTZ in plies
// (Syzygy's convention, exact), DTM in plies (when the database holds it), and the outcome under
// the position's own 50-move counter.
struct ChessValue {
  Status status = Status::ok;
  int wdl = 0;
  int dtz = 0;
  bool has_dtm = false;
  int dtm = 0;      // plies: odd > 0 the side to move mates, even <= 0 it is mated; 0 with has_dtm
                    // false for a draw
  int outcome = 0;  // -1, 0, 1 with the position's 50-move counter
  std::string message;
  explicit operator bool() const noexcept { return status == Status::ok; }
};

// One legal move of a root probe, with the values of the position it leads to from the mover's
// view, best first (the move that keeps the best outcome under the 50-move counter, then the
// fastest win or slowest loss).
struct ChessMove {
  std::uint8_t from = 0, to = 0;
  std::uint8_t promotion = 0;  // 0 none, 1 queen, 2 rook, 3 bishop, 4 knight
  ChessValue value;
};

struct CacheStats {
  std::uint64_t hits = 0, misses = 0;  // block lookups
  std::uint64_t bytes = 0;             // decompressed bytes held now
};

class Prober {
 public:
  // Opens a database directory (manifest only; segments open on first probe).
  static std::unique_ptr<Prober> open(const std::string& dir, const Options& opt, Value* error);
  ~Prober();
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  std::string_view game() const noexcept;  // the game's name in the manifest

  // Any game: a position in the game's notation, as `retra probe` takes it (docs/CLI.md).
  // Errors: malformed position (invalid_argument), its segment not built (not_found), a damaged
  // block (corrupt).
  Value probe(std::string_view position) const;
  // Many positions at once; out[i] receives position i's result. Positions are grouped by block
  // so that each block is looked up once per batch.
  void probe_batch(std::span<const std::string_view> positions, std::span<Value> out) const;
  // What the database holds (sizes, segments), e.g. to decide which positions to probe.
  Coverage coverage() const;
  // Raw access: the stored byte at `index` of the segment named `segment` in the manifest (in a
  // segment with don't-care entries, docs/FORMAT.md, a byte may be worse than the value the
  // game's probes give there: they search; this does not).
  Value stored(std::string_view segment, std::uint64_t index) const;

  // ---- typed entry points of the games (no text parsing) ----

  // Awari: the 12 pits, South's a..f (side to move) then North's A..F, as in the spec.
  Value awari(const std::array<int, 12>& pits) const;
  // Xiangqi: a FEN (either alphabet, w/r/b to move).
  Value xiangqi(std::string_view fen) const;
  // Xiangqi by board, without FEN parsing (engines, the solver): 90 squares numbered rank * 9 +
  // file (file a..i = 0..8, Red's back rank = 0), each 0 (empty) or 1 + type + 8 * colour with
  // types K R N C P G M = 0..6 and colours Red 0, Black 1; side_to_move 0 = Red, 1 = Black.
  // An impossible board is an invalid_argument error, as a bad FEN is.
  Value xiangqi_board(std::span<const std::uint8_t, 90> board, int side_to_move) const;
  // Chess by bitboards (no FEN parsing, no allocation when it succeeds): WDL only (the engines'
  // hot path), or WDL, DTZ and DTM.
  Value chess_wdl(const ChessBoard& board) const;
  ChessValue chess(const ChessBoard& board) const;
  // Every legal move with its values, best first; returns how many legal moves there are (at most
  // out.size() are written). *position receives the position's own values.
  int chess_root(const ChessBoard& board, std::span<ChessMove> out, ChessValue* position) const;

  // Batches of the typed entry points, grouped by block like probe_batch.
  void awari_batch(std::span<const std::array<int, 12>> positions, std::span<Value> out) const;
  void xiangqi_batch(std::span<const std::string_view> fens, std::span<Value> out) const;

  CacheStats cache_stats() const noexcept;

  struct Impl;

 private:
  explicit Prober(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace retra::probe
