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
# Unknown moves are refused before anything is read or written.
if "$retra" recompress --db "$dir/conversions" --dont-care --dont-care-moves pushes \
  > /dev/null 2>&1; then
  echo "recompress accepted --dont-care-moves pushes" >&2
  exit 1
fi
"$retra" recompress --db "$dir/conversions" --dont-care --dont-care-moves conversions --level 3 \
  --block-size 4096 --threads 2 --no-progress --json > "$dir/conversions.json"
# `info` tells the two apart: "cap" where captures decided the entries, "yes" where all moves did.
shows() {  # shows DB WORD: info's row of KRvKN says WORD in the dc column
  local out
  out=$("$retra" info --db "$1")
  grep -q "^ *KRvKN .* $2 " <<< "$out" ||
    { echo "info does not show '$2' for KRvKN in $1" >&2; exit 1; }
}
shows "$dir/conversions" yes
"$retra" recompress --db "$dir/archived" --dont-care --level 3 --block-size 4096 --threads 2 \
  --no-progress --json > "$dir/recompress.json.part"
shows "$dir/archived" cap
mv "$dir/recompress.json.part" "$dir/recompress.json"
