#!/usr/bin/env python3
"""A notebook-style tour of the `retra` Python module: build a small Awari database (with a
progress callback), probe a position and its moves, verify the database, and plot the 12-stone
value histogram from the stored bytes with numpy (and matplotlib, if it is installed; otherwise a
text histogram). Usage: examples/notebook.py [DB_DIR] (default ./db-notebook)

Run it after the README's set-up (which installs the module), or with
PYTHONPATH=build/release/python from the source tree."""
import sys

import numpy as np

import retra

db_dir = sys.argv[1] if len(sys.argv) > 1 else "db-notebook"

# %% Build Awari 0..12 stones (segments already built are skipped).
last = [""]


def progress(label, done, total):
    if label != last[0]:
        last[0] = label
        print(f"  {label}", file=sys.stderr)


reports = retra.build("awari", db_dir, stones="0-12", progress=progress)
print(f"built {sum(not r['skipped'] for r in reports)} segments "
      f"({sum(r['skipped'] for r in reports)} already there)")

# %% Probe a position: its value and every move's, as `retra probe --json` gives them.
db = retra.open(db_dir)
r = db.probe("2,1,0,1,1,2,1,0,0,0,2,2")
print(r)
for m in r.moves:
    print(f"  pit {m['pit']}: value {m['value']:+d} ({m['outcome']}) -> {m['child']}")

# %% Verify: every checksum and every value against its moves.
rep = retra.verify(db_dir)
print("verify:", "ok" if rep["ok"] else rep["failure"]["message"])

# %% The value histogram of the 12-stone segment, from the stored bytes (int8 scores,
# docs/FORMAT.md), checked against the statistics the build recorded.
entries = next(s["entries"] for s in db.info()["segments"] if s["name"] == "12")
values = db.stored("12", np.arange(entries, dtype=np.uint64)).view(np.int8)
scores, counts = np.unique(values, return_counts=True)
recorded = next(s for s in db.stats()["segments"] if s["stones"] == 12)["histogram"]
assert {int(s): int(c) for s, c in zip(scores, counts)} == \
    {int(k): v for k, v in recorded.items() if v}, "stored bytes disagree with the statistics"
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.bar(scores, counts / entries * 100)
    plt.xlabel("value (stones)")
    plt.ylabel("% of positions")
    plt.title("Awari, 12 stones")
    plt.savefig("awari-12-values.png")
    print("plot written to awari-12-values.png")
except ImportError:
    for s, c in zip(scores, counts):
        print(f"{int(s):+3d} {'#' * int(60 * c / counts.max())} {c}")
