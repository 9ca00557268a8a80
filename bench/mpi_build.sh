#!/usr/bin/env bash
# Macro benchmark of builds over MPI ranks (issue 11): builds the same targets alone and with
# `mpirun -np N` for each N given, on this machine (oversubscribed where N exceeds the cores), and
# prints per run the wall time, positions/s, the peak RSS of the largest process, and whether every
# segment file is byte-identical (cmp) to the build alone.
# Usage: bench/mpi_build.sh [--ranks "1 2 4"] [--threads-per-rank 1] -- GAME TARGET-OPTIONS...
#   e.g. bench/mpi_build.sh -- awari --stones 0-20
#        bench/mpi_build.sh --ranks 3 -- xiangqi --endgame KNPKGGMM
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
retra=${RETRA:-$root/build/release/retra}
ranks="1 2 4"
per_rank=1
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --threads-per-rank) per_rank=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--ranks \"1 2 4\"] [--threads-per-rank T] -- GAME TARGETS..." >&2; exit 2 ;;
  esac
done
[ $# -ge 2 ] || { echo "name a game and its targets after --" >&2; exit 2; }
[ -x "$retra" ] || { echo "build retra first (scripts/build.sh release): $retra" >&2; exit 2; }
command -v mpirun > /dev/null || { echo "mpirun missing: scripts/setup.sh installs Open MPI" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=PASSIVE
cores=$(nproc)

# run NAME CMD...: wall s, positions/s and peak RSS of the largest process (GNU time counts the
# ranks, mpirun's children, in its maximum).
run() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" --db "$work/$name" --no-progress --json \
    > "$work/$name.json"
  read -r secs kib < "$work/$name.time"
  python3 - "$work/$name.json" "$name" "$secs" "$kib" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
segs = next(v for k, v in j.items() if isinstance(v, list))
pos = sum(s.get("positions", s.get("index_size", 0)) or 0 for s in segs)
secs, kib = float(sys.argv[3]), int(sys.argv[4])
print(f"{sys.argv[2]:>8}: ranks {j.get('ranks', 1)}, {secs:7.2f} s wall, "
      f"{pos / secs:12.4g} positions/s, peak RSS of the largest process {kib / 1024:8.1f} MiB")
PY
}

echo "$(date -u +%FT%TZ) $(nproc) cores; ${*}"
run alone "$retra" build "$@" --threads "$cores"
for n in $ranks; do
  t=$per_rank
  [ "$n" -eq 1 ] && t=$cores
  run "np$n" mpirun --oversubscribe --bind-to none -np "$n" "$retra" build "$@" --threads "$t"
  same=0
  for f in "$work"/alone/*.rseg; do
    cmp -s "$f" "$work/np$n/$(basename "$f")" || { echo "np$n: $(basename "$f") DIFFERS"; exit 1; }
    same=$((same + 1))
  done
  echo "     np$n: all $same segment files byte-identical to the build alone"
done
