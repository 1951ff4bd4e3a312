"""Helpers for code running inside a rank of the diagnosis world (imports torch lazily)."""

from __future__ import annotations

import json
import time
from typing import Any, Callable

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


def all_gather_json(value: Any) -> list[Any]:
    """Every rank's ``value`` (JSON-serialisable), in rank order, over :func:`object_group`.

    ``dist.all_gather_object`` needs numpy (torch does not depend on it) and unpickles what
    peers send; JSON over uint8 tensors needs neither.
    """
    import torch
    import torch.distributed as dist

    group = object_group()
    size = dist.get_world_size(group)
    payload = json.dumps(value, default=str).encode("utf-8")
    length = torch.tensor([len(payload)], dtype=torch.int64)
    lengths = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(lengths, length, group=group)
    longest = max(int(n.item()) for n in lengths)
    mine = torch.zeros(longest, dtype=torch.uint8)
    if payload:
        mine[:len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
    everyone = [torch.zeros(longest, dtype=torch.uint8) for _ in range(size)]
    dist.all_gather(everyone, mine, group=group)
    return [json.loads(bytes(t[:int(n.item())].tolist()).decode("utf-8")) for t, n in zip(everyone, lengths)]


def device_sync(device: Any) -> Callable[[], None]:
    """A call that waits for the work queued on ``device`` (CUDA); a no-op on the CPU."""
    import torch

    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def timed_calls(call: Callable[[], Any], count: int, sync: Callable[[], None]) -> list[float]:
    """Seconds of each of ``count`` runs of ``call``, each timed until ``sync`` returns."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - started)
    return times


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
