#!/usr/bin/env bash
# Macro benchmark for issue 16: builds Awari 0..N (default 16) with the forward kernel (rounds over
# the explicit graph), the forward kernel's whole-segment sweeps (--tune graph=0) and the backward
# kernel, then runs the naive forward baseline (bench/forward_naive.cpp), which checks its values
# against the forward build byte for byte. Prints each wall time, peak RSS, and the ratios.
# Usage: bench/forward_awari.sh [N] [extra `retra build` options, e.g. --threads 2]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-16}"
[ $# -gt 0 ] && shift
retra="${RETRA:-build/release/retra}"
naive="${NAIVE:-build/release/bench/forward_naive}"
[ -x "$retra" ] && [ -x "$naive" ] || scripts/build.sh release >/dev/null
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-forward-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"

# run NAME COMMAND...: wall seconds into $dir/NAME.s, peak RSS (KiB) into $dir/NAME.kb
run() {
  local name="$1"
  shift
  "${TIME_BIN:-/usr/bin/time}" -f "%e %M" -o "$dir/$name.time" "$@" >"$dir/$name.log"
  read -r s kb <"$dir/$name.time"
  echo "$s" >"$dir/$name.s"
  awk -v n="$name" -v s="$s" -v kb="$kb" 'BEGIN { printf "%-34s %8.2f s   peak RSS %8.1f MiB\n", n, s, kb / 1024 }'
}
run "forward (graph rounds)" "$retra" build awari --stones "0-$n" --kernel forward \
  --db "$dir/graph" --no-progress "$@"
run "forward (sweeps, --tune graph=0)" "$retra" build awari --stones "0-$n" --kernel forward \
  --tune graph=0 --db "$dir/sweeps" --no-progress "$@"
run "backward" "$retra" build awari --stones "0-$n" --db "$dir/backward" --no-progress "$@"
run "naive forward baseline" "$naive" "$n" --db "$dir/graph"
tail -1 "$dir/naive forward baseline.log"
for k in sweeps backward; do
  for f in "$dir/graph"/*.rseg; do
    cmp -s "$f" "$dir/$k/$(basename "$f")" || { echo "DIFFER: $k $(basename "$f")"; exit 1; }
  done
done
echo "segment files byte-identical: graph rounds = sweeps = backward (0..$n)"
g=$(cat "$dir/forward (graph rounds).s")
awk -v g="$g" -v s="$(cat "$dir/forward (sweeps, --tune graph=0).s")" \
  -v b="$(cat "$dir/backward.s")" -v nv="$(cat "$dir/naive forward baseline.s")" 'BEGIN {
  printf "naive / forward (graph): %.1fx   naive / forward (sweeps): %.1fx   forward (graph) / backward: %.1fx\n",
    nv / g, nv / s, g / b }'
