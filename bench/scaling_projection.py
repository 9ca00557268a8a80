#!/usr/bin/env python3
"""Projects the whole of Awari (0..48 stones) from rates measured on a database built here
(docs/SCALING.md): per stone count the positions, the memory of each build mode, the disk, the
messages between partitions and the time, for (a) one 1 TB server, (b) one 256 GB server with
capture targets read from disk, (c) 16 nodes of 64 GB over MPI.

Usage: bench/scaling_projection.py --db DIR [--from 20] [--cores 64] [--efficiency 0.5]
  DIR: an Awari database built with the backward kernel (its manifest's kernel_stats are read).
"""
import argparse
import json
import math
import os
import sys

GIB = 2**30


def positions(n):
    return math.comb(n + 11, 11)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--from", dest="first", type=int, default=20,
                    help="fit the per-position cost on segments from this stone count up")
    ap.add_argument("--cores", type=int, default=64, help="cores of the servers (a), (b)")
    ap.add_argument("--efficiency", type=float, default=0.5,
                    help="parallel efficiency assumed on --cores (16-core device: 62%% at 16)")
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--node-cores", type=int, default=16)
    ap.add_argument("--node-gbps", type=float, default=10, help="network per node, Gbit/s")
    a = ap.parse_args()
    with open(os.path.join(a.db, "manifest.json")) as f:
        m = json.load(f)
    rows = []
    for s in m["segments"]:
        n = int(s["name"])
        b = s["build"]
        ks = b.get("kernel_stats", {})
        if n < a.first or b.get("kernel") != "backward":
            continue
        rows.append((n, s["entries"], b["kernel_seconds"], b["threads"], ks["max_frontier"],
                     ks["predecessors"], s["file_bytes"]))
    if len(rows) < 2:
        sys.exit("need at least two backward-built segments from --from up")
    threads = rows[-1][3]
    # Seconds per position on one thread, a power law in the positions fitted by least squares.
    xs = [math.log(r[1]) for r in rows]
    ys = [math.log(r[2] * r[3] / r[1]) for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    def spp(N):
        return math.exp(my + slope * (math.log(N) - mx))
    frontier = max(r[4] / r[1] for r in rows)
    preds = sum(r[5] for r in rows) / sum(r[1] for r in rows)
    bits = rows[-1][6] * 8 / rows[-1][1]
    print(f"measured on {a.db}: segments {rows[0][0]}..{rows[-1][0]} on {threads} threads; "
          f"one-thread seconds per position ~ N^{slope:.3f} "
          f"({spp(rows[-1][1]) * 1e9:.0f} ns at {rows[-1][0]} stones); largest frontier "
          f"{frontier:.1%} of a segment; {preds:.2f} unmoves per position; "
          f"{bits:.2f} bits per position on disk")
    print()
    print("| stones | positions | (a) in memory, targets in memory | (b) targets from disk | "
          "(c) per node, 16 partitions | (c) rank 0 as built | checkpoint | on disk | unmoves sent (c) | "
          "time (a), (b) | time (c) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    totals = {"t_ab": 0.0, "t_c": 0.0, "disk": 0.0, "sent": 0.0}
    peak = {"a": 0, "b": 0, "c": 0, "mpi": 0}
    node_bw = a.node_gbps * 1e9 / 8
    for n in range(49):
        N = positions(n)
        kernel = 2 * N + 8 * frontier * N  # values, counters, frontier
        targets = math.comb(n + 11, 12)  # every smaller stone count, one byte per position
        mem_a = kernel + targets
        mem_b = kernel + 2 * GIB  # block caches
        mem_c = kernel / a.nodes + 2 * GIB
        # What rank 0 of the built MPI transport holds with the capture targets read block-wise:
        # its share of the kernel's arrays and the whole segment's values, which it writes (the
        # other ranks hold their share only: column (c)). docs/ARCHITECTURE.md, "Over MPI".
        mem_mpi = N + kernel / a.nodes + 2 * GIB
        sent = preds * N * (1 - 1 / a.nodes) * 16  # updates of 16 bytes to other nodes
        t_ab = spp(N) * N / (a.cores * a.efficiency)
        t_c = max(spp(N) * N / (a.nodes * a.node_cores * a.efficiency),
                  sent / a.nodes / node_bw)
        disk = N * bits / 8
        totals["t_ab"] += t_ab
        totals["t_c"] += t_c
        totals["disk"] += disk
        totals["sent"] += sent
        peak["a"], peak["b"], peak["c"] = max(peak["a"], mem_a), max(peak["b"], mem_b), \
            max(peak["c"], mem_c)
        peak["mpi"] = max(peak["mpi"], mem_mpi)
        if n % 4 == 0 or n >= 44:
            print(f"| {n} | {N:,} | {mem_a / GIB:,.1f} GiB | {mem_b / GIB:,.1f} GiB | "
                  f"{mem_c / GIB:,.1f} GiB | {mem_mpi / GIB:,.1f} GiB | {2 * N / GIB:,.1f} GiB | {disk / GIB:,.1f} GiB | "
                  f"{sent / GIB:,.1f} GiB | {t_ab / 3600:,.2f} h | {t_c / 3600:,.2f} h |")
    print()
    print(f"whole game: {sum(positions(n) for n in range(49)):,} positions, "
          f"{totals['disk'] / 1e9:,.0f} GB on disk; peak memory (a) {peak['a'] / GIB:,.0f} GiB, "
          f"(b) {peak['b'] / GIB:,.0f} GiB, (c) {peak['c'] / GIB:,.0f} GiB per node "
          f"({peak['mpi'] / GIB:,.0f} GiB on rank 0 as built); "
          f"time (a)/(b) {totals['t_ab'] / 3600:,.1f} h on {a.cores} cores at "
          f"{a.efficiency:.0%}, (c) {totals['t_c'] / 3600:,.1f} h on {a.nodes} x "
          f"{a.node_cores} cores ({totals['sent'] / 1e12:,.1f} TB of updates over "
          f"{a.node_gbps:g} Gbit/s links)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
