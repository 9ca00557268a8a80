#!/usr/bin/env bash
# The chess game's own kernel for pawnless tables (src/games/chess/sweep.hpp), run alone by
# bench/chess_sweep, against tables built by retra's generic backward kernel (--tune
# own_kernel=0): KQvKR and its sub-tables built that way, then every third index of the kernel's
# KQvKR compared with them (WDL class and DTZ), which must agree on every position; then KQvKR
# again from those sub-tables, its codes rebased, every entry compared in retra's order. A build
# that takes the own kernel (the default) writes the same bytes as the generic one, and says
# which kernel built each segment. A material the kernel does not take (pawns) is refused with
# exit code 2.
# Usage: tests/chess_sweep_test.sh RETRA CHESS_SWEEP
set -euo pipefail
retra="$1"
sweep="$2"
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-sweep-XXXXXX")"
trap 'rm -rf "$dir"' EXIT

"$retra" build chess --endgame KQvKR --metrics wdl,dtz --db "$dir/db" --threads 2 --no-progress \
  --tune own_kernel=0 --json >/dev/null
"$retra" build chess --endgame KQvKR --metrics wdl,dtz --db "$dir/own" --threads 2 --no-progress \
  --json >/dev/null
for t in KQvK KRvK KQvKR; do
  cmp "$dir/db/chess-$t.rseg" "$dir/own/chess-$t.rseg" ||
    { echo "$t: the own kernel's file differs from the generic kernel's" >&2; exit 1; }
done
python3 - "$dir/db/manifest.json" "$dir/own/manifest.json" <<'PY'
import json, sys
kernels = [{s['name']: s['build']['kernel'] for s in json.load(open(f))['segments']}
           for f in sys.argv[1:]]
assert set(kernels[0].values()) == {'backward'}, kernels[0]
assert set(kernels[1].values()) == {'sweep'}, kernels[1]
PY
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
