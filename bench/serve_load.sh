#!/usr/bin/env bash
# Load test of the web explorer (loopback only, bounded): builds small databases of each game (or
# takes --awari/--xiangqi DIRs), starts `retra serve` on a free port, and runs bench/serve_load
# with 1..16 keep-alive clients per database for S seconds each (default 5): requests per second,
# latency percentiles (ms), errors; then a thousand malformed requests and one good probe.
# Prints the server's peak RSS. Usage: bench/serve_load.sh [--seconds S] [--threads T]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=5 threads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --threads) threads=(--threads "$2"); shift 2 ;;
    *) echo "usage: bench/serve_load.sh [--seconds S] [--threads T]" >&2; exit 2 ;;
  esac
done
retra="${RETRA:-build/release/retra}"
load="${SERVE_LOAD:-build/release/bench/serve_load}"
[ -x "$retra" ] && [ -x "$load" ] || cmake --build build/release --target retra serve_load >/dev/null
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-serve-XXXXXX")"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
echo "machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
$retra build awari --stones 0-16 --db "$dir/awari" --no-progress >/dev/null
$retra build xiangqi --endgame KRKGG --db "$dir/xiangqi" --no-progress >/dev/null
$retra build chess --endgame KRvK,KQvK --db "$dir/chess" --no-progress >/dev/null
$retra serve --port 0 --json --db "$dir/awari" --db "$dir/xiangqi" --db "$dir/chess" \
  "${threads[@]}" >"$dir/serve.json" &
server=$!
for _ in $(seq 100); do grep -q '"port"' "$dir/serve.json" 2>/dev/null && break; sleep 0.1; done
port=$(grep '"port"' "$dir/serve.json" | tr -dc 0-9)
echo "retra serve on 127.0.0.1:$port (pid $server); $seconds s per row"
printf '%-8s %8s %10s %8s %12s %8s %8s %8s %8s\n' db clients requests errors "requests/s" \
  "p50 ms" "p90 ms" "p99 ms" "max ms"
status=0
for clients in 1 2 4 8 16; do
  $load "$port" awari "1,1,1,1,1,2,4,2,3,0,0,0" --clients "$clients" --seconds "$seconds" \
    --malformed 0 2>/dev/null || status=1
done
$load "$port" xiangqi "3k5/9/9/9/9/9/9/9/4R4/4K4 w" --clients 8 --seconds "$seconds" \
  --malformed 0 2>/dev/null || status=1
$load "$port" chess "8/8/8/4k3/8/8/8/4K2Q w - - 0 1" --clients 8 --seconds "$seconds" \
  --malformed 1000 || status=1
echo "server peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB\n", $2 / 1024}' /proc/$server/status)"
exit $status
