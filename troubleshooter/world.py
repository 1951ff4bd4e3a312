"""Helpers for code running inside a rank of the diagnosis world (imports torch lazily)."""

from __future__ import annotations

_OBJECT_GROUP = None


def object_group():
    """A gloo process group for gathering Python objects: the default group if it is gloo, else a new one."""
    global _OBJECT_GROUP
    import torch.distributed as dist

    if dist.get_backend() == "gloo":
        return None  # None means the default group in torch.distributed calls
    if _OBJECT_GROUP is None:
        _OBJECT_GROUP = dist.new_group(backend="gloo")
    return _OBJECT_GROUP


def choose_backend(requested: str, local_world_size: int) -> str:
    """``nccl`` when every local rank has a GPU (or when asked), else ``gloo``."""
    if requested in ("gloo", "nccl"):
        return requested
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() >= max(1, local_world_size):
        return "nccl"
    return "gloo"


def rank_device(backend: str, local_rank: int) -> str:
    """The device a rank should use: its own GPU under NCCL, else the CPU."""
    return f"cuda:{local_rank}" if backend == "nccl" else "cpu"
