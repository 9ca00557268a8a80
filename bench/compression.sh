#!/usr/bin/env bash
# Macro benchmark of the segment encodings: rewrites one database with each setting
# (`retra recompress` on a copy) and prints, per setting, bytes, bits per position, compression
# wall time and warm/cold probe rates (bench_compression, one thread); with PER_SEGMENT=1 also
# every segment's row. The first setting is format version 1's encoding (zstd -3, 64 Ki-entry
# blocks, rule entries stored, index order): the "before"; "index order" rows keep the entries
# in index order, the others let the writer choose the entry order (docs/FORMAT.md).
# Usage: bench/compression.sh DB                 any database directory (read-only: copies)
#        bench/compression.sh awari N            builds Awari 0..N first (default 20)
#        SETTINGS="name:options;..." bench/compression.sh DB   other settings
set -euo pipefail
cd "$(dirname "$0")/.."
retra="${RETRA:-build/release/retra}"
bench="${BENCH_COMPRESSION:-build/release/bench/bench_compression}"
{ [ -x "$retra" ] && [ -x "$bench" ]; } || scripts/build.sh release >/dev/null
tmp="$(mktemp -d "${TMPDIR:-/tmp}/retra-compression-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if [ "${1:-}" = awari ]; then
  n="${2:-20}"
  src="$tmp/source"
  $retra build awari --stones "0-$n" --db "$src" --no-progress >/dev/null
else
  src="${1:?usage: bench/compression.sh DB | awari N}"
  [ -f "$src/manifest.json" ] || { echo "'$src' is not a retra database" >&2; exit 2; }
fi
settings="${SETTINGS:-v1 zstd-3 64Ki stored:--codec zstd --level 3 --block-size 65536 --no-fill --entry-order index;\
zstd-3 64Ki filled:--codec zstd --level 3 --block-size 65536 --entry-order index;\
auto-3 64Ki index order:--level 3 --block-size 65536 --entry-order index;\
auto-3 64Ki (build default):--level 3 --block-size 65536;\
zstd-dict-3 64Ki:--codec zstd-dict --level 3 --block-size 65536;\
auto-9 256Ki:--level 9 --block-size 262144;\
auto-19 1Mi index order:--level 19 --block-size 1048576 --entry-order index;\
auto-19 1Mi (recompress default):--level 19 --block-size 1048576}"
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "database: $src ($(du -sh "$src" | cut -f1) as given)"
printf '%-34s %14s %10s %9s %10s %12s %10s\n' setting bytes MiB bits/pos compress_s warm_per_s cold_per_s
IFS=';' read -ra list <<< "$settings"
for entry in "${list[@]}"; do
  name="${entry%%:*}"
  opts="${entry#*:}"
  rm -rf "$tmp/db"
  cp -r "$src" "$tmp/db"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # the options are words
  $retra recompress --db "$tmp/db" --no-progress $opts >/dev/null
  end=$(date +%s.%N)
  $bench "$tmp/db" "${SECONDS_PER_RATE:-0.2}" > "$tmp/rows"
  [ "${PER_SEGMENT:-0}" = 1 ] && sed "s/^/  $name | /" "$tmp/rows"
  awk -v name="$name" -v s="$start" -v e="$end" '$1 == "total" && NF == 8 {
    printf "%-34s %14d %10.1f %9.3f %10.1f %12.0f %10.0f\n", name, $3, $3 / 1048576, $4, e - s, $7, $8
  }' "$tmp/rows"
done
