"""Benchmark: the collective probe's all_reduce bus bandwidth at 16 MiB against a bare torch.distributed loop.

Both are measured in the same 2-rank gloo world (launched with torchrun), alternating, the same way:
warm-up iterations, each timed iteration wrapped in perf_counter, median, slowest rank (MAX).
Target: the probe within 10% of the bare loop.

    python bench/collective_overhead.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

SIZE = 16 * 1024 * 1024
WARMUP, ITERS = 2, 7


def bare_busbw() -> float:
    """busbw (GB/s) of a plain all_reduce loop on a 16 MiB float32 tensor."""
    import torch
    import torch.distributed as dist

    n = dist.get_world_size()
    tensor = torch.zeros(SIZE // 4)
    for _ in range(WARMUP):
        dist.all_reduce(tensor)
    times = []
    for _ in range(ITERS):
        started = time.perf_counter()
        dist.all_reduce(tensor)
        times.append(time.perf_counter() - started)
    slowest = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return SIZE / slowest.item() / 1e9 * 2 * (n - 1) / n


def probe_busbw() -> float:
    """busbw (GB/s) at 16 MiB reported by the collective probe, run through the probe contract."""
    from troubleshooter.core.probe import ProbeContext, run_probe
    from troubleshooter.core.registry import Registry

    probe = Registry.load(entry_points=False).get("collective")()
    result = run_probe(probe, ProbeContext(env=dict(os.environ), rank=int(os.environ["RANK"]), world_size=2,
                                           backend="gloo", device="cpu", timeout_s=30.0))
    row = next(r for r in result.details["sweep"] if r["bytes"] == SIZE)
    return row["busbw_gbps"]


def worker(rounds: int) -> None:
    """Inside a rank: interleaved probe and bare measurements; rank 0 prints the figures."""
    import torch.distributed as dist

    dist.init_process_group("gloo")
    probe, bare = [], []
    for i in range(rounds):  # alternate which goes first so warm caches and allocator state favour neither
        if i % 2:
            bare.append(bare_busbw())
            probe.append(probe_busbw())
        else:
            probe.append(probe_busbw())
            bare.append(bare_busbw())
    if dist.get_rank() == 0:
        p, b = statistics.median(probe), statistics.median(bare)
        print(f"probe busbw at 16 MiB: {', '.join(f'{v:.3f}' for v in probe)} GB/s (median {p:.3f})")
        print(f"bare  busbw at 16 MiB: {', '.join(f'{v:.3f}' for v in bare)} GB/s (median {b:.3f})")
        print(f"probe / bare = {p / b:.3f} (target within 10%: {'met' if abs(p / b - 1) <= 0.10 else 'MISSED'})")
    dist.destroy_process_group()


def main() -> int:
    """Launch a 2-rank torchrun world running :func:`worker`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.rounds)
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", __file__, "--worker",
           "--rounds", str(args.rounds)]
    return subprocess.run(cmd, env=env, timeout=600).returncode


if __name__ == "__main__":
    sys.exit(main())
