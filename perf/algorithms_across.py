#!/usr/bin/env python3
"""Combines several sweeps of perf/algorithms_bench (their --csv files, same tuning) into one
verdict per size, against the run-to-run noise the sweeps themselves show.

    perf/algorithms_across.py SWEEP1.csv SWEEP2.csv ...

Per (ranks, size): each algorithm's time is the median of its per-sweep medians; the fastest is
the least of those. The run-to-run noise of the size is the median, over its algorithms, of
(slowest sweep - fastest sweep) / that median. The pick (the same in every sweep: one tuning
file, and predictions are deterministic) passes when it is within max(10%, noise) of the
fastest. Also printed: the pick's slowdown in each sweep on its own.
"""
import csv
import statistics
import sys
from collections import defaultdict


def load(path):
    rows = defaultdict(dict)  # (ranks, bytes) -> algorithm -> (measured, predicted, picked)
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (int(r["ranks"]), int(r["bytes"]))
            rows[key][r["algorithm"]] = (float(r["measured_us"]), float(r["predicted_us"]),
                                         r["picked"] == "1")
    return rows


def human(b):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def main(paths):
    if len(paths) < 2:
        sys.exit("algorithms_across.py: give the CSV files of two or more sweeps")
    sweeps = [load(p) for p in paths]
    keys = sorted(set.intersection(*(set(s) for s in sweeps)))
    passed = defaultdict(lambda: [0, 0])
    for ranks, size in keys:
        algos = set.intersection(*(set(s[(ranks, size)]) for s in sweeps))
        times = {a: [s[(ranks, size)][a][0] for s in sweeps] for a in algos}
        med = {a: statistics.median(t) for a, t in times.items()}
        noise = statistics.median((max(t) - min(t)) / med[a] for a, t in times.items())
        picks = {a for s in sweeps for a in s[(ranks, size)] if s[(ranks, size)][a][2]}
        fastest = min(med, key=med.get)
        print(f"{ranks} ranks, {human(size)}: run-to-run noise {noise:.0%}")
        for a in sorted(med, key=med.get):
            mark = " <- picked" if a in picks else ""
            per = " ".join(f"{t:.1f}" for t in times[a])
            pred = sweeps[0][(ranks, size)][a][1]
            print(f"  {a:20s} {med[a]:12.1f} us  (sweeps: {per})  predicted {pred:.1f} us"
                  f" ({pred / med[a] - 1:+.0%}){mark}")
        for pick in sorted(picks):
            slower = med[pick] / med[fastest] - 1
            each = " ".join(f"{s[(ranks, size)][pick][0] / min(v[0] for v in s[(ranks, size)].values()) - 1:.0%}"
                            for s in sweeps)
            ok = slower <= max(0.10, noise)
            passed[ranks][0] += ok
            passed[ranks][1] += 1
            print(f"  pick {pick} is {slower:.1%} slower than the fastest ({fastest}) over "
                  f"{len(sweeps)} sweeps (in each: {each}); noise {noise:.0%}: "
                  f"{'ok' if ok else 'MISS'}")
    for ranks, (ok, total) in sorted(passed.items()):
        print(f"# across {len(sweeps)} sweeps, {ranks} ranks: the pick is within max(10%, "
              f"run-to-run noise) of the fastest at {ok} of {total} sizes")


if __name__ == "__main__":
    main(sys.argv[1:])
