#!/usr/bin/env bash
# bench/chess_sweep (the Syzygy-style sweep prototype) against retra's own tables: KQvKR and its
# sub-tables built by retra, then every third index of the sweep's KQvKR compared with them
# (WDL class and DTZ), which must agree on every position; then KQvKR again from retra's
# sub-tables, its codes rebased, every entry compared in retra's order; a material the prototype
# does not take (pawns) is refused with exit code 2.
# Usage: tests/chess_sweep_test.sh RETRA CHESS_SWEEP
set -euo pipefail
retra="$1"
sweep="$2"
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-sweep-XXXXXX")"
trap 'rm -rf "$dir"' EXIT

"$retra" build chess --endgame KQvKR --metrics wdl,dtz --db "$dir/db" --threads 2 --no-progress \
  --json >/dev/null
"$sweep" KQvKR --threads 2 --check "$dir/db" --stride 3 | tee "$dir/out.txt" | tail -2
grep -q '^KQvKR: 2 threads, 3784704 slots, 2524224 legal (1529295 wins, 905366 losses), longest 62 plies' \
  "$dir/out.txt" || { echo "unexpected KQvKR totals" >&2; exit 1; }
grep -q ': 841606 positions, 0 WDL classes differ, 0 DTZ differ' "$dir/out.txt" ||
  { echo "the sweep and retra disagree" >&2; exit 1; }

# The same table from retra's sub-tables on disk (KvKR is retra's KRvK turned over), its codes
# rebased after ply 39 as a table with distances beyond 124 plies has them after ply 123,
# converted into retra's segment order and compared with every entry of retra's KQvKR.
"$sweep" KQvKR --threads 2 --subtables "$dir/db" --compare "$dir/db" --rebase-at 40 |
  tee "$dir/out2.txt" | tail -2
grep -q '^sub-table KvKR .* read from ' "$dir/out2.txt" ||
  { echo "KvKR was not read from retra's tables" >&2; exit 1; }
grep -q '^  KQvKR: codes rebased after ply 39$' "$dir/out2.txt" ||
  { echo "KQvKR's codes were not rebased" >&2; exit 1; }
grep -q '^KQvKR: 2 threads, 3784704 slots, 2524224 legal (1529295 wins, 905366 losses), longest 62 plies' \
  "$dir/out2.txt" || { echo "unexpected KQvKR totals from retra's sub-tables" >&2; exit 1; }
grep -q ': 3494568 entries in retra.s order .*, 1747284 compared by class only, 0 far values, 0 differ' \
  "$dir/out2.txt" ||
  { echo "the sweep's KQvKR in retra's order differs from retra's" >&2; exit 1; }

set +e
"$sweep" KPvK >/dev/null 2>"$dir/err.txt"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'not a pawnless material' "$dir/err.txt" ||
  { echo "KPvK: exit $rc, $(cat "$dir/err.txt")" >&2; exit 1; }
echo "chess sweep: all checks held"
