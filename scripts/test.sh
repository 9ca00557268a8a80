#!/usr/bin/env bash
# The whole test suite: installs what is missing, checks formatting, builds and runs every test
# in the release build (slow ones included), then again with asserts on under AddressSanitizer +
# UBSan (slow tests excluded), then the kernel, block cache, database and probe tests under
# ThreadSanitizer, and fuzzes every libFuzzer target briefly (scripts/fuzz.sh; the corpus and
# crash inputs are replayed by the suite itself). Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/check-format.sh
jobs="$(nproc)"
scripts/build.sh release
ctest --preset release -j "$jobs"
scripts/build.sh asan
ctest --preset asan -j "$jobs"
scripts/build.sh tsan
ctest --preset tsan -j "$jobs"
scripts/fuzz.sh "${RETRA_FUZZ_SECONDS:-20}"
echo "test.sh: all tests passed (release + asan/ubsan with asserts + tsan + fuzzing)"
