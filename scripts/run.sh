#!/usr/bin/env bash
# The main job on a small default: installs what is missing, builds retra, installs the Python
# module `retra` into the user's site-packages (no root needed; `import retra` then works in
# python3), builds Awari databases for 0..N stones (default 16) into ./db, verifies them and probes
# the spec's 16-stone example.
# Usage: scripts/run.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
stones="${1:-16}"
scripts/setup.sh
scripts/build.sh release >/dev/null
cmake --install build/release --component python >/dev/null
retra=build/release/retra
$retra build awari --stones "0-$stones" --db ./db
$retra verify --db ./db
if [ "$stones" -ge 16 ]; then
  $retra probe --db ./db 1,1,1,1,1,2,4,2,3,0,0,0
fi
