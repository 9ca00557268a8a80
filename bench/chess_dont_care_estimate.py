#!/usr/bin/env python3
"""What a chess set would take archived with don't-care entries, from a random sample of it.

Marking a whole 3-5 piece set (`retra recompress --dont-care`) is hours of zstd -19 on a small
machine; this marks a seeded random sample of its segments, each in its own run on a hard-linked
copy of the set, and estimates the whole by stratified ratio estimation against the segments'
bytes as they are, with a 95% confidence interval. The set itself is never written: `recompress`
writes a new file and renames it, so the copy's links are replaced and the set's stay as they were.

Strata are (pieces, pawns or not) from the table names; a stratum with at most --census of the
set's entries is marked whole (its bytes are then exact), the others are sampled in one random
order until --seconds have passed. A run marks one segment of the copy, which is then put back
as the set has it, so that every segment is marked with exact dependencies whatever the order.

Usage: bench/chess_dont_care_estimate.py --db SET [--retra BIN] [--seconds S] [--seed N]
           [--max-segments N] [--threads T] [--census FRACTION] [--moves captures|conversions] [--work DIR]
           [--against MIB] [--json]
Exit codes: 0 estimated; 1 a run failed or the set changed; 2 bad arguments or an unusable set.
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time


def fail(msg, code=2):
    print(f"chess_dont_care_estimate: {msg}", file=sys.stderr)
    sys.exit(code)


def load_manifest(db):
    path = os.path.join(db, "manifest.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path} ({e}); --db must name a built chess database")


def stratum(name):
    """(pieces, pawns) of a WDL+DTZ segment's table: KRPvKR_w6 -> (5, True)."""
    table = name.split("_")[0]
    m = re.fullmatch(r"K([QRBNP]*)vK([QRBNP]*)", table)
    if not m:
        return None
    pieces = 2 + len(m.group(1)) + len(m.group(2))
    return (pieces, "P" in table)


def stratum_label(key):
    return f"{key[0]} pieces, {'pawns' if key[1] else 'no pawns'}"


def database_files(db):
    """The manifest and the segment files: not the lock, which each process writes its own pid
    into and which must never be shared by a link."""
    return sorted(n for n in os.listdir(db)
                  if n == "manifest.json" or (n.endswith(".rseg") and not n.startswith(".")))


def restore(src, dst):
    """Put dst back as src has it: segment files the run wrote are removed, src's linked back."""
    want = set(database_files(src))
    for n in database_files(dst):
        if n not in want:
            os.remove(os.path.join(dst, n))
    for n in want:
        s, d = os.path.join(src, n), os.path.join(dst, n)
        if n == "manifest.json":
            shutil.copy2(s, d)
        elif not os.path.exists(d) or not os.path.samefile(s, d):
            if os.path.exists(d):
                os.remove(d)
            try:
                os.link(s, d)
            except OSError:  # another file system
                shutil.copy2(s, d)


def link_copy(src, dst):
    """dst: a new copy of the database src whose segment files are hard links (copies across
    file systems), and whose manifest is a real copy."""
    os.makedirs(dst)
    restore(src, dst)


def fingerprint(db):
    """The set's manifest and every segment file's identity (inode, size, mtime)."""
    h = hashlib.sha256()
    for n in database_files(db):
        st = os.stat(os.path.join(db, n))
        h.update(f"{n} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n".encode())
    with open(os.path.join(db, "manifest.json"), "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def mark(retra, work, names, threads, moves):
    """Runs `recompress --dont-care` on names in work; per name, its JSON segment record."""
    cmd = [retra, "recompress", "--db", work, "--dont-care", "--dont-care-moves", moves,
           "--segment", ",".join(names), "--threads", str(threads), "--no-progress", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"`{' '.join(cmd)}` exited {r.returncode}: {r.stderr.strip()}", 1)
    out = json.loads(r.stdout)
    return {s["name"]: s for s in out["segments"]}


def ratio_estimate(sample, population_bytes, population_count):
    """Ratio estimate of a stratum's bytes after marking and its variance (simple random sample
    of segments without replacement; the auxiliary is a segment's bytes before)."""
    n = len(sample)
    x = sum(b for b, _ in sample)
    y = sum(a for _, a in sample)
    r = y / x if x else 1.0
    total = r * population_bytes
    if n == population_count:
        return total, 0.0
    if n < 2:
        return total, math.inf
    s2 = sum((a - r * b) ** 2 for b, a in sample) / (n - 1)
    var = population_count**2 * (1 - n / population_count) * s2 / n
    return total, var


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="a built chess database with exact files")
    ap.add_argument("--retra", default=os.environ.get("RETRA", "build/release/retra"))
    ap.add_argument("--seconds", type=float, default=1800, help="time for the sample (s)")
    ap.add_argument("--max-segments", type=int, help="stop the sample after this many segments")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--census", type=float, default=0.02,
                    help="strata with at most this share of the entries are marked whole")
    ap.add_argument("--moves", choices=["captures", "conversions"], default="captures")
    ap.add_argument("--work", help="where the copy goes (default: a temporary directory beside "
                    "the set, removed at the end)")
    ap.add_argument("--against", type=float, help="MiB to compare the estimate with")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.seconds < 0 or a.threads < 1 or not 0 <= a.census <= 1 or (a.max_segments or 0) < 0:
        fail("--seconds and --max-segments must be >= 0, --threads >= 1 and --census within 0..1")
    if not os.access(a.retra, os.X_OK):
        fail(f"'{a.retra}' is not an executable retra (set --retra or RETRA)")

    m = load_manifest(a.db)
    if m.get("game") != "chess":
        fail(f"{a.db} holds '{m.get('game')}' tables, not chess")
    segs = [s for s in m["segments"] if not s["name"].endswith(".dtm")]
    for s in segs:
        if s["build"].get("dont_care"):
            fail(f"segment {s['name']} already has don't-care entries; the estimate needs the "
                 "set's exact files (as built or archived without --dont-care)")
        if stratum(s["name"]) is None:
            fail(f"segment {s['name']}: not a chess table name")
    if not segs:
        fail(f"{a.db} has no WDL+DTZ segments")
    total_entries = sum(s["entries"] for s in segs)
    strata = {}
    for s in segs:
        strata.setdefault(stratum(s["name"]), []).append(s)
    census = {k for k, v in strata.items() if sum(s["entries"] for s in v) <= a.census * total_entries}

    before = fingerprint(a.db)
    parent = os.path.dirname(os.path.abspath(a.db))
    tmp = None
    if a.work:
        if os.path.exists(a.work):
            fail(f"--work {a.work} exists; name a new directory")
        work = a.work
    else:
        tmp = tempfile.mkdtemp(prefix="dont-care-estimate-", dir=parent)
        work = os.path.join(tmp, "db")
    link_copy(a.db, work)

    marked = {}  # name -> record
    t0 = time.monotonic()
    try:
        census_names = [s["name"] for k in sorted(census) for s in strata[k]]
        if census_names:
            marked.update(mark(a.retra, work, census_names, a.threads, a.moves))
            restore(a.db, work)
        order = [s["name"] for k in sorted(strata) if k not in census for s in strata[k]]
        random.Random(a.seed).shuffle(order)
        for name in order:
            if time.monotonic() - t0 >= a.seconds or (
                    a.max_segments is not None and len(marked) - len(census_names) >= a.max_segments):
                break
            marked.update(mark(a.retra, work, [name], a.threads, a.moves))
            restore(a.db, work)
            if not a.json:
                r = marked[name]
                print(f"  {name:<14} {r['bytes_before']:>12,} -> {r['bytes_after']:>12,} "
                      f"({r['bytes_after'] / r['bytes_before']:.1%}) {r['seconds']:7.1f} s",
                      flush=True)
    finally:
        shutil.rmtree(tmp if tmp else work, ignore_errors=True)
    wall = time.monotonic() - t0
    if fingerprint(a.db) != before:
        fail(f"{a.db} changed while the estimate ran", 1)

    rows, est, var = [], 0.0, 0.0
    mib = 2.0**20
    for k in sorted(strata):
        v = strata[k]
        pop_bytes = sum(s["file_bytes"] for s in v)
        sample = [(marked[s["name"]]["bytes_before"], marked[s["name"]]["bytes_after"])
                  for s in v if s["name"] in marked]
        for s in v:  # the runs read the same files the manifest lists
            if s["name"] in marked and marked[s["name"]]["bytes_before"] != s["file_bytes"]:
                fail(f"{s['name']}: the run read {marked[s['name']]['bytes_before']} bytes, the "
                     f"manifest lists {s['file_bytes']}", 1)
        if not sample:
            fail(f"no segment of the stratum '{stratum_label(k)}' was marked in {a.seconds:g} s; "
                 "give --seconds more time", 1)
        t, vr = ratio_estimate(sample, pop_bytes, len(v))
        est += t
        var += vr
        rows.append({"stratum": stratum_label(k), "segments": len(v),
                     "entries": sum(s["entries"] for s in v), "sampled": len(sample),
                     "census": k in census, "bytes": pop_bytes,
                     "sampled_bytes_before": sum(b for b, _ in sample),
                     "sampled_bytes_after": sum(x for _, x in sample),
                     "estimate_bytes": t, "stderr_bytes": math.sqrt(vr)})
    se = math.sqrt(var)
    positions = sum(marked[n]["entries"] for n in marked)
    result = {
        "db": a.db, "moves": a.moves, "seed": a.seed, "threads": a.threads,
        "segments": len(segs), "segments_marked": len(marked),
        "bytes": sum(s["file_bytes"] for s in segs),
        "bytes_marked_before": sum(r["bytes_before"] for r in marked.values()),
        "entries": total_entries, "entries_marked": positions,
        "estimate_bytes": est, "stderr_bytes": se,
        "ci95_bytes": [est - 1.96 * se, est + 1.96 * se], "wall_seconds": wall,
        "positions_per_second": positions / wall if wall > 0 else 0.0, "strata": rows,
        "marked": [{"name": n, "bytes_before": r["bytes_before"], "bytes_after": r["bytes_after"],
                    "entries": r["entries"], "seconds": r["seconds"]} for n, r in marked.items()],
    }
    if a.against is not None:
        result["against_mib"] = a.against
        result["ratio"] = est / mib / a.against
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'stratum':<22} {'segments':>8} {'marked':>6} {'bytes now':>14} {'estimate':>14} "
          f"{'std err':>10}")
    for r in rows:
        print(f"{r['stratum']:<22} {r['segments']:>8} {r['sampled']:>6} {r['bytes']:>14,} "
              f"{r['estimate_bytes']:>14,.0f} {r['stderr_bytes']:>10,.0f}"
              f"{'  (whole)' if r['census'] else ''}")
    print(f"marked {len(marked)} of {len(segs)} segments ({positions:,} of {total_entries:,} "
          f"positions, {result['bytes_marked_before'] / result['bytes']:.1%} of the bytes) in "
          f"{wall:.0f} s, {result['positions_per_second'] / 1e6:.2f} M positions/s")
    print(f"estimate: {est / mib:.1f} MiB from {result['bytes'] / mib:.1f} MiB, 95% interval "
          f"{result['ci95_bytes'][0] / mib:.1f}-{result['ci95_bytes'][1] / mib:.1f} MiB"
          + (f"; {result['ratio']:.3f} times {a.against:g} MiB" if a.against is not None else ""))


if __name__ == "__main__":
    main()
