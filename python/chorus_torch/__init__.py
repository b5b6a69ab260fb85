"""Chorus as a torch.distributed backend for CPU tensors.

    import chorus_torch
    torch.distributed.init_process_group("chorus")   # env:// or tcp://, e.g. under torchrun

Importing this package registers the backend name "chorus" with torch.distributed.
"""
import torch  # loads libtorch and its Python bindings before the extension needs them
import torch.distributed as dist

from ._C import create_process_group

if "CHORUS" not in dist.Backend._plugins:
    dist.Backend.register_backend("chorus", create_process_group)

__all__ = ["create_process_group"]
