#!/usr/bin/env bash
# `mpirun -np 2 retra build` on one machine (oversubscribed): Awari 0..14 (or fewer stones: the
# second argument; capture targets in memory and block-wise) and xiangqi KRKG+KCKG byte-identical
# to the one-process build, rank 0 alone reports, the manifest says 2 ranks, and what does not run
# over ranks is refused with a message and a nonzero exit on every rank.
# Usage: mpi_build_test.sh <retra binary> [most stones, default 14]
set -euo pipefail
retra=$1
stones=0-${2:-14}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# CI runs as root; Open MPI refuses that unless told it is meant.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often have no usable interfaces or ptrace between processes: shared memory
# without single-copy, and the loopback only.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun --oversubscribe -np 2)

fail() { echo "FAIL: $*" >&2; exit 1; }
same() {  # every segment file of $1 equals its namesake in $2
  local n=0
  for f in "$1"/*.rseg; do
    cmp -s "$f" "$2/$(basename "$f")" || fail "$(basename "$f") differs between $1 and $2"
    n=$((n + 1))
  done
  [ "$n" -gt 2 ] || fail "only $n segment files in $1"
  echo "$n segment files identical: $1 $2"
}

"$retra" build awari --stones "$stones" --db "$work/alone" --threads 2 --no-progress > /dev/null
"${mpi[@]}" "$retra" build awari --stones "$stones" --db "$work/ranks" --threads 1 --json \
  > "$work/out.json"
same "$work/alone" "$work/ranks"
# One JSON document: rank 0's (the other rank's stdout is silent).
python3 - "$work/out.json" "$work/ranks/manifest.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
assert out["ok"] and out["ranks"] == 2, out
man = json.load(open(sys.argv[2]))
assert all(s["build"]["ranks"] == 2 for s in man["segments"]), "manifest ranks"
print("report and manifest: 2 ranks")
PY
# Capture targets read block-wise from the files rank 0 wrote (the other rank reads the manifest
# again after each segment).
"${mpi[@]}" "$retra" build awari --stones "$stones" --db "$work/ranks-low" --threads 1 \
  --low-memory --no-progress > /dev/null
same "$work/alone" "$work/ranks-low"
"$retra" build xiangqi --endgame KRKG KCKG --db "$work/xq-alone" --threads 1 --no-progress \
  > /dev/null
"${mpi[@]}" "$retra" build xiangqi --endgame KRKG KCKG --db "$work/xq-ranks" --threads 1 \
  --no-progress > /dev/null
same "$work/xq-alone" "$work/xq-ranks"

# Refused on every rank, exit 2 (usage), one message.
for args in "verify --db $work/ranks" "build awari --stones 0-8 --db $work/x --out-of-core"; do
  set +e
  # shellcheck disable=SC2086
  "${mpi[@]}" "$retra" $args > "$work/refused.out" 2> "$work/refused.err"
  code=$?
  set -e
  [ "$code" -ne 0 ] || fail "mpirun retra $args succeeded"
  grep -q "mpirun" "$work/refused.err" || fail "no message for: $args"
  echo "refused ($code): $args"
done
[ ! -e "$work/x" ] || fail "a refused build created its directory"
echo "mpi build: all checks held"
