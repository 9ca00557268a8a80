#!/usr/bin/env bash
# The spec's 5-piece figure: KBBvKN, White to move, 66 moves (131 plies). It is Thompson's
# distance to conversion, which for a table without pawns is retra's distance to zeroing: the
# longest DTZ (a cursed win, beyond what a byte holds, from the segment's far section) must be
# 131 plies; the same position's distance to mate is 155 plies (mate in 78). Builds KBBvKN with
# everything its captures need, reads `stats`, probes the example back, and verifies the tables.
# Label "long" (about a minute on 2 cores): `ctest --preset long -R ChessLongestMate`.
# Usage: chess_longest_mate_test.sh <retra binary>
set -euo pipefail
retra=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$retra" build chess --endgame KBBvKN --db "$work/db" --no-progress > /dev/null
"$retra" stats --db "$work/db" --json > "$work/stats.json"
read -r dtz fen dtm < <(python3 - "$work/stats.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["endgames"]["KBBvKN"]["white"]
print(w["longest_cursed_dtz"]["plies"], w["longest_cursed_dtz"]["fen"].replace(" ", "_"),
      w["longest_dtm"]["plies"])
PY
)
fen=${fen//_/ }
echo "KBBvKN, White to move: longest DTZ $dtz plies ($fen), longest DTM $dtm plies"
[ "$dtz" = 131 ] || fail "KBBvKN's longest distance to zeroing is $dtz plies, the spec says 131"
[ "$dtm" = 155 ] || fail "KBBvKN's longest mate is $dtm plies, not 155"
"$retra" probe --db "$work/db" --json "$fen" > "$work/probe.json"
python3 - "$work/probe.json" <<'PY' || fail "probing $fen does not give a cursed win, DTZ 131"
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["wdl"], j["dtz"]) == ("cursed-win", 131), j
assert max(m["dtz"] for m in j["moves"]) == 131, j["moves"]
PY
"$retra" verify --db "$work/db" --no-progress > "$work/verify.txt" || fail "verify rejects the tables"
echo "ok"
