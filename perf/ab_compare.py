#!/usr/bin/env python3
"""Judges perf/ab.sh's runs: per collective, rank count and size, the median over rounds of
each side's time, new/base, each side's spread ((slowest - fastest) / median over the rounds)
and slowest round, and a verdict. A size is 'slower' when new's median is more than 5% above
base's and the gap is larger than base's own spread; 'within noise' when above 5% but inside
it. Usage: ab_compare.py OUT_DIR (holding base-COLL-N-rK.csv and new-COLL-N-rK.csv); the times
are the out-of-place column, or AB_COLUMN's (ip_us: in place)."""
import csv
import glob
import os
import re
import statistics
import sys


def load(out_dir):
    times = {}  # (coll, ranks, bytes) -> {'base': [...], 'new': [...]}
    column = os.environ.get("AB_COLUMN", "oop_us")
    for path in glob.glob(os.path.join(out_dir, "*-r*.csv")):
        m = re.match(r"(base|new)-(.+)-(\d+)-r(\d+)\.csv$", os.path.basename(path))
        if not m:
            continue
        side = m.group(1)
        with open(path) as f:
            for row in csv.DictReader(f):
                key = (row["coll"], int(row["ranks"]), int(row["bytes"]))
                times.setdefault(key, {"base": [], "new": []})[side].append(float(row[column]))
    return times


def spread(xs):
    return (max(xs) - min(xs)) / statistics.median(xs) if xs else 0.0


def size_name(b):
    for unit, shift in (("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def main():
    times = load(sys.argv[1])
    if not times:
        sys.exit("ab_compare.py: no base-*/new-* csv files in " + sys.argv[1])
    print(f"{'coll':>15} {'ranks':>5} {'size':>6} {'base us':>10} {'new us':>10} {'new/base':>8} "
          f"{'base spr':>8} {'new spr':>8} {'base max':>10} {'new max':>10}  verdict")
    slower, noise, total, worst = 0, 0, 0, (0.0, None)
    for key in sorted(times):
        b, n = times[key]["base"], times[key]["new"]
        if not b or not n:
            continue
        mb, mn = statistics.median(b), statistics.median(n)
        ratio = mn / mb
        verdict = "ok"
        if ratio > 1.05:
            if ratio - 1 > spread(b):
                verdict, slower = "SLOWER", slower + 1
            else:
                verdict, noise = "within noise", noise + 1
        total += 1
        if ratio > worst[0]:
            worst = (ratio, key)
        print(f"{key[0]:>15} {key[1]:>5} {size_name(key[2]):>6} {mb:10.2f} {mn:10.2f} {ratio:8.3f} "
              f"{spread(b):8.1%} {spread(n):8.1%} {max(b):10.2f} {max(n):10.2f}  {verdict}")
    rounds = max(len(v["base"]) for v in times.values())
    print(f"# summary: {total} sizes, {rounds} rounds each side; more than 5% slower beyond the "
          f"noise: {slower}; more than 5% slower but within the noise: {noise}; worst new/base "
          f"{worst[0]:.3f} at {worst[1]}")


if __name__ == "__main__":
    main()
