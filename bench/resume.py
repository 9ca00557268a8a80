#!/usr/bin/env python3
"""Macro benchmark of resumable builds (issue 11): builds Awari 0..N uninterrupted, then the same
database again while killing (SIGKILL) the build of the N-stone segment at random points
`--kills` times, each rerun resuming from the segment's checkpoint. Prints every run's wall time,
the total work against the uninterrupted build, whether every segment file is byte-identical
(cmp) and the largest checkpoint file.

Usage: bench/resume.py [--stones 24] [--kills 3] [--checkpoint-every 10] [--threads 2] [--seed 1]
"""
import argparse
import filecmp
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--stones", type=int, default=24)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--checkpoint-every", type=float, default=10)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the databases")
    a = ap.parse_args()
    retra = os.environ.get("RETRA", os.path.join(ROOT, "build/release/retra"))
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="retra-resume-")
    ref, db = os.path.join(work, "ref"), os.path.join(work, "db")
    n = a.stones
    common = ["--threads", str(a.threads), "--no-progress"]

    def build(d, stones, kill_after=None, extra=()):
        cmd = [retra, "build", "awari", "--stones", stones, "--db", d, *common, *extra]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        biggest = 0
        while p.poll() is None:
            for f in os.listdir(d) if os.path.isdir(d) else []:
                if f.endswith(".ckpt"):
                    try:
                        biggest = max(biggest, os.path.getsize(os.path.join(d, f)))
                    except OSError:
                        pass
            if kill_after is not None and time.monotonic() - t0 >= kill_after:
                p.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
        out, _ = p.communicate()
        wall = time.monotonic() - t0
        if kill_after is None and p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{out}")
        return wall, p.returncode, out, biggest

    print(f"machine: {os.cpu_count()} hardware threads; Awari 0..{n}, {a.threads} threads, "
          f"{a.kills} kills, --checkpoint-every {a.checkpoint_every}")
    t_ref, _, _, _ = build(ref, f"0-{n}")
    with open(os.path.join(ref, "manifest.json")) as f:
        seg = next(s for s in json.load(f)["segments"] if s["name"] == str(n))
    seg_seconds = seg["build"]["seconds"]
    print(f"uninterrupted 0..{n}: {t_ref:.1f} s (the {n}-stone segment {seg_seconds:.1f} s)")

    t_pre, _, _, _ = build(db, f"0-{n - 1}")
    print(f"resumable: 0..{n - 1} first: {t_pre:.1f} s")
    total = t_pre
    ckpt = ["--checkpoint-every", str(a.checkpoint_every)]
    largest = 0
    kills = 0
    for k in range(a.kills):
        after = seg_seconds * rng.uniform(0.1, 0.9)
        wall, code, out, biggest = build(db, str(n), after, ckpt)
        largest = max(largest, biggest)
        total += wall
        resumed = ", resumed" if "resuming from checkpoint" in out else ""
        if code == 0:  # it finished before its kill: the remaining kills have nothing to kill
            print(f"  run {k + 1}: finished in {wall:.1f} s, before its kill at {after:.1f} s"
                  f"{resumed}; {a.kills - k - 1} kill(s) left out")
            break
        kills += 1
        print(f"  run {k + 1}: killed after {wall:.1f} s (exit {code}){resumed}")
    wall, code, out, biggest = build(db, str(n), None, ckpt)
    largest = max(largest, biggest)
    total += wall
    notes = [l for l in out.splitlines() if l.startswith("note:")]
    print(f"  last run: finished in {wall:.1f} s; " + "; ".join(n[6:] for n in notes))
    files = sorted(f for f in os.listdir(ref) if f.endswith(".rseg"))
    same = all(filecmp.cmp(os.path.join(ref, f), os.path.join(db, f), shallow=False) for f in files)
    left = [f for f in os.listdir(db) if f.endswith(".ckpt")]
    print(f"{kills} kills; total work {total:.1f} s = {total / t_ref:.2f}x the uninterrupted build; "
          f"{len(files)} segment files {'byte-identical' if same else 'DIFFERENT'}; "
          f"largest checkpoint {largest / 2**20:.1f} MiB; checkpoints left: {len(left)}")
    if not a.keep:
        shutil.rmtree(work)
    else:
        print(f"kept: {work}")
    return 0 if same and not left else 1


if __name__ == "__main__":
    sys.exit(main())
