#!/usr/bin/python3
"""Every torch.distributed operation through the chorus backend, checked against a reference
computed in Python from all ranks' inputs (each rank can rebuild any rank's input from its seed).
Run under torchrun with any number of processes:
    tests/torch/torchrun.py --nproc_per_node 4 tests/torch/ops_test.py
Exits non-zero, listing every mismatch, if anything differs.
"""
import os
import sys

import torch
import torch.distributed as dist

import chorus_torch  # noqa: F401  registers the "chorus" backend

DTYPES = [torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
FLOATS = {torch.float16, torch.bfloat16, torch.float32, torch.float64}
failures = []


def data(rank, count, dtype, salt=0):
    """Rank `rank`'s input: small integers (products and sums stay in range), or normals."""
    g = torch.Generator().manual_seed(1000 * rank + 7 * count + salt)
    if dtype in FLOATS:
        return torch.randn(count, generator=g, dtype=torch.float64).to(dtype)
    lo = 0 if dtype == torch.uint8 else -2
    return torch.randint(lo, 3, (count,), generator=g, dtype=torch.int64).to(dtype)


def reduce_ref(inputs, op, factor=None):
    """The reduction in float64 (integers exactly), in rank order."""
    x = torch.stack([t.to(torch.float64) for t in inputs])
    if op == dist.ReduceOp.SUM:
        return x.sum(0)
    if op == dist.ReduceOp.AVG:
        return x.sum(0) / len(inputs)
    if op == dist.ReduceOp.PRODUCT:
        return x.prod(0)
    if op == dist.ReduceOp.MIN:
        return x.min(0).values
    if op == dist.ReduceOp.MAX:
        return x.max(0).values
    return (x * factor).sum(0)  # PREMUL_SUM


def check(name, got, want, inputs=None):
    """Integers and min/max exactly; floats within (ranks + 2) roundings of the magnitudes."""
    got64, want64 = got.to(torch.float64), want.to(torch.float64)
    if got.dtype in FLOATS and inputs is not None:
        eps = torch.finfo(got.dtype).eps
        mag = torch.stack([t.to(torch.float64).abs() for t in inputs]).sum(0)
        mag = torch.maximum(mag, want64.abs())
        tol = (len(inputs) + 2) * eps * mag + 1e-30
        bad = (got64 - want64).abs() > tol
    else:
        bad = got64 != want64
    if bool(bad.any()):
        i = int(bad.nonzero()[0][0])
        failures.append(f"{name}: {int(bad.sum())} of {got.numel()} elements differ, first at {i}: "
                        f"got {got64.reshape(-1)[i].item()} want {want64.reshape(-1)[i].item()}")


def expect_error(name, fn, *needles):
    try:
        fn()
    except RuntimeError as e:
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        if missing:
            failures.append(f"{name}: the error lacks {missing}: {msg}")
        return
    failures.append(f"{name}: no error raised")


def test_allreduce(rank, n):
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    for dtype in DTYPES:
        for op in ops + ([dist.ReduceOp.AVG, "premul"] if dtype in FLOATS else []):
            for count in (1, 1031):
                inputs = [data(r, count, dtype) for r in range(n)]
                t = inputs[rank].clone()
                if isinstance(op, str):  # "premul"
                    factor = 0.5 + rank  # each rank its own factor
                    dist.all_reduce(t, op=dist._make_nccl_premul_sum(factor))
                    want = sum(inputs[r].to(torch.float64) * (0.5 + r) for r in range(n))
                    scaled = [inputs[r].to(torch.float64) * (0.5 + r) for r in range(n)]
                    check(f"allreduce premul_sum {dtype} x{count}", t, want, scaled)
                    continue
                dist.all_reduce(t, op=op)
                want = reduce_ref(inputs, op)
                ref_in = inputs if op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG) else None
                if op == dist.ReduceOp.PRODUCT and dtype in FLOATS:
                    ref_in = [want.abs()] * n
                check(f"allreduce {op} {dtype} x{count}", t, want.to(dtype) if ref_in is None
                      else want, ref_in)
    # Many pipelined chunks, and several calls in flight at once, waited in reverse order.
    big = [data(r, (1 << 20) + 3, torch.float32) for r in range(n)]
    ts = [big[rank].clone() * (i + 1) for i in range(3)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        w.wait()
        if not w.is_completed() or not w.is_success():
            failures.append("allreduce async: completed work does not report success")
    for i, t in enumerate(ts):
        check(f"allreduce async #{i} float32 x{t.numel()}", t,
              reduce_ref(big, dist.ReduceOp.SUM) * (i + 1), [b * (i + 1) for b in big])
    # A future, as DistributedDataParallel's buckets use it.
    t = big[rank].clone()
    fut = dist.all_reduce(t, async_op=True).get_future()
    check("allreduce future", fut.wait()[0], reduce_ref(big, dist.ReduceOp.SUM), big)


def test_gathers(rank, n):
    for dtype in (torch.float32, torch.bfloat16, torch.int8, torch.int64):
        inputs = [data(r, 37, dtype).reshape(37, 1) for r in range(n)]
        outs = [torch.empty(37, 1, dtype=dtype) for _ in range(n)]
        dist.all_gather(outs, inputs[rank])
        for r in range(n):
            check(f"all_gather {dtype} from {r}", outs[r], inputs[r])
        flat = torch.empty(n * 37, 1, dtype=dtype)
        dist.all_gather_into_tensor(flat, inputs[rank])
        check(f"all_gather_into_tensor {dtype}", flat, torch.cat(inputs))
        flat.zero_()
        dist._all_gather_base(flat, inputs[rank])
        check(f"_all_gather_base {dtype}", flat, torch.cat(inputs))
        for root in range(n):
            outs = [torch.empty(37, 1, dtype=dtype) for _ in range(n)] if rank == root else None
            dist.gather(inputs[rank], outs, dst=root)
            if rank == root:
                for r in range(n):
                    check(f"gather {dtype} root {root} from {r}", outs[r], inputs[r])


def test_reduce_scatter(rank, n):
    for dtype in (torch.float32, torch.float16, torch.int32):
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX):
            inputs = [data(r, 11 * n, dtype, salt=3) for r in range(n)]
            want = reduce_ref(inputs, op)[11 * rank:11 * (rank + 1)]
            mine = [c.to(torch.float64) for c in
                    (i[11 * rank:11 * (rank + 1)] for i in inputs)] if op == dist.ReduceOp.SUM \
                else None
            out = torch.empty(11, dtype=dtype)
            dist.reduce_scatter(out, list(inputs[rank].chunk(n)), op=op)
            check(f"reduce_scatter {op} {dtype}", out, want if mine else want.to(dtype), mine)
            out.zero_()
            dist.reduce_scatter_tensor(out, inputs[rank], op=op)
            check(f"reduce_scatter_tensor {op} {dtype}", out, want if mine else want.to(dtype),
                  mine)


def test_rooted(rank, n):
    for root in range(n):
        for dtype in (torch.float64, torch.uint8, torch.bfloat16):
            inputs = [data(r, 129, dtype, salt=root) for r in range(n)]
            t = inputs[rank].clone()
            dist.broadcast(t, src=root)
            check(f"broadcast {dtype} root {root}", t, inputs[root])
            t = inputs[rank].clone()
            dist.reduce(t, dst=root, op=dist.ReduceOp.MAX)
            check(f"reduce max {dtype} root {root}", t,
                  reduce_ref(inputs, dist.ReduceOp.MAX).to(dtype) if rank == root
                  else inputs[rank])
        pieces = [data(r, 5, torch.int64, salt=root) for r in range(n)]
        out = torch.empty(5, dtype=torch.int64)
        dist.scatter(out, pieces if rank == root else None, src=root)
        check(f"scatter root {root}", out, pieces[rank])


def test_alltoall(rank, n):
    # Even: block j of rank i's input lands as block i of rank j's output.
    inputs = [data(r, 3 * n, torch.float32, salt=5) for r in range(n)]
    out = torch.empty(3 * n)
    dist.all_to_all_single(out, inputs[rank])
    check("all_to_all_single even", out, torch.cat([inputs[r][3 * rank:3 * rank + 3]
                                                    for r in range(n)]))
    # Uneven: rank i sends (i + j) % 3 + 1 rows of 2 elements to rank j (and zero-row splits).
    def rows(i, j):
        return (i + j) % 3 if (i + j) % 4 else 0
    ins = [data(r, 2 * sum(rows(r, j) for j in range(n)), torch.int32, salt=6).reshape(-1, 2)
           for r in range(n)]
    out = torch.empty(sum(rows(i, rank) for i in range(n)), 2, dtype=torch.int32)
    dist.all_to_all_single(out, ins[rank], output_split_sizes=[rows(i, rank) for i in range(n)],
                           input_split_sizes=[rows(rank, j) for j in range(n)])
    want = [ins[i].split([rows(i, j) for j in range(n)])[rank] for i in range(n)]
    check("all_to_all_single splits", out, torch.cat(want))
    # Lists of differently sized tensors.
    ins = [[data(i, i + j + 1, torch.float64, salt=8) for j in range(n)] for i in range(n)]
    outs = [torch.empty(i + rank + 1, dtype=torch.float64) for i in range(n)]
    dist.all_to_all(outs, ins[rank])
    for i in range(n):
        check(f"all_to_all list from {i}", outs[i], ins[i][rank])


def test_p2p(rank, n):
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    # Every rank sends first, then receives: the two are run together in one Chorus group.
    for count in (3, 1 << 20):
        send = data(rank, count, torch.float32, salt=9)
        recv = torch.empty(count)
        works = [dist.isend(send, nxt), dist.irecv(recv, prv)]
        for w in works:
            w.wait()
        check(f"isend/irecv ring x{count}", recv, data(prv, count, torch.float32, salt=9))
        recv.zero_()
        ops = [dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, recv, prv)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        check(f"batch_isend_irecv ring x{count}", recv, data(prv, count, torch.float32, salt=9))
    if n >= 2 and rank < 2:  # blocking send/recv between ranks 0 and 1
        t = data(rank, 100, torch.bfloat16, salt=10)
        if rank == 0:
            dist.send(t, 1)
        else:
            dist.recv(t, 0)
            check("send/recv 0->1", t, data(0, 100, torch.bfloat16, salt=10))
    dist.barrier()


def test_subgroup(rank, n):
    members = list(range(0, n, 2))  # the even ranks
    g = dist.new_group(members, backend="chorus")
    if rank in members:
        t = torch.tensor([float(rank)])
        dist.all_reduce(t, group=g)
        check("subgroup allreduce", t, torch.tensor([float(sum(members))]))


def test_errors(rank, n):
    t = torch.ones(8)
    expect_error("non-contiguous", lambda: dist.all_reduce(torch.ones(4, 4).t()),
                 "not contiguous", f"rank {rank} of {n}", "allreduce")
    expect_error("int16", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16)),
                 "Short", "not supported")
    expect_error("BAND", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32),
                                                 op=dist.ReduceOp.BAND), "BAND")
    expect_error("bad root", lambda: dist.broadcast(t, src=n + 3), "root", "outside")
    expect_error("sparse", lambda: dist.all_reduce(torch.eye(3).to_sparse()), "Sparse",
                 "to_dense")
    # (CUDA tensors cannot be made with this CPU-only torch; the device check is the same code.)
    expect_error("allgather wrong shape",
                 lambda: dist.all_gather([torch.empty(3) for _ in range(n)], t), "shape")
    # The group still works afterwards.
    dist.all_reduce(t)
    check("allreduce after rejected calls", t, torch.full((8,), float(n)))


def test_worker_cpu(rank, n):
    """Each group's worker thread runs on its local rank's CPU where there is one per local rank
    (python/chorus_torch/worker_cpu.h), and where it may otherwise."""
    allowed = sorted(os.sched_getaffinity(0))
    local, local_size = int(os.environ["LOCAL_RANK"]), int(os.environ["LOCAL_WORLD_SIZE"])
    want = {allowed[local]} if len(allowed) >= local_size else set(allowed)
    workers = []
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/comm") as f:
            if f.read().strip() == "chorus-worker":
                workers.append(int(tid))
    if not workers:
        failures.append("worker cpu: no thread named chorus-worker")
    for tid in workers:
        got = os.sched_getaffinity(tid)
        if got != want:
            failures.append(f"worker cpu: thread {tid} may run on {sorted(got)}, want {sorted(want)}")


def main():
    dist.init_process_group("chorus")
    rank, n = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "chorus", dist.get_backend()
    tests = [test_allreduce, test_gathers, test_reduce_scatter, test_rooted, test_alltoall,
             test_p2p, test_subgroup, test_errors, test_worker_cpu]
    only = os.environ.get("CHORUS_TORCH_TEST", "")
    for test in tests:
        if only and only not in test.__name__:
            continue
        before = len(failures)
        test(rank, n)
        print(f"rank {rank}/{n} {test.__name__}: "
              f"{'ok' if len(failures) == before else 'FAILED'}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if failures:
        print(f"rank {rank}: {len(failures)} failure(s):\n  " + "\n  ".join(failures), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
