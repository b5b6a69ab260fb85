#!/usr/bin/env python3
"""The summary table of perf/train_compare.sh, from the metrics JSON files it collected:
OUT/<config>-<ranks>-<round>.<rank>.json (chorus-train --metrics with %r; PyTorch writes
rank 0's only). Usage: train_compare_table.py OUT ROUNDS "1 2 4" "ddp zero ... torch"."""
import glob
import json
import statistics
import sys


def runs(out, config, n, rounds):
    """Per round: (epochs of rank 0, max parameter + optimiser bytes over the ranks)."""
    found = []
    for r in range(1, rounds + 1):
        files = sorted(glob.glob(f"{out}/{config}-{n}-{r}.*.json"))
        if not files:
            continue
        docs = [json.load(open(f)) for f in files]
        state = max(d.get("param_bytes", 0) + d.get("optimizer_bytes", 0) for d in docs)
        found.append((docs[0]["epochs"], state))
    return found


def speed(epochs):
    later = epochs[1:] or epochs  # epoch 1 includes warm-up
    return sum(e["samples_per_s"] for e in later) / len(later)


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    ranks = [int(n) for n in sys.argv[3].split()]
    configs = sys.argv[4].split()
    median = {}
    rows = []
    for n in ranks:
        for c in configs:
            got = runs(out, c, n, rounds)
            if not got:
                continue
            speeds = [speed(e) for e, _ in got]
            median[(c, n)] = statistics.median(speeds)
            rows.append((n, c, got[0][0], speeds, got[0][1]))
    print()
    print(f"{'ranks':>5} {'strategy':<16} | {'test accuracy per epoch':<26} | "
          f"{'samples/s median':>16} {'spread':>15} {'slowest':>8} | {'vs ddp 1 rank':>13} "
          f"{'vs torch':>8} | {'state MB/rank':>13}")
    for n, c, epochs, speeds, state in rows:
        acc = " / ".join(f"{100 * e['test_accuracy']:.2f}" for e in epochs)
        m = median[(c, n)]
        one = median.get(("ddp", 1))
        torch = median.get(("torch", n))
        state_mb = state / 1e6 if state else float("nan")
        print(f"{n:>5} {c:<16} | {acc:<26} | {m:>16.0f} {min(speeds):>7.0f}-{max(speeds):<7.0f} "
              f"{min(speeds):>8.0f} | {(m / one if one else float('nan')):>12.2f}x "
              f"{(m / torch if torch else float('nan')):>7.2f}x | "
              f"{state_mb:>13.2f}")
    print(f"\nsamples/s: each run's mean over epochs 2..E; median, spread (min-max) and slowest "
          f"over {rounds} round(s). state: parameters + momentum on the rank holding the most "
          f"(torch: not reported; it is the whole model and its momentum, as ddp).")


if __name__ == "__main__":
    main()
