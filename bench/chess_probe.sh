#!/usr/bin/env bash
# Macro benchmark of warm chess WDL probes on real tables (issue 10's bar: Fathom's 1.5 M probes
# per second per thread): for each named table, its WDL+DTZ files in three forms, as built, archived
# (`recompress` with the defaults) and archived with don't-care entries decided by captures
# (`recompress --dont-care`), each probed by bench/chess_probe_tables on the same random legal
# positions (one thread, CPU time, rounds of passes after a warming pass). Building and
# recompressing take minutes per 5-piece table; DB keeps the forms between runs.
# Usage: bench/chess_probe.sh [TABLE ...] (default: KQPvKQ)
# Environment: RETRA, PROBE (binaries), THREADS (building; default: all), DB (keep the databases
#              there: DB/built, DB/archived, DB/dont-care; default: temp), POSITIONS (65536),
#              PASSES (30), ROUNDS (3)
set -euo pipefail
cd "$(dirname "$0")/.."
retra="${RETRA:-build/release/retra}"
probe="${PROBE:-build/release/bench/chess_probe_tables}"
[ -x "$retra" ] && [ -x "$probe" ] || scripts/build.sh release >/dev/null
threads="${THREADS:-$(nproc)}"
. bench/common.sh
bench_dir chess-probe
[ $# -gt 0 ] || set -- KQPvKQ
tables=$(IFS=,; echo "$*")
echo "machine: $(machine)"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"

# Each form is made once from the one before (a form already in DB is kept).
if [ ! -f "$dir/built/manifest.json" ]; then
  "$retra" build chess --endgame "$tables" --metrics wdl,dtz --db "$dir/built" \
    --threads "$threads" --no-progress --json >/dev/null
fi
if [ ! -f "$dir/archived/manifest.json" ]; then
  rm -rf "$dir/archived.tmp" && cp -r "$dir/built" "$dir/archived.tmp"
  "$retra" recompress --db "$dir/archived.tmp" --threads "$threads" --no-progress --json >/dev/null
  mv "$dir/archived.tmp" "$dir/archived"
fi
if [ ! -f "$dir/dont-care/manifest.json" ]; then
  rm -rf "$dir/dont-care.tmp" && cp -r "$dir/archived" "$dir/dont-care.tmp"
  "$retra" recompress --db "$dir/dont-care.tmp" --dont-care --segment "$tables" \
    --threads "$threads" --no-progress --json >/dev/null
  mv "$dir/dont-care.tmp" "$dir/dont-care"
fi
for t in "$@"; do
  for form in built archived dont-care; do
    echo "== $t, $form"
    "$probe" "$dir/$form" "$t" "${POSITIONS:-65536}" "${PASSES:-30}" "${ROUNDS:-3}" | grep -v '^db '
  done
done
