/* Example: probe an Awari database through retra's C ABI.
 * Usage: probe_awari DB_DIR [p0 ... p11]   (default: the spec's 16-stone example)
 * Prints the value and the status of a batch probe; exits non-zero on any error. */
#include <retra/retra.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 14) {
    fprintf(stderr, "usage: %s DB_DIR [p0 ... p11]\n", argv[0]);
    return 2;
  }
  int pits[12] = {1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0};
  if (argc == 14)
    for (int i = 0; i < 12; ++i) pits[i] = atoi(argv[2 + i]);

  retra_db* db = NULL;
  int st = retra_open(argv[1], 16u << 20, &db);
  if (st != RETRA_OK) {
    fprintf(stderr, "retra_open: %s: %s\n", retra_status_name(st), retra_last_error());
    return 1;
  }
  const char* game = NULL;
  retra_game(db, &game);
  int value = 0;
  st = retra_awari_probe(db, pits, &value);
  if (st != RETRA_OK) {
    fprintf(stderr, "retra_awari_probe: %s: %s\n", retra_status_name(st), retra_last_error());
    retra_close(db);
    return 1;
  }
  printf("game %s, value %d\n", game, value);

  /* The same position twice in one batch, plus a malformed one (a negative pit). */
  int batch[36];
  for (int i = 0; i < 12; ++i) batch[i] = batch[12 + i] = batch[24 + i] = pits[i];
  batch[24] = -1;
  int values[3], statuses[3];
  st = retra_awari_probe_batch(db, batch, 3, values, statuses);
  printf("batch: %d (%s) %d (%s) %s\n", values[0], retra_status_name(statuses[0]), values[1],
         retra_status_name(statuses[1]), retra_status_name(statuses[2]));
  retra_close(db);
  /* Misuse is reported, never a crash. */
  if (retra_awari_probe(db, pits, &value) != RETRA_CLOSED_HANDLE) return 1;
  if (retra_awari_probe(NULL, pits, &value) != RETRA_NULL_HANDLE) return 1;
  return st == RETRA_INVALID_ARGUMENT && values[0] == value && values[1] == value ? 0 : 1;
}
