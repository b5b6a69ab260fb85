#!/usr/bin/python3
"""A rank SIGKILLed in the middle of a run of chorus allreduces: every other rank's pending work
must raise an error naming the dead rank within Chorus's deadline (CHORUS_TIMEOUT, set short
here), and the survivors must exit instead of hanging.
    tests/torch/kill_test.py [--ranks 3] [--victim 1]
The ranks are real processes started here with the env:// rendezvous variables (torchrun would
tear the survivors down itself as soon as one rank dies, hiding what they saw).
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from torchrun import free_port

TIMEOUT_S = 10  # CHORUS_TIMEOUT for the ranks; the errors must come well within it


def worker():
    import torch
    import torch.distributed as dist
    import chorus_torch  # noqa: F401

    dist.init_process_group("chorus")
    rank = dist.get_rank()
    t = torch.ones(1 << 18)
    print("looping", flush=True)
    while True:
        work = dist.all_reduce(t, async_op=True)
        try:
            work.wait()
        except RuntimeError as e:
            print(f"raised at {time.time():.3f}: {e}", flush=True)
            sys.exit(0)  # exits without destroy_process_group: teardown must not hang either
        t.fill_(1.0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, default=3)
    p.add_argument("--victim", type=int, default=1)
    a = p.parse_args()
    env = dict(os.environ, WORLD_SIZE=str(a.ranks), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), CHORUS_TIMEOUT=str(TIMEOUT_S))
    procs = [subprocess.Popen([sys.executable, __file__, "--worker"],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(a.ranks)]
    problems = []
    try:
        for r, proc in enumerate(procs):  # every rank is in its loop of allreduces
            line = proc.stdout.readline()
            if "looping" not in line:
                problems.append(f"rank {r} did not start its loop: {line!r}")
        time.sleep(0.5)
        killed_at = time.time()
        procs[a.victim].send_signal(signal.SIGKILL)
        for r, proc in enumerate(procs):
            try:
                out, _ = proc.communicate(timeout=2 * TIMEOUT_S)
            except subprocess.TimeoutExpired:
                problems.append(f"rank {r} still running {2 * TIMEOUT_S} s after the kill (hang)")
                continue
            if r == a.victim:
                continue
            exited = time.time() - killed_at
            raised = [ln for ln in out.splitlines() if ln.startswith("raised at ")]
            if proc.returncode != 0 or not raised:
                problems.append(f"rank {r}: exit code {proc.returncode}, no error raised:\n{out}")
                continue
            after = float(raised[0].split()[2].rstrip(":")) - killed_at
            message = raised[0].split(": ", 1)[1]
            print(f"rank {r}: raised {after:.3f} s after rank {a.victim} was killed, exited "
                  f"after {exited:.2f} s: {message}")
            if f"rank {a.victim}" not in message:
                problems.append(f"rank {r}: the error does not name rank {a.victim}: {message}")
            if after > TIMEOUT_S:
                problems.append(f"rank {r}: raised {after:.1f} s after the kill, beyond "
                                f"CHORUS_TIMEOUT={TIMEOUT_S}")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print(f"ok: every survivor of {a.ranks} raised and exited")


if __name__ == "__main__":
    worker() if "--worker" in sys.argv else main()
