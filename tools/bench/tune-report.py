#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Table of `make bench-tune` from the raw output of tools/bench/tune-node.sh.

Usage: tune-report.py RUNDIR

Reads RUNDIR/out/rank.0/repR.CHUNK.SLOTS.ALGO.txt (coll-perf output),
configs.txt (the pairs in the order they were given) and
RUNDIR/out/refused.R.CHUNK.SLOTS (a pair some node refused) and writes
RUNDIR/tune.md: per algorithm and size, the median out-of-place
AllReduce time over the repetitions (min-max) of every chunk_bytes:slots
pair, and its speed-up over the first pair of the run (the module's
defaults unless TUNE_CONFIGS says otherwise).  Exit status 1 if coll-perf
reported a wrong element or no output was found.
"""
import glob
import os
import re
import statistics
import sys

NAME = re.compile(r"rep(\d+)\.(\d+)\.(\d+)\.(.+)\.txt$")


def parse(path):
    """{size: (out-of-place us, wrong elements)} of one coll-perf run."""
    rows = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            c = line.split()
            if len(c) < 13 or line.startswith("#") or not c[0].isdigit():
                continue
            rows[int(c[0])] = (float(c[5]), int(c[8]) + int(c[12]))
    return rows


def main():
    run = sys.argv[1]
    times, wrong = {}, 0
    listed = os.path.join(run, "out", "rank.0", "configs.txt")
    if not os.path.exists(listed):
        print(f"tune-report: {listed} is missing (tune-node.sh writes it)", file=sys.stderr)
        return 1
    # The order tune-node.sh was given (its first pair is the reference).
    with open(listed, encoding="utf-8") as f:
        configs = [tuple(int(v) for v in c.split(":")) for c in f.read().split()]
    paths = sorted(glob.glob(os.path.join(run, "out", "rank.0", "rep*.txt")))
    for path in paths:
        m = NAME.search(os.path.basename(path))
        if not m:
            continue
        chunk, slots, algo = int(m[2]), int(m[3]), m[4]
        for size, (us, bad) in parse(path).items():
            times.setdefault((algo, size), {}).setdefault((chunk, slots), []).append(us)
            wrong += bad
    if not times:
        print(f"tune-report: no coll-perf output under {run}/out/rank.0", file=sys.stderr)
        return 1
    base = configs[0]
    head = "| algorithm | size | " + " | ".join(
        f"{c}:{s} ms (min-max) | x{base[0]}:{base[1]}" for c, s in configs) + " |"
    lines = ["# AllReduce time against chunk_bytes:slots (make bench-tune)", "",
             "Median out-of-place time over the repetitions; x = speed-up over "
             f"{base[0]}:{base[1]} (time ratio, > 1 is faster).", "", head,
             "|" + "---|" * (2 + 2 * len(configs))]
    for algo, size in sorted(times):
        cells = [algo, str(size)]
        ref = times[(algo, size)].get(base)
        for cfg in configs:
            t = times[(algo, size)].get(cfg)
            if not t:
                cells += ["-", "-"]
                continue
            med = statistics.median(t)
            cells.append(f"{med / 1e3:.0f} ({min(t) / 1e3:.0f}-{max(t) / 1e3:.0f}) n={len(t)}")
            cells.append(f"{statistics.median(ref) / med:.2f}" if ref else "-")
        lines.append("| " + " | ".join(cells) + " |")
    for path in sorted(glob.glob(os.path.join(run, "out", "refused.*"))):
        rep, chunk, slots = os.path.basename(path).split(".")[1:]
        with open(path, encoding="utf-8") as f:
            who = ", ".join(sorted(l.strip() for l in f if l.strip()))
        lines += ["", f"{chunk}:{slots} refused in repetition {rep} (rank value: {who}); not measured."]
    lines += ["", f"wrong elements: {wrong}"]
    with open(os.path.join(run, "tune.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
