#!/usr/bin/env bash
# Macro benchmark: builds all 151 xiangqi endgames of Fang, Hsu and Hsu (CG 2000, Appendix A) from
# scratch, then verifies them. Prints per endgame its index size (ours and the paper's), seconds,
# resident memory and size on disk, then the totals: build wall time, peak RSS, verify wall time.
# The set is closed under captures, so nothing outside the 151 is built.
# Usage: bench/xiangqi_fang151.sh [extra `retra build xiangqi` options, e.g. --threads 1]
#        DB=/path/keep bench/xiangqi_fang151.sh   (keeps the databases there)
#        VERIFY=0 bench/xiangqi_fang151.sh        (build only)
set -euo pipefail
cd "$(dirname "$0")/.."
retra="${RETRA:-build/release/retra}"
[ -x "$retra" ] || scripts/build.sh release >/dev/null
if [ -n "${DB:-}" ]; then
  db="$DB"
  [ -e "$db" ] && { echo "DB=$db exists; give a new directory" >&2; exit 2; }
else
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/retra-bench-XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  db="$tmp/db"
fi
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
start=$(date +%s.%N)
$retra build xiangqi --set fang151 --db "$db" --no-progress "$@"
mid=$(date +%s.%N)
[ "${VERIFY:-1}" = 0 ] || $retra verify --db "$db" --no-progress
end=$(date +%s.%N)
awk -v s="$start" -v m="$mid" -v e="$end" -v v="${VERIFY:-1}" 'BEGIN {
  printf "build wall: %.1f s (%.1f min) for the 151 endgames\n", m - s, (m - s) / 60
  if (v != 0) printf "verify wall: %.1f s\n", e - m }'
du -sh "$db" | awk '{ print "on disk: " $1 }'
