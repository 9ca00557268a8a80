#!/usr/bin/env bash
# A/B of two or more retra binaries on one Awari stone count: the smaller counts are built once,
# then the segment is rebuilt (--force) with each binary in turn (A, B, A, B, ...), so that the
# machine's drift falls on every binary alike. Prints each run's kernel and wall seconds, user
# and system time, minor faults and peak RSS (/usr/bin/time), then per binary the median kernel
# time, and fails when two runs wrote different segment files: a faster binary must write the
# same bytes. MEMORY times the out-of-core kernel (docs/PERFORMANCE.md, out of core).
# Usage: bench/awari_ab.sh STONES BINARY BINARY... (e.g. 20 /tmp/retra-old build/release/retra)
# Environment: ROUNDS (default 3), THREADS (default: all), MEMORY (passed as --memory, e.g. 204M),
#              DB (keep the databases there; default: temp)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:?usage: bench/awari_ab.sh STONES BINARY BINARY...}"
shift
[ $# -ge 2 ] || { echo "bench/awari_ab.sh: give two binaries or more" >&2; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "bench/awari_ab.sh: '$b' is not an executable" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "bench/awari_ab.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
rounds="${ROUNDS:-3}"
threads="${THREADS:-$(nproc)}"
dir="${DB:-$(mktemp -d "${TMPDIR:-/tmp}/retra-awari-ab-XXXXXX")}"
[ -n "${DB:-}" ] || trap 'rm -rf "$dir"' EXIT
mem=()
[ -z "${MEMORY:-}" ] || mem=(--memory "$MEMORY")
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "threads $threads; Awari $n stones, $rounds rounds${MEMORY:+, --memory $MEMORY}"
if [ "$n" -gt 0 ]; then
  "$1" build awari --stones "0-$((n - 1))" --db "$dir/db" --threads "$threads" --no-progress >/dev/null
fi
results="$dir/results"
: >"$results"
for ((r = 0; r < rounds; r++)); do
  for b in "$@"; do
    /usr/bin/time -v "$b" build awari --stones "$n" --force --db "$dir/db" --threads "$threads" \
      "${mem[@]}" --no-progress --json >"$dir/run.json" 2>"$dir/run.time"
    python3 - "$b" "$dir/run.json" "$dir/run.time" "$(sha256sum "$dir/db/awari-$n.rseg" | cut -c1-16)" \
      <<'PY' | tee -a "$results"
import json, re, sys
b, run, tm, digest = sys.argv[1:]
seg = [s for s in json.load(open(run))["segments"] if not s.get("skipped")][0]
t = open(tm).read()
g = lambda p: float(re.search(p + r".*: (\S+)", t).group(1))
user, sys_, minflt, rss = g("User time"), g("System time"), int(g("Minor")), g("Maximum resident")
print(f"{b:<32} kernel {seg['kernel_seconds']:7.2f}  wall {seg['seconds']:7.2f}"
      f"  user {user:7.2f}  sys {sys_:7.2f}  minflt {minflt:>9}  rss {rss / 1024:7.1f} MiB"
      f"  file {digest}")
PY
  done
done
python3 - "$results" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("medians:")
for b in dict.fromkeys(r[0] for r in runs):
    k = [float(r[2]) for r in runs if r[0] == b]
    print(f"  {b:<30} kernel {statistics.median(k):7.2f}")
digests = {r[-1] for r in runs}
if len(digests) != 1:
    print("runs wrote different segment files:", ", ".join(sorted(digests)))
    sys.exit(1)
print("every run wrote the same segment file")
PY
