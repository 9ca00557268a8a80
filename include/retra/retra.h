/* retra's C ABI for probing databases from other programs and languages (C, Python ctypes, ...).
 * Opaque handles, integer status codes, no exception ever crosses it. A handle may be used by
 * many threads at once; retra_close must not race with probes on the same handle.
 * retra_probe takes a position of any game as text; the typed entry points after it skip the
 * parsing for engines that hold a board already.
 * Messages: retra_last_error() holds the calling thread's last failure, until its next call. */
#ifndef RETRA_RETRA_H
#define RETRA_RETRA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RETRA_API __attribute__((visibility("default")))
#else
#define RETRA_API
#endif

#define RETRA_ABI_VERSION 1

/* Status codes (the same numbers as retra::probe::Status). */
enum retra_status {
  RETRA_OK = 0,
  RETRA_INVALID_ARGUMENT = 1, /* malformed position, wrong stone count */
  RETRA_NOT_FOUND = 2,        /* no such directory / segment not built */
  RETRA_CORRUPT = 3,          /* a checksum failed */
  RETRA_IO = 4,
  RETRA_MISMATCH = 5, /* not a database this library can probe */
  RETRA_RESOURCE = 6,
  RETRA_INTERNAL = 7,
  RETRA_NULL_HANDLE = 8,   /* a null handle or output pointer */
  RETRA_WRONG_GAME = 9,    /* a typed probe of another game than the database holds */
  RETRA_CLOSED_HANDLE = 10 /* the handle was closed */
};

typedef struct retra_db retra_db;

/* Opens the database directory `dir`; cache_bytes bounds the decompressed-block cache
 * (0: a default of 64 MiB). On success *out is a live handle. */
RETRA_API int retra_open(const char* dir, size_t cache_bytes, retra_db** out);
/* Closes a handle; later calls with it return RETRA_CLOSED_HANDLE. */
RETRA_API int retra_close(retra_db* db);
/* The game's name in the manifest, valid while the process lives. */
RETRA_API int retra_game(const retra_db* db, const char** game);

/* Any game: a position in the game's notation (what `retra probe` takes), *value its value in
 * the game's terms (docs/PROBING.md). */
RETRA_API int retra_probe(const retra_db* db, const char* position, int* value);
/* n positions; values[i] and statuses[i] per position (statuses may be NULL). Returns RETRA_OK
 * when every probe succeeded, else the first failing status. */
RETRA_API int retra_probe_batch(const retra_db* db, const char* const* positions, size_t n,
                                int* values, int* statuses);
/* What the database holds, in the game's sizes (stones, pieces): *largest is the largest size of
 * any segment (Fathom's TB_LARGEST), *complete the largest size up to which every position has a
 * value; -1 when there is none. Either pointer may be NULL. */
RETRA_API int retra_coverage(const retra_db* db, int* largest, int* complete);

/* ---- typed entry points of the games ---- */

/* Awari: pits[0..5] the side to move's pits a..f, pits[6..11] the opponent's. *value: the final
 * score difference for the side to move with best play (-n..n). */
RETRA_API int retra_awari_probe(const retra_db* db, const int pits[12], int* value);
/* n positions of 12 ints each; values[i] and statuses[i] per position (statuses may be NULL).
 * Returns RETRA_OK when every probe succeeded, else the first failing status. */
RETRA_API int retra_awari_probe_batch(const retra_db* db, const int* pits, size_t n, int* values,
                                      int* statuses);

/* Xiangqi: a FEN; *value is the paper's Table 1 byte: 0 draw, 1 the side to move captures the
 * king now, odd n wins in n plies, even n loses in n plies. */
RETRA_API int retra_xiangqi_probe(const retra_db* db, const char* fen, int* value);
RETRA_API int retra_xiangqi_probe_batch(const retra_db* db, const char* const* fens, size_t n,
                                        int* values, int* statuses);
/* Xiangqi by board, without FEN parsing: board[rank * 9 + file] (file a..i = 0..8, Red's back
 * rank 0) is 0 for empty or 1 + type + 8 * colour, types K R N C P G M = 0..6, colours Red 0,
 * Black 1; side_to_move 0 = Red, 1 = Black. An impossible board returns RETRA_INVALID_ARGUMENT. */
RETRA_API int retra_xiangqi_probe_board(const retra_db* db, const unsigned char board[90],
                                        int side_to_move, int* value);

/* Chess by bitboards (Fathom's convention: bit k of each mask is square k, a1 = 0 .. h8 = 63;
 * rule50 the half-move clock, ep the en-passant square or 0). *wdl: -2 loss, -1 blessed loss,
 * 0 draw, 1 cursed win, 2 win, for the side to move with the 50-move counter taken as 0. */
RETRA_API int retra_chess_probe_wdl(const retra_db* db, unsigned long long white,
                                    unsigned long long black, unsigned long long kings,
                                    unsigned long long queens, unsigned long long rooks,
                                    unsigned long long bishops, unsigned long long knights,
                                    unsigned long long pawns, unsigned rule50, unsigned ep,
                                    int white_to_move, int* wdl);
/* WDL, DTZ in plies (Syzygy's convention, exact) and DTM in plies (*has_dtm 0 when the database
 * holds no DTM for the table or the position is drawn); any output pointer may be NULL. */
RETRA_API int retra_chess_probe(const retra_db* db, unsigned long long white,
                                unsigned long long black, unsigned long long kings,
                                unsigned long long queens, unsigned long long rooks,
                                unsigned long long bishops, unsigned long long knights,
                                unsigned long long pawns, unsigned rule50, unsigned ep,
                                int white_to_move, int* wdl, int* dtz, int* dtm, int* has_dtm);

/* One move of a root probe: from/to squares, promotion (0 none, 1 Q, 2 R, 3 B, 4 N) and the
 * values of the position it leads to from the mover's view. */
typedef struct retra_chess_move {
  unsigned char from, to, promotion;
  int wdl, dtz, dtm, has_dtm;
  int outcome; /* -1, 0, 1 under the position's 50-move counter */
} retra_chess_move;
/* Every legal move, best first; *count receives the number of legal moves (at most capacity are
 * written; 256 always suffices). */
RETRA_API int retra_chess_probe_root(const retra_db* db, unsigned long long white,
                                     unsigned long long black, unsigned long long kings,
                                     unsigned long long queens, unsigned long long rooks,
                                     unsigned long long bishops, unsigned long long knights,
                                     unsigned long long pawns, unsigned rule50, unsigned ep,
                                     int white_to_move, retra_chess_move* moves, size_t capacity,
                                     size_t* count);

/* Block-cache counters of a handle. */
RETRA_API int retra_cache_stats(const retra_db* db, unsigned long long* hits,
                                unsigned long long* misses, unsigned long long* bytes);

RETRA_API const char* retra_last_error(void);
RETRA_API const char* retra_status_name(int status);
RETRA_API const char* retra_version(void);

#ifdef __cplusplus
}
#endif

#endif /* RETRA_RETRA_H */
