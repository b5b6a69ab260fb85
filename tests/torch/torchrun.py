#!/usr/bin/python3
"""torchrun on one host with a rendezvous port of its own.
    tests/torch/torchrun.py --nproc_per_node 4 tests/torch/ops_test.py
`torchrun --standalone` always listens on port 29400, so two of them started at once (ctest -j)
collide ("failed to bind to 0.0.0.0:29400: Address already in use"). This picks a free port and
runs torch.distributed.run on it. Debian's torchrun on Python 3.11 also needs --redirects/--tee
set: it cannot parse their default, 0.
"""
import os
import socket
import sys


def free_port():
    """A port that was free a moment ago (the kernel's choice for port 0 on loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--rdzv_backend",
            "c10d", "--rdzv_endpoint", f"127.0.0.1:{free_port()}", "--redirects", "1", "--tee",
            "1"] + sys.argv[1:]
    os.execv(sys.executable, args)


if __name__ == "__main__":
    main()
