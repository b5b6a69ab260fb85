#!/usr/bin/python3
"""The chorus-train job in PyTorch DDP (gloo or chorus backend, CPU), for side-by-side comparisons.

Same data (Debian's dataset-fashion-mnist IDX files), same model (784-512-256-10 MLP, ReLU,
softmax cross-entropy, nn.Linear's default init), same optimiser (SGD, momentum, no weight
decay, the rate decaying along a cosine over the run), same global batch split into contiguous per-rank shares. Launch the usual way:
    torchrun --standalone --nproc_per_node 2 perf/pytorch_ddp.py --epochs 3
    PYTHONPATH=build/python torchrun ... perf/pytorch_ddp.py --backend chorus
Prints one line per epoch (rank 0) and, with --json PATH, the same as JSON.
tests/torch/ddp_test.py imports load() and make_model() from here.
"""
import argparse
import gzip
import json
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def load_idx(path, limit):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
    return arr[:limit] if limit else arr


def load(data_dir, prefix, limit):
    x = load_idx(f"{data_dir}/{prefix}-images-idx3-ubyte.gz", limit)
    y = load_idx(f"{data_dir}/{prefix}-labels-idx1-ubyte.gz", limit)
    x = torch.from_numpy(x.reshape(len(x), -1).astype(np.float32) / 255.0)
    return x, torch.from_numpy(y.astype(np.int64))


def bind_local_rank():
    """Pins this process (and the threads it starts later: torch's, the backend's) to one CPU.
    Unpinned ranks on a 2-core VM were seen sharing one core for whole epochs."""
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[int(os.environ.get("LOCAL_RANK", "0")) % len(cpus)]})


def make_model():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=128, help="global batch")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--lr-schedule", default="cosine", choices=["cosine", "constant"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--json", default="")
    p.add_argument("--backend", default="gloo", help="gloo, or chorus (needs chorus_torch)")
    p.add_argument("--bind", action="store_true",
                   help="pin local rank i to the i-th allowed CPU (modulo), as chorus-run does")
    a = p.parse_args()
    if a.bind:
        bind_local_rank()

    torch.set_num_threads(1)  # one thread per rank, like chorus-train's BLAS
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        if a.backend == "chorus":
            import chorus_torch  # noqa: F401  registers the backend
        dist.init_process_group(a.backend)
    rank = dist.get_rank() if distributed else 0
    size = dist.get_world_size() if distributed else 1

    xtr, ytr = load(a.data, "train", a.train_limit)
    xte, yte = load(a.data, "t10k", 0)
    torch.manual_seed(a.seed)
    model = make_model()
    net = nn.parallel.DistributedDataParallel(model) if distributed else model
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=a.momentum)
    # chorus-train's schedule (examples/train/sgd.h): step s of S at lr (1 + cos(pi s / S)) / 2.
    run_steps = a.epochs * ((len(xtr) + a.batch - 1) // a.batch)
    decay = (lambda s: 0.5 * (1 + math.cos(math.pi * min(s, run_steps) / run_steps))) \
        if a.lr_schedule == "cosine" else (lambda s: 1.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, decay)

    epochs = []
    for epoch in range(1, a.epochs + 1):
        g = torch.Generator().manual_seed(a.seed * 1000 + epoch)
        order = torch.randperm(len(xtr), generator=g)
        net.train()
        t0 = time.perf_counter()
        loss_sum, seen = 0.0, 0
        for first in range(0, len(xtr), a.batch):
            idx = order[first:first + a.batch]
            gb = len(idx)
            share = idx[gb * rank // size:gb * (rank + 1) // size]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(net(xtr[share]), ytr[share])
            loss.backward()  # DDP averages the gradients across ranks, bucket by bucket
            opt.step()
            sched.step()
            loss_sum += loss.item() * gb
            seen += gb
        wall = time.perf_counter() - t0
        net.eval()
        with torch.no_grad():
            lo, hi = len(xte) * rank // size, len(xte) * (rank + 1) // size
            counts = torch.tensor([(model(xte[lo:hi]).argmax(1) == yte[lo:hi]).sum().item(),
                                   float(hi - lo)], dtype=torch.float64)
        if distributed:
            dist.all_reduce(counts)
        rec = {"epoch": epoch, "train_loss": loss_sum / seen,
               "test_accuracy": (counts[0] / counts[1]).item(), "samples_per_s": seen / wall,
               "step_ms": 1000 * wall / ((seen + a.batch - 1) // a.batch)}
        epochs.append(rec)
        if rank == 0:
            print(f"pytorch-ddp ({a.backend}): {size} rank(s) epoch {epoch}/{a.epochs}: train_loss "
                  f"{rec['train_loss']:.4f} test_accuracy {100 * rec['test_accuracy']:.2f}% "
                  f"{rec['samples_per_s']:.0f} samples/s {rec['step_ms']:.2f} ms/step",
                  flush=True)
    if rank == 0 and a.json:
        with open(a.json, "w") as f:
            json.dump({"ranks": size, "batch": a.batch, "backend": a.backend, "epochs": epochs}, f, indent=1)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
