#!/usr/bin/env bash
# Fuzzes every libFuzzer target (tests/fuzz/) for SECONDS each (default 60), two at a time, under
# ASan + UBSan with asserts on, starting from the seed corpus in tests/fuzz/corpus/<target>/.
# Prints executions, executions per second and corpus size per target. A crash, leak, timeout or
# broken invariant is copied into tests/fuzz/crashes/<target>/ (the suite replays that directory
# from then on) and makes the script exit 1. RETRA_FUZZ_QUICK=ON (the suite's short run) builds
# the games' module tables at -O0: a faster build, slower fuzzing of the probe paths.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_positions fuzz_names fuzz_files fuzz_c_api fuzz_serve)
scripts/setup.sh
cmake --preset fuzz -DRETRA_FUZZ_QUICK="${RETRA_FUZZ_QUICK:-OFF}" >/dev/null
cmake --build --preset fuzz >/dev/null
work=build/fuzz/fuzzing
mkdir -p "$work"
run_one() {
  local t="$1" max_len=4096
  [ "$t" = fuzz_files ] && max_len=65536
  rm -rf "$work/$t/artifacts"  # only this run's findings are reported
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  # New inputs go to the work corpus; the seeds are read, never written.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=cmake/ubsan.supp \
  OMP_WAIT_POLICY=PASSIVE \
    "build/fuzz/tests/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$work/$t/artifacts/" "$work/$t/corpus" "tests/fuzz/corpus/$t" \
    >"$work/$t/log" 2>&1 || true
}
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$(nproc)" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait
status=0
printf '%-16s %12s %10s %8s %s\n' target executions "exec/s" corpus result
for t in "${targets[@]}"; do
  log="$work/$t/log"
  # A crash prints the final statistics twice: take the last.
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  runs=${runs:-0} rate=${rate:-0}
  corpus=$(find "$work/$t/corpus" "tests/fuzz/corpus/$t" -type f | wc -l)
  found=$(find "$work/$t/artifacts" -type f | wc -l)
  result=ok
  if [ "$found" -gt 0 ]; then
    result="FOUND $found (copied to tests/fuzz/crashes/$t/; log $log)"
    cp "$work/$t/artifacts/"* "tests/fuzz/crashes/$t/"
    status=1
  elif ! grep -q 'Done [0-9]* runs' "$log"; then
    result="did not finish (log $log)"
    status=1
  fi
  printf '%-16s %12s %10s %8s %s\n' "$t" "$runs" "$rate" "$corpus" "$result"
done
exit $status
