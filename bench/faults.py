#!/usr/bin/env python3
"""Fault injection for retra builds and readers (issue 13; docs/RELIABILITY.md).

For every game it builds a reference database once, uninterrupted, then checks:
  kill      builds killed with SIGKILL at random points, again and again, while `retra probe`
            processes read the same directory; the rerun finishes with segment files
            byte-identical to the reference, a manifest recording the same segments, and no
            temporary file left; no probe ever printed a value other than the reference's or
            failed with anything but "not built yet"; no manifest ever named a missing file.
  readers   probes from many processes (the CLI) and threads (the Python module, when it can be
            imported) while another process builds: the same rule; and a second writer is
            refused with a message naming the lock holder's pid.
  disk      a build on a filesystem too small for it (tmpfs when root may mount one, else a file
            size limit) fails with exit 5 and a message that says what to do, leaves every
            finished segment verified and no temporary file; rerun with space, it finishes to
            the reference's bytes.
  damage    random bytes flipped in random segment files and in the manifest: `retra verify`
            fails on every one, and no probe prints a value other than the reference's.

The suite runs a short version (tests/CMakeLists.txt: Faults.Short); `bench/faults.py` with the
defaults is the long one. Exit status 0 when every check held, 1 otherwise. Standard library only
(plus the retra module for the reader threads); thread safety: a script.
"""

import argparse
import concurrent.futures
import filecmp
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# One build per game: big enough to have several segments and to take a moment, small enough to
# repeat many times. `start` positions begin the random walks that pick the probed positions.
TARGETS = {
    "awari": {"build": ["awari", "--stones", "0-14"],
              "start": ["2,2,1,1,1,1,2,1,1,1,1,0", "0,3,0,2,1,0,2,1,3,0,1,1"]},
    "xiangqi": {"build": ["xiangqi", "--endgame", "KCPKGG"],
                "start": ["3k1g3/4g4/9/4P4/9/9/9/4C4/9/4K4 w", "4k4/4g4/3g5/2P6/9/9/9/9/4C4/3K5 b"]},
    "chess": {"build": ["chess", "--endgame", "KRvKN"],
              "start": ["8/8/3k4/8/3n4/8/8/R3K3 w - - 0 1", "8/2k5/8/8/4n3/1R6/8/5K2 b - - 0 1"]},
}
LONG_TARGETS = {  # --long: bigger builds, more segments, longer kill windows
    "awari": {"build": ["awari", "--stones", "0-18"],
              "start": ["2,2,2,1,1,1,2,2,1,1,2,1", "0,3,0,2,1,0,2,1,3,0,1,1"]},
    "xiangqi": {"build": ["xiangqi", "--endgame", "KRPKAA"],
                "start": ["3k1a3/4a4/9/4P4/9/9/9/4R4/9/4K4 w", "4k4/4a4/3a5/2P6/9/9/9/9/4R4/3K5 b"]},
    "chess": {"build": ["chess", "--endgame", "KQvKR"],
              "start": ["8/8/3k4/8/3r4/8/8/Q3K3 w - - 0 1", "8/2k5/8/8/4r3/1Q6/8/5K2 b - - 0 1"]},
}
NOT_BUILT_EXIT = 3  # kNotFound: no database yet, or no such segment yet ("build it first")
NOT_BUILT_TEXT = ("build it first", "is not a retra database", "does not exist",
                  "is not in database", "is not in the database")


class Checks:
    """Counts checks and collects failures (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.failures = []
        self.counts = {}

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def fail(self, what):
        with self.lock:
            self.failures.append(what)
        print(f"FAIL: {what}", flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def probe(retra, db, position):
    return run([retra, "probe", "--db", str(db), "--json", position])


def walk_positions(retra, db, starts, count, rng):
    """`count` distinct positions reached by random walks from `starts` in a finished database."""
    seen = []
    for start in starts:
        r = probe(retra, db, start)
        if r.returncode != 0:
            sys.exit(f"start position {start!r} does not probe in {db}: {r.stderr.strip()}")
    attempts = 0
    while len(seen) < count and attempts < 20 * count:
        attempts += 1
        position = rng.choice(starts)
        for _ in range(rng.randint(0, 12)):
            j = json.loads(probe(retra, db, position).stdout)
            moves = [m for m in j.get("moves", []) if m.get("legal", True) and "child" in m]
            if not moves:
                break
            position = rng.choice(moves)["child"]
        if position not in seen:
            seen.append(position)
    return seen


def segment_files(db):
    return sorted(p.name for p in Path(db).glob("*.rseg"))


def temporaries(db):
    return sorted(p.name for p in Path(db).iterdir() if ".tmp-" in p.name)


def manifest_records(db):
    m = json.loads((Path(db) / "manifest.json").read_text())
    return {s["name"]: (s["file"], s["entries"], s["file_bytes"], s["header_checksum"])
            for s in m["segments"]}


def agrees(got, want):
    """`got` is `want`, except that a value may be null where a metric's segment is not built yet
    (chess DTM is built after WDL+DTZ): unknown, never another value."""
    if got is None:
        return True
    if isinstance(got, dict) and isinstance(want, dict):
        return set(got) == set(want) and all(
            (k == "best" and best_agrees(got, want)) or agrees(got[k], want[k]) for k in got)
    if isinstance(got, list) and isinstance(want, list):
        got, want = by_child(got), by_child(want)
        if isinstance(got, dict):  # moves: their order may follow a metric not built yet
            return agrees(got, want)
        return len(got) == len(want) and all(agrees(a, b) for a, b in zip(got, want))
    return got == want


def best_agrees(got, want):
    """The best move may differ from the reference's where a metric that breaks ties is not built
    yet (chess: two moves with equal DTZ, told apart by DTM): it must then tie with the reference's
    best move in every metric this answer has."""
    if got.get("best") == want.get("best"):
        return True
    missing = [k for k in ("dtm", "dtz") if k in got and got[k] is None]
    if not missing:
        return False
    moves = {m.get("uci"): m for m in want.get("moves", []) if isinstance(m, dict)}
    mine, theirs = moves.get(got.get("best")), moves.get(want.get("best"))
    if mine is None or theirs is None:
        return False
    return all(mine.get(k) == theirs.get(k) for k in ("wdl", "dtz", "dtm") if k not in missing)


def by_child(items):
    """A list of moves as a dict keyed by the child position, else the list itself."""
    if items and all(isinstance(m, dict) and "child" in m for m in items):
        return {m["child"]: m for m in items}
    return items


def difference(got, want, path=""):
    """The first place where two JSON values differ, for messages."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want)):
            if k == "best" and k in got and k in want and best_agrees(got, want):
                continue
            if k not in got or k not in want or not agrees(got[k], want[k]):
                return difference(got.get(k), want.get(k), f"{path}.{k}")
    if isinstance(got, list) and isinstance(want, list):
        got, want = by_child(got), by_child(want)
        if isinstance(got, dict) and isinstance(want, dict):
            return difference(got, want, path)
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want)):
            if not agrees(a, b):
                return difference(a, b, f"{path}[{i}]")
    return f"{path or 'value'}: {json.dumps(got)[:200]} instead of {json.dumps(want)[:200]}"


class Prober:
    """Probes `positions` in `db` from `procs` CLI loops and `threads` module threads until stopped;
    every answer must be the reference's or "not built yet"."""

    def __init__(self, retra, db, expected, checks, label, procs=2, threads=0):
        self.retra, self.db, self.expected, self.checks, self.label = retra, db, expected, checks, label
        self.stop = threading.Event()
        self.workers = [threading.Thread(target=self.cli_loop, args=(k,)) for k in range(procs)]
        if threads:
            try:
                import retra as module  # noqa: PLC0415 (optional)
                self.module = module
                self.workers += [threading.Thread(target=self.module_loop, args=(k,))
                                 for k in range(threads)]
            except ImportError:
                print("  (the retra Python module is not importable: CLI readers only)")

    def __enter__(self):
        for w in self.workers:
            w.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for w in self.workers:
            w.join()

    def cli_loop(self, k):
        positions = list(self.expected)
        i = k
        while not self.stop.is_set():
            position = positions[i % len(positions)]
            i += 1
            r = probe(self.retra, self.db, position)
            if r.returncode == 0:
                got = json.loads(r.stdout)
                if not agrees(got, self.expected[position]):
                    self.checks.fail(f"{self.label}: probe {position!r} printed another value: "
                                     f"{difference(got, self.expected[position])}")
                self.checks.count("probes answered")
            elif r.returncode == NOT_BUILT_EXIT and any(t in r.stderr for t in NOT_BUILT_TEXT):
                self.checks.count("probes not built yet")
                time.sleep(0.01)  # leave the writer the CPU while there is little to read
            else:
                self.checks.fail(f"{self.label}: probe {position!r} failed with exit "
                                 f"{r.returncode}: {r.stderr.strip()}")

    def module_loop(self, k):
        positions = list(self.expected)
        i = k
        while not self.stop.is_set():
            try:
                db = self.module.open(str(self.db))
            except self.module.NotFoundError:
                self.checks.count("probes not built yet")
                time.sleep(0.01)
                continue
            except self.module.Error as e:
                self.checks.fail(f"{self.label}: retra.open failed: {e}")
                continue
            for _ in range(len(positions)):
                position = positions[i % len(positions)]
                i += 1
                try:
                    got = db.probe(position).json
                    if not agrees(got, self.expected[position]):
                        self.checks.fail(f"{self.label}: module probe {position!r} gave another "
                                         f"value: {difference(got, self.expected[position])}")
                    self.checks.count("probes answered")
                except self.module.NotFoundError:
                    self.checks.count("probes not built yet")
                except self.module.Error as e:
                    self.checks.fail(f"{self.label}: module probe {position!r} failed: {e}")


def same_as_reference(ref, db, checks, label):
    """Segment bytes, manifest records and no temporaries."""
    ok = True
    if segment_files(db) != segment_files(ref):
        checks.fail(f"{label}: files {segment_files(db)} != reference {segment_files(ref)}")
        return False
    for name in segment_files(ref):
        if not filecmp.cmp(Path(ref) / name, Path(db) / name, shallow=False):
            checks.fail(f"{label}: {name} differs from the uninterrupted build's")
            ok = False
    if manifest_records(db) != manifest_records(ref):
        checks.fail(f"{label}: the manifest records other segments than the reference's")
        ok = False
    if temporaries(db):
        checks.fail(f"{label}: temporary files left: {temporaries(db)}")
        ok = False
    return ok


def manifest_names_only_existing_files(db, checks, label):
    path = Path(db) / "manifest.json"
    if not path.exists():
        return
    try:
        m = json.loads(path.read_text())
    except ValueError:
        checks.fail(f"{label}: manifest.json is not valid JSON after a kill")
        return
    for s in m["segments"]:
        f = Path(db) / s["file"]
        if not f.exists() or f.stat().st_size != s["file_bytes"]:
            checks.fail(f"{label}: the manifest names {s['file']}, which is missing or short")


def check_kills(args, game, build, ref, expected, ref_seconds, work, rng, checks):
    """Rounds from an empty directory: kill at random points until a rerun finishes by itself,
    then compare with the reference; until args.kills kills were made."""
    label = f"kill/{game}"
    kills = rounds = writes = 0
    with Prober(args.retra, work / f"{game}-kill-0", expected, checks, label, procs=2) as prober:
        while kills < args.kills:
            # Each round in a new directory (deleting one would pull files from under readers).
            db = work / f"{game}-kill-{rounds}"
            prober.db = db
            cmd = [args.retra, "build", *build, "--db", str(db), "--threads", str(args.threads)]
            while True:
                p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
                if kills < args.kills:  # (after the last kill, runs are waited for)
                    # Every other kill lands while a file is being written, if one is before
                    # the random time: the narrow window a uniform time would rarely hit.
                    deadline = time.time() + rng.uniform(0.0, ref_seconds)
                    mid_write = False
                    while time.time() < deadline and p.poll() is None:
                        if kills % 2 == 1 and db.exists() and temporaries(db):
                            mid_write = True
                            break
                        time.sleep(0.0005)
                    if p.poll() is None:
                        p.send_signal(signal.SIGKILL)
                        p.wait()
                        kills += 1
                        writes += mid_write
                        manifest_names_only_existing_files(db, checks, label)
                        continue
                _, err = p.communicate()
                if p.returncode != 0:
                    checks.fail(f"{label}: a rerun failed with exit {p.returncode}: {err.strip()}")
                    return
                break
            rounds += 1
            if same_as_reference(ref, db, checks, label):
                checks.count("kill rounds identical to the reference")
    checks.count("kills", kills)
    checks.count("kills while a file was being written", writes)
    print(f"  {game}: {kills} kills ({writes} while a file was being written) in {rounds} rounds, "
          "every rerun identical to the reference")


def check_readers(args, game, build, ref, expected, work, checks):
    db = work / f"{game}-readers"
    label = f"readers/{game}"
    cmd = [args.retra, "build", *build, "--db", str(db), "--threads", str(args.threads)]
    with Prober(args.retra, db, expected, checks, label, procs=args.reader_procs,
                threads=args.reader_threads):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # The second writer, once the first holds the lock: refused, naming the first's pid.
        lock = db / ".retra.lock"
        deadline = time.time() + 60
        while p.poll() is None and time.time() < deadline:
            if lock.exists() and lock.read_text().startswith(f"{p.pid} "):
                second = run(cmd)
                if p.poll() is None or second.returncode != 0:
                    want = f"locked by retra process {p.pid}"
                    if second.returncode != 5 or want not in second.stderr:
                        checks.fail(f"{label}: second writer: exit {second.returncode}, "
                                    f"{second.stderr.strip()!r} (wanted exit 5 and {want!r})")
                    else:
                        checks.count("second writers refused")
                break
            time.sleep(0.005)
        _, err = p.communicate()
        if p.returncode != 0:
            checks.fail(f"{label}: the build failed with exit {p.returncode}: {err.strip()}")
    same_as_reference(ref, db, checks, label)


def mount_tmpfs(path, size):
    if os.geteuid() != 0:
        return False
    r = run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)])
    return r.returncode == 0


def check_disk(args, game, build, ref, work, checks):
    label = f"disk/{game}"
    sizes = sorted((p.stat().st_size for p in Path(ref).glob("*.rseg")), reverse=True)
    total = sum(p.stat().st_size for p in Path(ref).iterdir())
    mnt = work / f"{game}-disk"
    mnt.mkdir()
    # Room for about half the database (but at least a page or two): some segments finish, one
    # write meets the full disk. Without mount rights, a file size limit below the largest segment.
    mounted = mount_tmpfs(mnt, max(8192, total // 2 // 4096 * 4096))
    db = mnt / "db"
    cmd = [args.retra, "build", *build, "--db", str(db), "--threads", str(args.threads)]
    try:
        if mounted:
            r = run(cmd)
            how = "tmpfs of half the database's size"
        else:
            limit = sizes[0] // 2

            def small_files():
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

            r = run(cmd, preexec_fn=small_files)
            how = f"RLIMIT_FSIZE {limit} bytes"
        want = ("run the same command again", "No space left on device" if mounted
                else "File too large")
        if r.returncode != 5 or not all(w in r.stderr for w in want):
            checks.fail(f"{label} ({how}): exit {r.returncode}, {r.stderr.strip()!r}; wanted exit "
                        f"5 and {want}")
        if temporaries(db):
            checks.fail(f"{label}: the failed build left temporary files: {temporaries(db)}")
        built = len(manifest_records(db)) if (db / "manifest.json").exists() else 0
        if built:
            v = run([args.retra, "verify", "--db", str(db), "--threads", str(args.threads)])
            if v.returncode != 0:
                checks.fail(f"{label}: the finished segments do not verify: {v.stdout}{v.stderr}")
        if mounted:
            run(["mount", "-o", "remount,size=" + str(4 * total + (1 << 20)), str(mnt)])
            r = run(cmd)
        else:
            r = run(cmd)
        if r.returncode != 0:
            checks.fail(f"{label}: the rerun with space failed: {r.stderr.strip()}")
        elif same_as_reference(ref, db, checks, label):
            checks.count("full disks survived")
        print(f"  {game}: {how}: failed cleanly after {built} finished segments; rerun identical")
    finally:
        if mounted:
            run(["umount", str(mnt)])


def check_damage(args, game, ref, expected, work, rng, checks):
    label = f"damage/{game}"
    db = work / f"{game}-damage"
    shutil.copytree(ref, db)
    files = [db / f for f in segment_files(db)] + [db / "manifest.json"]
    caught = 0
    for k in range(args.flips):
        # A quarter of the damage goes to the manifest, the rest to a random segment file.
        f = db / "manifest.json" if k % 4 == 3 else rng.choice(files[:-1])
        data = bytearray(f.read_bytes())
        at = rng.randrange(len(data))
        data[at] ^= rng.randrange(1, 256)
        original = f.read_bytes()
        f.write_bytes(bytes(data))
        try:
            v = run([args.retra, "verify", "--db", str(db), "--threads", str(args.threads)])
            if v.returncode == 0:
                checks.fail(f"{label}: verify passed with byte {at} of {f.name} changed")
            else:
                caught += 1
            for position, want in expected.items():
                r = probe(args.retra, db, position)
                if r.returncode == 0 and not agrees(json.loads(r.stdout), want):
                    checks.fail(f"{label}: with byte {at} of {f.name} changed, probe {position!r} "
                                f"printed another value")
                checks.count("damaged probes answered" if r.returncode == 0
                             else "damaged probes refused")
        finally:
            f.write_bytes(original)
    checks.count("damage caught by verify", caught)
    print(f"  {game}: verify caught {caught} of {args.flips} damaged files")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--retra", default=os.environ.get("RETRA_BINARY", "build/release/retra"))
    ap.add_argument("--games", default="awari,xiangqi,chess")
    ap.add_argument("--checks", default="kill,readers,disk,damage")
    ap.add_argument("--kills", type=int, default=25, help="SIGKILLs per game")
    ap.add_argument("--flips", type=int, default=40, help="damaged files per game")
    ap.add_argument("--positions", type=int, default=24, help="probed positions per game")
    ap.add_argument("--reader-procs", type=int, default=4)
    ap.add_argument("--reader-threads", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--long", action="store_true", help="the bigger builds of LONG_TARGETS")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--work", help="scratch directory (default: a new temporary one)")
    args = ap.parse_args()
    args.retra = str(Path(args.retra).resolve())
    rng = random.Random(args.seed)
    print(f"faults: seed {args.seed}, checks {args.checks}, games {args.games}", flush=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="retra-faults-"))
    work.mkdir(parents=True, exist_ok=True)
    checks = Checks()
    wanted = args.checks.split(",")
    t0 = time.time()
    try:
        for game in args.games.split(","):
            target = (LONG_TARGETS if args.long else TARGETS)[game]
            build = target["build"]
            ref = work / f"{game}-reference"
            started = time.time()
            r = run([args.retra, "build", *build, "--db", str(ref), "--threads", str(args.threads)])
            ref_seconds = time.time() - started
            if r.returncode != 0:
                sys.exit(f"reference build {build} failed: {r.stderr}")
            positions = walk_positions(args.retra, ref, target["start"], args.positions, rng)
            expected = {p: json.loads(probe(args.retra, ref, p).stdout) for p in positions}
            print(f"{game}: {' '.join(build)}: {len(segment_files(ref))} segment files, "
                  f"{ref_seconds:.2f} s uninterrupted, {len(expected)} probed positions", flush=True)
            if "kill" in wanted:
                check_kills(args, game, build, ref, expected, ref_seconds, work, rng, checks)
            if "readers" in wanted:
                check_readers(args, game, build, ref, expected, work, checks)
                print(f"  {game}: readers beside a writer: done")
            if "disk" in wanted:
                check_disk(args, game, build, ref, work, checks)
            if "damage" in wanted:
                check_damage(args, game, ref, expected, work, rng, checks)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"faults: {time.time() - t0:.1f} s, seed {args.seed}")
    for key in sorted(checks.counts):
        print(f"  {key}: {checks.counts[key]}")
    if checks.failures:
        print(f"faults: {len(checks.failures)} FAILED checks (seed {args.seed})")
        return 1
    print("faults: all checks held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
