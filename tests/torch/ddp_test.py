#!/usr/bin/python3
"""DistributedDataParallel over the chorus backend trains perf/pytorch_ddp.py's MLP exactly as
over gloo: two copies of the model, same seed, same batches, one wrapped with a chorus group and
one with a gloo group, trained side by side; the losses must agree step by step within
LOSS_RTOL, and the parameters at the end within PARAM_ATOL.
    tests/torch/torchrun.py --nproc_per_node 4 tests/torch/ddp_test.py
With 2 ranks both backends add the same two numbers, so the runs match bit for bit; with more,
the two libraries sum the ranks' gradients in different orders and the runs drift apart by
float32 roundings (about 1e-7 a step).
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "perf"))
import pytorch_ddp  # noqa: E402  the benchmark's data loader and model

import chorus_torch  # noqa: E402,F401  registers the "chorus" backend

STEPS = 40
BATCH = 128  # global, split into contiguous per-rank shares as in perf/pytorch_ddp.py
LOSS_RTOL = 1e-5
PARAM_ATOL = 1e-5


def main():
    torch.set_num_threads(1)
    dist.init_process_group("chorus")
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    x, y = pytorch_ddp.load("/usr/share/datasets/fashion-mnist", "train", STEPS * BATCH)
    nets, opts = {}, {}
    for name, group in (("chorus", None), ("gloo", gloo)):
        torch.manual_seed(1)
        nets[name] = torch.nn.parallel.DistributedDataParallel(pytorch_ddp.make_model(),
                                                               process_group=group,
                                                               bucket_cap_mb=1)
        opts[name] = torch.optim.SGD(nets[name].parameters(), lr=0.05, momentum=0.9)
    worst = 0.0
    for step in range(STEPS):
        lo = step * BATCH + BATCH * rank // size
        hi = step * BATCH + BATCH * (rank + 1) // size
        losses = {}
        for name, net in nets.items():
            opts[name].zero_grad(set_to_none=True)
            loss = F.cross_entropy(net(x[lo:hi]), y[lo:hi])
            loss.backward()  # gradient buckets allreduced while backward runs
            opts[name].step()
            losses[name] = loss.item()
        rel = abs(losses["chorus"] - losses["gloo"]) / max(abs(losses["gloo"]), 1e-12)
        worst = max(worst, rel)
        if rel > LOSS_RTOL:
            print(f"rank {rank}: step {step}: chorus loss {losses['chorus']!r} vs gloo "
                  f"{losses['gloo']!r} (relative {rel:.2e} > {LOSS_RTOL})", flush=True)
            sys.exit(1)
    diff = max((pc - pg).abs().max().item() for pc, pg in
               zip(nets["chorus"].parameters(), nets["gloo"].parameters()))
    # The ranks' chorus replicas must also be identical to each other.
    flat = torch.cat([p.detach().reshape(-1) for p in nets["chorus"].parameters()])
    lo_, hi_ = flat.clone(), flat.clone()
    dist.all_reduce(lo_, op=dist.ReduceOp.MIN)
    dist.all_reduce(hi_, op=dist.ReduceOp.MAX)
    spread = (hi_ - lo_).abs().max().item()
    print(f"rank {rank}/{size}: {STEPS} steps, final loss {losses['chorus']:.4f}; worst loss "
          f"difference chorus vs gloo {worst:.2e} (tolerance {LOSS_RTOL}); parameters differ by "
          f"<= {diff:.2e} (tolerance {PARAM_ATOL}); replicas differ by {spread:.1e}", flush=True)
    dist.destroy_process_group()
    if diff > PARAM_ATOL or spread != 0.0:
        sys.exit(1)


if __name__ == "__main__":
    main()
