#!/usr/bin/env bash
# Installs what retra needs to build and test on Debian 12, with apt-get, only if missing
# (stockfish is a second chess move generator for the tests only, never part of retra; clang and
# libomp, whose Archer tool makes OpenMP visible to ThreadSanitizer, build the TSan tests only;
# chromium, its driver and selenium run the web explorer's browser test; Open MPI runs builds over
# several processes, `mpirun -np N retra build`).
# Idempotent and silent when everything is already installed.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git
  libtbb-dev libzstd-dev libxxhash-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  clang-format python3 time
  libcpp-httplib-dev pybind11-dev python3-dev python3-numpy python3-pytest
  chromium chromium-driver python3-selenium
  clang libomp-14-dev libfuzzer-14-dev
  stockfish
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
