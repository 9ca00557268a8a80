#!/usr/bin/env bash
# The chess game's own kernel for pawnless tables (src/games/chess/sweep.hpp) against retra's
# generic backward kernel, on the same day and in turns: per round, the reference workload, then
# each table built three ways: by bench/chess_sweep, the kernel alone (its sub-tables read from
# retra's segments; its own seconds for the table, the seconds reading the sub-tables, and the
# seconds converting its values into retra's segment order and encoding, after which it compares
# every entry with retra's segment and fails on a difference); by `retra build chess --metrics
# wdl,dtz --force` with its sub-tables already built, which takes the own kernel; and by the same
# build with --tune own_kernel=0, the generic kernel (wall seconds and the kernels' seconds from
# the manifest). Per table and program: positions (retra's index x 2 sides; the kernel's slots x
# 2 sides), seconds, peak RSS, then the medians. bench/chess_sweep writes nothing, so its seconds
# plus its conversion are the kernel before the writer. Its peak RSS includes the comparison's
# copy of retra's segment. The segment it compares with is always the generic kernel's: the tables
# are built with it first, and each round ends with it.
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
    --no-progress --json --tune own_kernel=0 >/dev/null
done

: >"$dir/rows.txt"
printf '%-6s %-10s %-9s %14s %9s %9s %11s %7s %9s\n' round table program positions seconds \
  kernel-s "peak RSS" read-s convert-s
for ((r = 1; r <= rounds; r++)); do
  reference_workload
  echo "round $r: reference workload (awari 0..13 stones, 1 thread): $wall s"
  echo "$r reference - 0 $wall 0" >>"$dir/rows.txt"
  for t in "${tables[@]}"; do
    timed "$sweep" "$t" --threads "$threads" --subtables "$dir/db" --compare "$dir/db"
    line="$(grep "^$t: " "$dir/last.json")"
    slots="$(sed -E 's/.* ([0-9]+) slots,.*/\1/' <<<"$line")"
    secs="$(sed -E 's/.*, ([0-9.]+) s$/\1/' <<<"$line")"
    read_s="$(awk '/^sub-table .* read from /{ s += $(NF - 1) } END { printf "%.2f", s }' \
      "$dir/last.json")"
    convert_s="$(sed -nE 's/.*converted in ([0-9.]+) s;.*/\1/p' "$dir/last.json")"
    printf '%-6s %-10s %-9s %14s %9s %9s %11s %7s %9s\n' "$r" "$t" sweep "$slots" "$secs" \
      "$secs" "$rss" "$read_s" "$convert_s"
    echo "$r $t sweep $slots $secs $secs $read_s $convert_s" >>"$dir/rows.txt"
    for program in retra generic; do
      tune=own_kernel=1
      [ "$program" = retra ] || tune=own_kernel=0
      timed "$retra" build chess --endgame "$t" --metrics wdl,dtz --force --db "$dir/db" \
        --threads "$threads" --no-progress --json --tune "$tune"
      read -r pos kernel < <(python3 - "$dir/last.json" <<'PY'
import json, sys
segs = [s for s in json.load(open(sys.argv[1]))['segments'] if not s['skipped']]
print(sum(s['positions'] for s in segs), f"{sum(s.get('kernel_seconds', 0) for s in segs):.2f}")
PY
      )
      printf '%-6s %-10s %-9s %14s %9s %9s %11s\n' "$r" "$t" "$program" "$pos" "$wall" "$kernel" \
        "$rss"
      echo "$r $t $program $pos $wall $kernel" >>"$dir/rows.txt"
    done
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
           for p in ('sweep', 'retra', 'generic')}
    sw = [r for r in rows if r[1] == t and r[2] == 'sweep']
    read = statistics.median(float(r[6]) for r in sw)
    convert = statistics.median(float(r[7]) for r in sw)
    print(f"  {t}: sweep alone {med['sweep'][0]:.2f} s (sub-tables read {read:.2f} s, converted "
          f"to retra's order {convert:.2f} s); retra with it {med['retra'][0]:.2f} s wall, "
          f"{med['retra'][1]:.2f} s kernels; retra's generic kernel {med['generic'][0]:.2f} s "
          f"wall, {med['generic'][1]:.2f} s kernels; generic / own kernel "
          f"{med['generic'][1] / med['retra'][1]:.2f} (kernels), "
          f"{med['generic'][0] / med['retra'][0]:.2f} (wall)")
PY
