#!/usr/bin/python3
"""torch.distributed allreduce, chorus backend against gloo, in one run: the default group is
chorus, a second group over the same processes is gloo, and each message size is timed in
alternating rounds (chorus, gloo, chorus, ...) so both see the same machine load.
    PYTHONPATH=build/python torchrun --standalone --nproc_per_node 2 --redirects 1 --tee 1 \\
        perf/torch_allreduce.py [--rounds 7] [--min-bytes 8] [--max-bytes 64M] [--json out.json]
Per size and backend: the median over rounds of the time per call (each round a barrier, then
`iters` back-to-back calls, timed on rank 0, whose last call ends with everyone's), the fastest
and slowest round, algbw = bytes / time and busbw = algbw * 2 (n-1) / n as in nccl-tests.
float32 sum, in place; rank 0 prints the table.
"""
import argparse
import json
import statistics
import time

import torch
import torch.distributed as dist

import chorus_torch  # noqa: F401  registers the "chorus" backend
from pytorch_ddp import bind_local_rank


def parse_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def round_time(t, group, iters):
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t, group=group)
    return (time.perf_counter() - start) / iters


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--min-bytes", default="8")
    p.add_argument("--max-bytes", default="64M")
    p.add_argument("--factor", type=int, default=4)
    p.add_argument("--json", default="")
    p.add_argument("--bind", action="store_true", help="pin local rank i to the i-th CPU")
    a = p.parse_args()
    if a.bind:
        bind_local_rank()
    torch.set_num_threads(1)
    dist.init_process_group("chorus")
    rank, n = dist.get_rank(), dist.get_world_size()
    groups = {"chorus": None, "gloo": dist.new_group(backend="gloo")}
    sizes, b = [], parse_bytes(a.min_bytes)
    while b < parse_bytes(a.max_bytes):
        sizes.append(b)
        b *= a.factor
    sizes.append(parse_bytes(a.max_bytes))
    rows = []
    if rank == 0:
        print(f"# torch.distributed all_reduce float32 sum, {n} processes, {a.rounds} rounds; "
              f"time per call in us: median [fastest, slowest round]; busbw GB/s from the median")
        print(f"{'bytes':>10} {'chorus us':>30} {'gloo us':>30} {'chorus busbw':>13} "
              f"{'gloo busbw':>11} {'chorus/gloo':>11}")
    for size in sizes:
        t = torch.ones(max(1, size // 4))
        iters = max(3, min(300, (64 << 20) // (size * 8) if size else 300))
        for group in groups.values():  # warm-up: connections, algorithm choice, caches
            round_time(t, group, min(iters, 20))
        times = {name: [] for name in groups}
        for _ in range(a.rounds):
            for name, group in groups.items():
                times[name].append(round_time(t, group, iters))
        row = {"bytes": size, "iters": iters}
        for name, ts in times.items():
            med = statistics.median(ts)
            algbw = size / med / 1e9
            row[name] = {"median_us": med * 1e6, "min_us": min(ts) * 1e6,
                         "max_us": max(ts) * 1e6, "rounds_us": [x * 1e6 for x in ts],
                         "algbw_GBps": algbw, "busbw_GBps": algbw * 2 * (n - 1) / n}
        rows.append(row)
        if rank == 0:
            c, g = row["chorus"], row["gloo"]
            cell = lambda r: f"{r['median_us']:.1f} [{r['min_us']:.1f}, {r['max_us']:.1f}]"
            print(f"{size:>10} {cell(c):>30} {cell(g):>30} {c['busbw_GBps']:>13.3f} "
                  f"{g['busbw_GBps']:>11.3f} {g['median_us'] / c['median_us']:>10.2f}x",
                  flush=True)
    if rank == 0 and a.json:
        with open(a.json, "w") as f:
            json.dump({"ranks": n, "rounds": a.rounds, "dtype": "float32", "op": "sum",
                       "rows": rows}, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
