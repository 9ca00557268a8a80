#!/usr/bin/env bash
# Cross-check: builds Awari 0..N (default 20) stones with the forward and with the backward kernel
# and requires the segment files to be identical byte for byte (values, blocks, checksums).
# Usage: bench/crosscheck.sh [N] [extra retra build options]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20}"
shift || true
retra="${RETRA:-build/release/retra}"
[ -x "$retra" ] || scripts/build.sh release >/dev/null
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-crosscheck-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
for k in forward backward; do
  start=$(date +%s.%N)
  $retra build awari --stones "0-$n" --db "$dir/$k" --kernel "$k" --no-progress "$@" >/dev/null
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" -v k="$k" 'BEGIN { printf "%-8s kernel: %.1f s\n", k, e - s }'
done
status=0
for s in $(seq 0 "$n"); do
  f="awari-$s.rseg"
  if cmp -s "$dir/forward/$f" "$dir/backward/$f"; then
    echo "$s stones: identical"
  else
    echo "$s stones: DIFFERENT"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "crosscheck: forward and backward segments are bit-identical for 0..$n stones"
exit "$status"
