#!/usr/bin/env bash
# Builds the databases chess_dont_care_test reads, once for all its tests (a ctest fixture):
# KQvK, KPvK, KRvKN and KRvKP with all three metrics, exact in DIR/exact and archived with
# don't-care entries in DIR/archived (zstd -3 and 4096-entry blocks: runs that cross blocks,
# fills at block starts), with the recompression's report in DIR/recompress.json.
# Usage: chess_dont_care_db.sh <retra binary> <DIR>
set -euo pipefail
retra=$1
dir=$2
rm -rf "$dir"
"$retra" build chess --endgame KQvK,KPvK,KRvKN,KRvKP --db "$dir/exact" --threads 2 \
  --no-progress > /dev/null
cp -r "$dir/exact" "$dir/archived"
"$retra" recompress --db "$dir/archived" --dont-care --level 3 --block-size 4096 --threads 2 \
  --no-progress --json > "$dir/recompress.json.part"
mv "$dir/recompress.json.part" "$dir/recompress.json"
