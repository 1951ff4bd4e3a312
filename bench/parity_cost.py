"""Benchmark: wall time of the parity probe against a plain DDP loop of the same steps, 2 gloo ranks.

The model is a ~10 M-parameter MLP with dropout (``build_model`` below). The plain loop is what a
user's own first steps cost: DDP wrap, then ``STEPS`` x (zero_grad, forward, backward with the
all-reduce, SGD step). The probe does the same steps plus its comparisons. The factory runs once
before both (the probe and the loop get copies). Target: probe <= 3x the plain loop.

    python bench/parity_cost.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BATCH = 32


def build_model():
    """~10 M parameters: 1024 -> 2048 -> 2048 -> 1024 -> 1024, GELU, LayerNorm, dropout."""
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Dropout(0.1), nn.Linear(2048, 2048), nn.GELU(),
                          nn.Linear(2048, 1024), nn.LayerNorm(1024), nn.Linear(1024, 1024))
    model.example_input_array = torch.randn(BATCH, 1024)
    return model


def worker(repeat: int) -> None:
    """One rank: alternate the plain loop and the probe ``repeat`` times; rank 0 prints the medians."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from troubleshooter.core.probe import ProbeContext
    from troubleshooter.run import user_code

    spec = importlib.util.spec_from_file_location("parity_probe", ROOT / "probes" / "parity.py")
    parity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parity)
    dist.init_process_group("gloo")
    options = {"model": "parity_cost:build_model", "cwd": str(HERE)}
    user_code.load_model(options)  # the factory once; both sides get copies
    n_params = sum(p.numel() for p in user_code.load_model(options).module.parameters())

    def plain() -> None:
        model = user_code.load_model(options).module.train()
        batch = user_code.make_batch(model, options, torch.device("cpu"))
        ddp = DDP(model)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=parity.LR)
        for _ in range(parity.STEPS):
            optimizer.zero_grad(set_to_none=True)
            user_code.step(ddp, batch)
            optimizer.step()

    phases: dict[str, list[float]] = {}

    def probe() -> None:
        marks: list[tuple[str, float]] = []
        ctx = ProbeContext(env=dict(os.environ), options=options, rank=dist.get_rank(), device="cpu",
                           on_phase=lambda name: marks.append((name, time.perf_counter())))
        result = parity.ParityProbe().run(ctx)
        marks.append(("end", time.perf_counter()))
        for (name, start), (_, end) in zip(marks, marks[1:]):
            phases.setdefault(name, []).append(end - start)
        if result.status != "ok" or result.facts.get("parity.error"):
            raise SystemExit(f"probe failed: {result.message} {result.facts.get('parity.error', '')}")

    def timed(call) -> float:
        dist.barrier()
        started = time.perf_counter()
        call()
        dist.barrier()
        return time.perf_counter() - started

    plain_s, probe_s = [], []
    for _ in range(repeat):
        plain_s.append(timed(plain))
        probe_s.append(timed(probe))
    if dist.get_rank() == 0:
        p, q = statistics.median(plain_s), statistics.median(probe_s)
        print(f"model: {n_params / 1e6:.1f} M parameters, batch {BATCH} per rank, {dist.get_world_size()} gloo ranks, "
              f"{parity.STEPS} steps")
        print(f"plain DDP loop: {p:.3f} s (median of {repeat}: {', '.join(f'{x:.3f}' for x in plain_s)})")
        print(f"parity probe:   {q:.3f} s (median of {repeat}: {', '.join(f'{x:.3f}' for x in probe_s)})")
        print(f"ratio probe / plain loop: {q / p:.2f} (target <= 3.00)")
        print("probe phases on rank 0 (median s): " + ", ".join(f"{k} {statistics.median(v):.3f}"
                                                               for k, v in phases.items()))
    dist.destroy_process_group()


def main() -> int:
    """Launch the 2-rank world with torchrun (beside this Python)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.repeat)
        return 0
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", str(Path(__file__).resolve()),
           "--worker", "--repeat", str(args.repeat)]
    return subprocess.run(cmd, cwd=HERE, timeout=1200).returncode


if __name__ == "__main__":
    sys.exit(main())
