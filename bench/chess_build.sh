#!/usr/bin/env bash
# Macro benchmark of the chess generator: for each named table, the time to build it with its
# sub-tables already built (the tables its captures and promotions lead to), first WDL + DTZ, then
# DTM on top, each as its own process; per table and metric: positions (index x 2 sides), wall
# seconds, peak RSS, bytes on disk, bits per position, and the seconds of the segments' kernels
# alone (the generation, without reading sub-tables, statistics and compression). The sub-tables
# are built first, untimed per table but reported as a whole. A fixed reference workload (Awari
# 0..13 stones, one thread) is timed beside it, since this machine class varies in speed from day
# to day.
# Usage: bench/chess_build.sh [TABLE ...] (default: KQRvKR KRPvKR)
#        bench/chess_build.sh --pieces 3-5   (the whole set, one process; all three metrics
#                                             unless METRICS names some, e.g. METRICS=wdl,dtz)
# Environment: RETRA (binary), THREADS (default: all), DB (keep the tables there; default: temp),
#              METRICS (default "wdl,dtz dtm": the timed passes per table), TUNE (passed as
#              --tune to every build, e.g. TUNE=own_kernel=0 for the generic kernels alone)
set -euo pipefail
cd "$(dirname "$0")/.."
retra="${RETRA:-build/release/retra}"
[ -x "$retra" ] || scripts/build.sh release >/dev/null
threads="${THREADS:-$(nproc)}"
tune=()
[ -z "${TUNE:-}" ] || tune=(--tune "$TUNE")
. bench/common.sh
bench_dir chess-bench
echo "machine: $(machine); threads $threads${TUNE:+; --tune $TUNE}"

reference_workload
echo "reference workload (awari 0..13 stones, 1 thread): $wall s"

if [ "${1:-}" = "--pieces" ]; then
  range="${2:?usage: bench/chess_build.sh --pieces A-B}"
  metrics="${METRICS:-wdl,dtz,dtm}"
  timed "$retra" build chess --pieces "$range" --metrics "$metrics" --db "$dir/db" \
    --threads "$threads" --no-progress --json "${tune[@]}"
  python3 - "$dir/last.json" "$range" "$wall" "$rss" "$metrics" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"chess --pieces {sys.argv[2]}, metrics {sys.argv[5]}: {j['tables']} tables, "
      f"{len(j['segments'])} segments, {j['positions']:,} positions, "
      f"{j['file_bytes'] / 2**20:.1f} MiB on disk ({j['bits_per_position']:.3f} bits/position), "
      f"wall {sys.argv[3]} s, peak RSS {sys.argv[4]}")
dtz = sum(s['file_bytes'] for s in j['segments'] if not s['segment'].endswith('.dtm'))
print(f"  WDL + DTZ alone: {dtz / 2**20:.1f} MiB on disk")
PY
  exit 0
fi

tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(KQRvKR KRPvKR)
printf '%-10s %-8s %14s %9s %11s %11s %9s %9s\n' table metric positions seconds "peak RSS" "on disk" \
  bits/pos kernel-s
for t in "${tables[@]}"; do
  for metrics in ${METRICS:-wdl,dtz dtm}; do
    # The sub-tables (and, the first time, the table itself), then the table alone, timed.
    "$retra" build chess --endgame "$t" --metrics "$metrics" --db "$dir/db" --threads "$threads" \
      --no-progress --json "${tune[@]}" >/dev/null
    timed "$retra" build chess --endgame "$t" --metrics "$metrics" --force --db "$dir/db" \
      --threads "$threads" --no-progress --json "${tune[@]}"
    python3 - "$dir/last.json" "$t" "$metrics" "$wall" "$rss" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
segs = [s for s in j['segments'] if not s['skipped']]
pos = sum(s['positions'] for s in segs)
size = sum(s['file_bytes'] for s in segs)
name = 'WDL+DTZ' if sys.argv[3] == 'wdl,dtz' else 'DTM'
kernel = sum(s.get('kernel_seconds', 0) for s in segs)
print(f"{sys.argv[2]:<10} {name:<8} {pos:>14,} {float(sys.argv[4]):>9.2f} {sys.argv[5]:>11} "
      f"{size / 2**20:>7.2f} MiB {8 * size / max(pos, 1):>9.3f} {kernel:>9.2f}")
PY
  done
done
