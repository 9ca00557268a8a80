#!/usr/bin/env bash
# Macro benchmark of the verifier: builds Awari 0..N stones (default 20) in a temporary directory,
# or takes an existing database, then runs `retra verify` in its default one-pass mode and in its
# full mode (score segments also recomputed by the other kernel, docs/VERIFY.md), and prints for
# each mode: wall time, positions per second and peak RSS. Exits 1 if either mode fails.
# Usage: bench/verify.sh [N] [--db DIR] [--threads T]
set -euo pipefail
cd "$(dirname "$0")/.."
n=20 db="" threads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --threads) threads=(--threads "$2"); shift 2 ;;
    *) n="$1"; shift ;;
  esac
done
retra="${RETRA:-build/release/retra}"
[ -x "$retra" ] || scripts/build.sh release >/dev/null
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-verify-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
if [ -z "$db" ]; then
  db="$dir/db"
  start=$(date +%s.%N)
  $retra build awari --stones "0-$n" --db "$db" --no-progress "${threads[@]}" >/dev/null
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" -v n="$n" 'BEGIN { printf "build: %.1f s (Awari 0..%s)\n", e - s, n }'
fi
printf '%-9s %12s %10s %14s %10s\n' mode positions seconds positions/s "peak RSS"
status=0
for mode in one-pass full; do
  flag=()
  [ "$mode" = full ] && flag=(--full)
  start=$(date +%s.%N)
  if ! /usr/bin/time -f "%M" -o "$dir/rss.txt" \
      $retra verify --db "$db" --json --no-progress "${threads[@]}" "${flag[@]}" >"$dir/out.json"; then
    status=1
  fi
  end=$(date +%s.%N)
  python3 - "$dir/out.json" "$start" "$end" "$(tail -1 "$dir/rss.txt")" "$mode" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
n = j.get("positions", j.get("entries", 0))
print(f"{sys.argv[5]:<9} {n:>12,} {wall:>10.2f} {n / wall:>14,.0f} {int(sys.argv[4]) / 1024:>7.1f} MiB"
      + ("" if j["ok"] else "   FAILED: " + j["failure"]["message"]))
PY
done
exit "$status"
