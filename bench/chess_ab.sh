#!/usr/bin/env bash
# A/B of two or more retra binaries on one chess table: the table is built with each binary in
# turn (A, B, A, B, ...) with its sub-tables already built, so that the machine's drift from
# minute to minute (10% and more on this machine class) falls on every binary alike. Prints each
# run's wall seconds and the kernel's phases from the manifest (initialization, propagation, seed
# scans), then per binary the median of each, and fails when two runs wrote different segment
# bytes (the header checksums differ): a faster binary must write the same table.
# Usage: bench/chess_ab.sh TABLE BINARY BINARY... (e.g. KQRvKR /tmp/retra-old build/release/retra)
# Environment: ROUNDS (default 3), THREADS (default: all), METRICS (default wdl,dtz),
#              TUNE (passed as --tune to every run), MEMORY (passed as --memory to every run,
#              e.g. 600M to time the out-of-core kernel), DB (keep the tables there; default: temp)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  echo "usage: bench/chess_ab.sh TABLE BINARY BINARY..." >&2
  exit 2
fi
table="$1"
shift
bins=("$@")
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "bench/chess_ab.sh: '$b' is not an executable" >&2; exit 2; }
done
rounds="${ROUNDS:-3}"
threads="${THREADS:-$(nproc)}"
metrics="${METRICS:-wdl,dtz}"
tune=()
[ -z "${TUNE:-}" ] || tune=(--tune "$TUNE")
memory=()
[ -z "${MEMORY:-}" ] || memory=(--memory "$MEMORY")
. bench/common.sh
bench_dir chess-ab
echo "machine: $(machine); threads $threads; $table, metrics $metrics, $rounds rounds${MEMORY:+, --memory $MEMORY}"

"${bins[0]}" build chess --endgame "$table" --metrics "$metrics" --db "$dir" --threads "$threads" \
  --no-progress --json >/dev/null
: >"$dir/ab.txt"
for r in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    t0=$(date +%s.%N)
    "${bins[$i]}" build chess --endgame "$table" --metrics "$metrics" --force --db "$dir" \
      --threads "$threads" "${tune[@]}" "${memory[@]}" --no-progress --json >/dev/null
    t1=$(date +%s.%N)
    python3 - "$dir/manifest.json" "$table" "$i" "${bins[$i]}" "$t0" "$t1" "$metrics" \
      >>"$dir/ab.txt" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
table, i, b, t0, t1 = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
metrics = sys.argv[7].split(',')
# The table's own segments (its name, or its name and a pawn segment's suffix), of the metrics
# built: DTM segments end in .dtm.
def built(s):
    base, dtm = s['name'].removesuffix('.dtm'), s['name'].endswith('.dtm')
    mine = base == table or base.startswith(table + '_')
    return mine and ('dtm' in metrics if dtm else bool({'wdl', 'dtz'} & set(metrics)))
segs = [s for s in m['segments'] if built(s)]
# The backward kernel's phases; the chess sweep's (src/games/chess/sweep.hpp) as the same three:
# reading sub-tables, marking illegal positions, captures, mates and the conversion into the
# segment's order as initialization, its plies as propagation, and no seed scans.
def phases(x):
    if 'propagate_seconds' in x:
        return x['init_seconds'], x['propagate_seconds'], x['scan_seconds']
    return (sum(x[p + '_seconds'] for p in ('subtables', 'illegal', 'captures', 'mates', 'convert')),
            x['plies_seconds'], 0.0)
k = [phases(s['build']['kernel_stats']) for s in segs]
init = sum(x[0] for x in k)
prop = sum(x[1] for x in k)
scan = sum(x[2] for x in k)
sums = ','.join(s['header_checksum'][:12] for s in segs)
print(i, b, f"{t1 - t0:.2f}", f"{init:.2f}", f"{prop:.2f}", f"{scan:.2f}", sums)
PY
    tail -1 "$dir/ab.txt" | awk '{ printf "%-32s wall %7s  init %6s  propagate %7s  scans %6s\n", $2, $3, $4, $5, $6 }'
  done
done
python3 - "$dir/ab.txt" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
print("medians:")
for i in sorted({r[0] for r in runs}, key=int):
    mine = [r for r in runs if r[0] == i]
    med = lambda c: statistics.median(float(r[c]) for r in mine)
    print(f"  {mine[0][1]:<30} wall {med(2):7.2f}  init {med(3):6.2f}  propagate {med(4):7.2f}"
          f"  scans {med(5):6.2f}")
if len({r[6] for r in runs}) != 1:
    print("the binaries wrote different segments (header checksums differ)")
    sys.exit(1)
print("every run wrote the same segments")
PY
