#!/usr/bin/env bash
# The Syzygy-style sweep prototype (bench/chess_sweep.cpp) against retra's generator, on the same
# day and in turns: per round, the reference workload, then each table built by the prototype
# (with its sub-tables in memory; its own seconds for the table alone) and by `retra build chess
# --metrics wdl,dtz --force` with its sub-tables already built (wall seconds and the kernels'
# seconds from the manifest). Per table and program: positions (retra's index x 2 sides; the
# prototype's slots x 2 sides), seconds, peak RSS, then the medians. The prototype computes no
# 50-move classes and writes nothing, so on a table without cursed positions its seconds are
# what the design costs before files; retra's kernel seconds are the comparable part of a build.
# Usage: bench/chess_sweep.sh [TABLE ...] (pawnless, 3-5 pieces; default: KQRvKR)
# Environment: RETRA, SWEEP (binaries), THREADS (default: all), ROUNDS (default 3), DB (keep
#              retra's tables there; default: temp)
set -euo pipefail
cd "$(dirname "$0")/.."
retra="${RETRA:-build/release/retra}"
sweep="${SWEEP:-build/release/bench/chess_sweep}"
[ -x "$retra" ] && [ -x "$sweep" ] || scripts/build.sh release >/dev/null
threads="${THREADS:-$(nproc)}"
rounds="${ROUNDS:-3}"
. bench/common.sh
bench_dir chess-sweep
echo "machine: $(machine); threads $threads; rounds $rounds"

tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(KQRvKR)
for t in "${tables[@]}"; do
  "$retra" build chess --endgame "$t" --metrics wdl,dtz --db "$dir/db" --threads "$threads" \
    --no-progress --json >/dev/null
done

: >"$dir/rows.txt"
printf '%-6s %-10s %-9s %14s %9s %9s %11s\n' round table program positions seconds kernel-s \
  "peak RSS"
for ((r = 1; r <= rounds; r++)); do
  reference_workload
  echo "round $r: reference workload (awari 0..13 stones, 1 thread): $wall s"
  echo "$r reference - 0 $wall 0" >>"$dir/rows.txt"
  for t in "${tables[@]}"; do
    timed "$sweep" "$t" --threads "$threads"
    line="$(grep "^$t: " "$dir/last.json")"
    slots="$(sed -E 's/.* ([0-9]+) slots,.*/\1/' <<<"$line")"
    secs="$(sed -E 's/.*, ([0-9.]+) s$/\1/' <<<"$line")"
    printf '%-6s %-10s %-9s %14s %9s %9s %11s\n' "$r" "$t" sweep "$slots" "$secs" "$secs" "$rss"
    echo "$r $t sweep $slots $secs $secs" >>"$dir/rows.txt"
    timed "$retra" build chess --endgame "$t" --metrics wdl,dtz --force --db "$dir/db" \
      --threads "$threads" --no-progress --json
    read -r pos kernel < <(python3 - "$dir/last.json" <<'PY'
import json, sys
segs = [s for s in json.load(open(sys.argv[1]))['segments'] if not s['skipped']]
print(sum(s['positions'] for s in segs), f"{sum(s.get('kernel_seconds', 0) for s in segs):.2f}")
PY
    )
    printf '%-6s %-10s %-9s %14s %9s %9s %11s\n' "$r" "$t" retra "$pos" "$wall" "$kernel" "$rss"
    echo "$r $t retra $pos $wall $kernel" >>"$dir/rows.txt"
  done
done

python3 - "$dir/rows.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
ref = statistics.median(float(r[4]) for r in rows if r[1] == 'reference')
print(f"medians (reference workload {ref:.2f} s):")
for t in dict.fromkeys(r[1] for r in rows if r[1] != 'reference'):
    med = {p: (statistics.median(float(r[4]) for r in rows if r[1] == t and r[2] == p),
               statistics.median(float(r[5]) for r in rows if r[1] == t and r[2] == p))
           for p in ('sweep', 'retra')}
    print(f"  {t}: sweep {med['sweep'][0]:.2f} s; retra {med['retra'][0]:.2f} s wall, "
          f"{med['retra'][1]:.2f} s kernels; retra's kernels / sweep "
          f"{med['retra'][1] / med['sweep'][0]:.2f}")
PY
