#!/usr/bin/env bash
# Macro benchmark: builds Awari databases 0..N stones from scratch in a temporary directory and
# prints, per stone count, positions, iterations, seconds and positions x iterations per second,
# then the total wall time and peak RSS.
# Usage: bench/awari_build.sh N [extra `retra build` options, e.g. --threads 1 --kernel forward]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:?usage: bench/awari_build.sh N [retra build options]}"
shift
retra="${RETRA:-build/release/retra}"
[ -x "$retra" ] || scripts/build.sh release >/dev/null
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-bench-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
start=$(date +%s.%N)
$retra build awari --stones "0-$n" --db "$dir/db" --no-progress "$@"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$n" 'BEGIN { printf "wall: %.2f s for 0..%s stones\n", e - s, n }'
