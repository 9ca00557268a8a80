#!/usr/bin/env bash
# Builds the databases chess_dont_care_test reads, once for all its tests (a ctest fixture):
# KQvK, KPvK, KRvKN and KRvKP with all three metrics, exact in DIR/exact, archived with
# don't-care entries decided by captures in DIR/archived and by every converting move in
# DIR/conversions (zstd -3 and 4096-entry blocks: runs that cross blocks, fills at block
# starts), with the recompressions' reports in DIR/recompress.json (written last: the fixture is
# complete when it is there) and DIR/conversions.json.
# Usage: chess_dont_care_db.sh <retra binary> <DIR>
set -euo pipefail
retra=$1
dir=$2
rm -rf "$dir"
"$retra" build chess --endgame KQvK,KPvK,KRvKN,KRvKP --db "$dir/exact" --threads 2 \
  --no-progress > /dev/null
cp -r "$dir/exact" "$dir/archived"
cp -r "$dir/exact" "$dir/conversions"
"$retra" recompress --db "$dir/conversions" --dont-care --dont-care-moves conversions --level 3 \
  --block-size 4096 --threads 2 --no-progress --json > "$dir/conversions.json"
"$retra" recompress --db "$dir/archived" --dont-care --level 3 --block-size 4096 --threads 2 \
  --no-progress --json > "$dir/recompress.json.part"
mv "$dir/recompress.json.part" "$dir/recompress.json"
