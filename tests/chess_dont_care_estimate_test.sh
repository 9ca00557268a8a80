#!/usr/bin/env bash
# bench/chess_dont_care_estimate.py on the 3-piece set: with every segment sampled (or marked as
# a census) the estimate is exactly what one `recompress --dont-care` of the whole set writes,
# with no error; a partial sample keeps its census strata exact and reports an error; the set it
# reads never changes; a set that already has don't-care entries and a sample that leaves a
# stratum empty are refused with their exit codes.
# Usage: tests/chess_dont_care_estimate_test.sh RETRA
set -euo pipefail
cd "$(dirname "$0")/.."
retra="$1"
dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-dc-estimate-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
est=bench/chess_dont_care_estimate.py

"$retra" build chess --pieces 3 --metrics wdl,dtz --db "$dir/set" --threads 2 --no-progress \
  --json >/dev/null
sums() { (cd "$1" && sha256sum -- manifest.json *.rseg | sha256sum); }
before="$(sums "$dir/set")"

python3 "$est" --db "$dir/set" --retra "$retra" --threads 2 --census 0 --json >"$dir/all.json"
python3 "$est" --db "$dir/set" --retra "$retra" --threads 2 --census 1 --json >"$dir/census.json"
python3 "$est" --db "$dir/set" --retra "$retra" --threads 2 --census 0.5 --max-segments 3 \
  --seed 7 --json >"$dir/part.json"
[ "$(sums "$dir/set")" = "$before" ] || { echo "the set changed" >&2; exit 1; }

cp -a "$dir/set" "$dir/whole"
"$retra" recompress --db "$dir/whole" --dont-care --threads 2 --no-progress --json >"$dir/whole.json"

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
j = lambda n: json.load(open(f"{d}/{n}.json"))
whole, full, census, part = j("whole"), j("all"), j("census"), j("part")
after = {s["name"]: s["bytes_after"] for s in whole["segments"]}
assert whole["bytes_after"] < whole["bytes_before"], "marking saved nothing: a weak test"
for e in (full, census):
    assert e["segments_marked"] == e["segments"] == len(after), e["segments_marked"]
    assert {m["name"]: m["bytes_after"] for m in e["marked"]} == after, "per-segment bytes differ"
    assert e["estimate_bytes"] == whole["bytes_after"], (e["estimate_bytes"], whole["bytes_after"])
    assert e["stderr_bytes"] == 0
assert all(not r["census"] for r in full["strata"]) and all(r["census"] for r in census["strata"])
# The partial sample: KPvK's 6 segments (45% of the entries) marked whole and exact, 3 of the 4
# pawnless tables sampled.
cen = [r for r in part["strata"] if r["census"]]
smp = [r for r in part["strata"] if not r["census"]]
assert [r["stratum"] for r in cen] == ["3 pieces, pawns"], part["strata"]
assert [r["stratum"] for r in smp] == ["3 pieces, no pawns"], part["strata"]
assert smp[0]["sampled"] == 3 < smp[0]["segments"] == 4, smp
assert smp[0]["stderr_bytes"] > 0
exact = sum(b for n, b in after.items() if n.startswith("KPvK"))
assert cen[0]["estimate_bytes"] == exact and cen[0]["stderr_bytes"] == 0, (cen[0], exact)
for m in part["marked"]:
    assert m["bytes_after"] == after[m["name"]], m
lo, hi = part["ci95_bytes"]
assert lo < part["estimate_bytes"] < hi
print(f"estimate {full['estimate_bytes']:.0f} bytes = recompress {whole['bytes_after']} bytes; "
      f"partial {part['estimate_bytes']:.0f} ({lo:.0f}-{hi:.0f})")
PY

set +e
python3 "$est" --db "$dir/whole" --retra "$retra" --json >"$dir/out" 2>"$dir/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "already has don't-care entries" "$dir/err" ||
  { echo "a marked set: exit $rc, $(cat "$dir/err")" >&2; exit 1; }
set +e
python3 "$est" --db "$dir/set" --retra "$retra" --census 0 --seconds 0 >"$dir/out" 2>"$dir/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "was marked in 0 s" "$dir/err" ||
  { echo "an empty stratum: exit $rc, $(cat "$dir/err")" >&2; exit 1; }
[ "$(sums "$dir/set")" = "$before" ] || { echo "the set changed" >&2; exit 1; }
echo "dont-care estimate: all checks held"
