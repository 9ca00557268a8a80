#!/usr/bin/env python3
"""Macro benchmark of out-of-core builds (issue 11): builds Awari 0..N in memory, then again with
`--memory` at a fraction of what the in-memory build needs (its plan's peak; default a third) or at
a given size, so that the large segments run out of core. Prints per run the wall time, peak RSS
(and how much of it was file pages), positions/s, how each segment was built, the ratio of the
times, and whether every segment file is byte-identical (cmp).

Usage: bench/out_of_core.py [--stones 24] [--fraction 0.3333 | --memory 256M] [--threads 2]
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    """Runs cmd under /usr/bin/time -v: (seconds, peak RSS bytes)."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    rss = 0
    for line in p.stderr.splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1]) * 1024
    return secs, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--stones", type=int, default=24)
    ap.add_argument("--fraction", type=float, default=1 / 3)
    ap.add_argument("--memory", help="a --memory size instead of a fraction (e.g. 256M)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--keep", action="store_true", help="keep the databases")
    a = ap.parse_args()
    retra = os.environ.get("RETRA", os.path.join(ROOT, "build/release/retra"))
    work = tempfile.mkdtemp(prefix="retra-ooc-")
    mem_db, ooc_db = os.path.join(work, "memory"), os.path.join(work, "ooc")
    target = ["awari", "--stones", f"0-{a.stones}"]
    common = ["--threads", str(a.threads), "--no-progress"]
    plan = json.loads(subprocess.run([retra, "build", *target, "--db", mem_db, "--plan", "--json"],
                                     capture_output=True, text=True, check=True).stdout)["plan"]
    need = plan["peak_bytes"]
    limit = a.memory or f"{max(1, int(need * a.fraction) >> 20)}M"
    print(f"Awari 0..{a.stones}: the in-memory build needs {need / 2**20:.1f} MiB by its plan; "
          f"out of core with --memory {limit}; {a.threads} threads")
    results = {}
    for name, db, extra in (("in memory", mem_db, []), ("out of core", ooc_db, ["--memory", limit])):
        secs, rss = run([retra, "build", *target, "--db", db, *common, *extra])
        with open(os.path.join(db, "manifest.json")) as f:
            segs = json.load(f)["segments"]
        positions = sum(s["entries"] for s in segs)
        ooc = [s["name"] for s in segs if s["build"].get("arrays") == "out-of-core"]
        print(f"{name:>12}: {secs:8.1f} s  peak RSS {rss / 2**20:8.1f} MiB  "
              f"{positions / secs:.3g} positions/s  out of core: {', '.join(ooc) or 'none'}")
        for s in segs:
            b = s["build"]
            if b.get("arrays") == "out-of-core":
                k = b["kernel_stats"]
                print(f"{'':14}segment {s['name']}: kernel {b['kernel_seconds']:.1f} s "
                      f"(init {k['init_seconds']:.1f} s), {k.get('partitions', 0)} partitions, "
                      f"{k.get('spilled_bytes', 0) / 2**20:.0f} MiB spilled, "
                      f"targets {b['capture_targets']}")
        results[name] = secs
    same = all(filecmp.cmp(os.path.join(mem_db, f), os.path.join(ooc_db, f), shallow=False)
               for f in sorted(os.listdir(mem_db)) if f.endswith(".rseg"))
    print(f"out of core / in memory: {results['out of core'] / results['in memory']:.2f}x; "
          f"segment files byte-identical: {'yes' if same else 'NO'}")
    if not a.keep:
        shutil.rmtree(work)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
