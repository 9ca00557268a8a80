#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks formatting, builds and runs every test
# in the release build (slow ones included), then again with asserts on under AddressSanitizer +
# UBSan (slow tests excluded), then the kernel, segment, block cache, database and probe tests
# under ThreadSanitizer, and fuzzes every libFuzzer target briefly (scripts/fuzz.sh; the corpus and
# crash inputs are replayed by the suite itself). Exits non-zero on the first failure. Prints
# each phase's wall time at the end: CI gives the suite 25 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
times=()
phase() {  # phase NAME COMMAND...: runs the command and remembers its wall time
  local name="$1" start=$SECONDS
  shift
  "$@"
  times+=("$(printf '  %-14s %5d s' "$name" $((SECONDS - start)))")
}
phase setup scripts/setup.sh
phase format scripts/check-format.sh
phase build-release scripts/build.sh release
phase test-release ctest --preset release -j "$jobs"
phase build-asan scripts/build.sh asan
phase test-asan ctest --preset asan -j "$jobs"
phase build-tsan scripts/build.sh tsan
phase test-tsan ctest --preset tsan -j "$jobs"
phase fuzz env RETRA_FUZZ_QUICK=ON scripts/fuzz.sh "${RETRA_FUZZ_SECONDS:-10}"
echo "test.sh: wall time per phase ($SECONDS s in all):"
printf '%s\n' "${times[@]}"
echo "test.sh: all tests passed (release + asan/ubsan with asserts + tsan + fuzzing)"
