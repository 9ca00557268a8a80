#!/usr/bin/env bash
# Longest mates beyond the spec's list, from Nalimov's DTM tables as Conrady played them out
# (CCC, 2000; counted from whichever side moves first, so an even count is the loser to move):
# KPvK 56 plies (the longest 3-piece), KRvKP 85 (the longest 4-piece), KBNvKN 213 (the longest
# pawnless 5-piece). A second, independent generator's figures: builds the three with DTM only
# (everything their captures and promotions need comes with them) and reads the longest
# distance of either sign from `stats`, probes KBNvKN's longest mate back and verifies the tables
# (the one-pass check: every stored distance equals what its moves give).
# Label "long" (about a minute on 2 cores): `ctest --preset long -R ChessLongestMate`.
# Usage: chess_nalimov_figures_test.sh <retra binary>
set -euo pipefail
retra=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$retra" build chess --endgame KBNvKN,KRvKP --metrics dtm --db "$work/db" --no-progress > /dev/null
"$retra" stats --db "$work/db" --json > "$work/stats.json"
python3 - "$work/stats.json" > "$work/longest.txt" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["endgames"]
for name in ("KPvK", "KRvKP", "KBNvKN"):
    plies = max(abs(int(d)) for side in ("white", "black") for d in e[name][side]["dtm"])
    print(name, plies, e[name]["white"]["longest_dtm"]["fen"].replace(" ", "_"))
PY
cat "$work/longest.txt"
while read -r name plies fen; do
  case $name in
    KPvK) want=56 ;;
    KRvKP) want=85 ;;
    KBNvKN) want=213 ;;
  esac
  [ "$plies" = "$want" ] || fail "$name's longest mate is $plies plies, Nalimov's tables say $want"
  [ "$name" = KBNvKN ] && kbn_fen=${fen//_/ }
done < "$work/longest.txt"
"$retra" probe --db "$work/db" --json "$kbn_fen" > "$work/probe.json"
python3 - "$work/probe.json" <<'PY' || fail "probing $kbn_fen does not give mate in 107 (213 plies)"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["dtm"] == 213, j
PY
"$retra" verify --db "$work/db" --no-progress > "$work/verify.txt" || fail "verify rejects the tables"
echo "ok"
