#!/usr/bin/env bash
# Thread scaling: builds Awari 0..N-1 stones once, then rebuilds segment N with 1, 2, 4, ... threads
# up to nproc and prints the kernel time, speedup and parallel efficiency of each.
# Usage: bench/scaling.sh [N (default 20)] [extra retra build options, e.g. --kernel forward]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20}"
shift || true
retra="${RETRA:-build/release/retra}"
[ -x "$retra" ] || scripts/build.sh release >/dev/null
max=$(nproc)
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-scaling-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
$retra build awari --stones "0-$((n - 1))" --db "$dir/db" --no-progress "$@" >/dev/null
threads=()
for ((t = 1; t < max; t *= 2)); do threads+=("$t"); done
threads+=("$max")
echo "machine: $max hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "segment: $n stones, options: ${*:-(default kernel)}"
printf '%8s %12s %9s %11s\n' threads "kernel s" speedup efficiency
base=""
for t in "${threads[@]}"; do
  json=$($retra build awari --stones "$n" --force --threads "$t" --db "$dir/db" --json "$@")
  secs=$(printf '%s' "$json" | tr -d ' \n' | sed -E 's/.*"kernel_seconds":([0-9.eE+-]+).*/\1/')
  [ -n "$base" ] || base="$secs"
  awk -v t="$t" -v s="$secs" -v b="$base" \
    'BEGIN { printf "%8d %12.2f %9.2f %10.0f%%\n", t, s, b / s, 100 * b / s / t }'
done
