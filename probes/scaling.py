"""Scaling probe (opt-in): train-step throughput at world sizes 1..N and step time against growing work.

World sizes use subgroups (``new_group(ranks=[0..k-1])``) of the running world, each with its own
DDP wrap; the ranks outside a subgroup wait at a barrier. Efficiency at N ranks is
throughput(N) / (N x throughput(1)) at the same per-rank batch. Then, on the full world, the batch
(and, for token-id inputs, the sequence length) is repeated 1x, 2x, 4x and the exponent of step
time against work is fitted (log-log least squares): 1 is linear.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import WORLD, Probe, ProbeContext, ProbeResult

WARMUP, STEPS = 2, 6
GROWTH = (1, 2, 4)


def exponent(work: list[float], seconds: list[float]) -> float:
    """Slope of log(seconds) against log(work): 1 when time grows linearly with the work."""
    xs, ys = [math.log(w) for w in work], [math.log(s) for s in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def grow(value: Any, factor: int, dim: int) -> Any:
    """Every tensor inside ``value`` repeated ``factor`` times along ``dim`` (batch 0, sequence 1)."""
    import torch

    if isinstance(value, torch.Tensor):
        return torch.cat([value] * factor, dim=dim) if value.dim() > dim else value
    if isinstance(value, (list, tuple)):
        return type(value)(grow(v, factor, dim) for v in value)
    if isinstance(value, dict):
        return {k: grow(v, factor, dim) for k, v in value.items()}
    return value


class ScalingProbe(Probe):
    """Measures scaling efficiency over world sizes and the growth of step time with batch and sequence length."""

    id = "scaling"
    title = "Scaling over ranks, batch and sequence length"
    scope = WORLD
    needs = ("torch", "process_group")
    timeout_s = 180.0
    default = False
    order = 240
    produces = (
        FactSpec("scaling.world_sizes", "list", "World sizes measured"),
        FactSpec("scaling.samples_per_s", "list", "Throughput (samples/s, all ranks) at each world size"),
        FactSpec("scaling.efficiency", "float", "Throughput at N ranks / (N x throughput at 1 rank)"),
        FactSpec("scaling.batch_exponent", "float", "Exponent of step time vs batch size (1 = linear)"),
        FactSpec("scaling.seq_exponent", "float", "Exponent of step time vs sequence length (token-id inputs)"),
        FactSpec("scaling.error", "str", "Why scaling could not be measured"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """World sizes first, then batch and sequence growth on the whole world."""
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        from troubleshooter.run import user_code
        from troubleshooter.run.in_rank import device_sync, timed_calls

        if not dist.is_initialized():
            return self.skip("no process group")
        n, rank = dist.get_world_size(), dist.get_rank()
        device = torch.device(ctx.device or "cpu")
        sync = device_sync(device)
        ids = [device.index] if device.type == "cuda" else None
        model = user_code.load_model(ctx.options).module.to(device)
        batch = user_code.make_batch(model, ctx.options, device)

        def p50(ddp: Any, args: tuple, kwargs: dict) -> float:
            optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-6)

            def step() -> None:
                optimizer.zero_grad(set_to_none=True)
                user_code.loss_of(ddp(*args, **kwargs)).backward()
                optimizer.step()
            return statistics.median(timed_calls(step, WARMUP + STEPS, sync)[WARMUP:])

        sizes, throughput, table = [], [], []
        for k in range(1, n + 1):
            ctx.phase(f"world size {k}")
            group = dist.new_group(ranks=list(range(k)))  # every rank must call new_group
            if rank < k:
                seconds = p50(DDP(model, device_ids=ids, process_group=group), batch.args, batch.kwargs)
            else:
                seconds = None
            dist.barrier()
            step = torch.tensor([seconds or 0.0], dtype=torch.float64, device=device)
            dist.all_reduce(step, op=dist.ReduceOp.MAX)
            sizes.append(k)
            throughput.append(k * batch.samples / step.item())
            table.append({"ranks": k, "step_s": round(step.item(), 5), "samples_per_s": round(throughput[-1], 2)})
        facts: dict[str, Any] = {"scaling.world_sizes": sizes, "scaling.samples_per_s": throughput}
        if n > 1:
            facts["scaling.efficiency"] = throughput[-1] / (n * throughput[0])

        ddp = DDP(model, device_ids=ids)
        growth: dict[str, list] = {}
        dims = {"batch": 0, **({"seq": 1} if batch.tokens else {})}
        for name, dim in dims.items():
            times = []
            for factor in GROWTH:
                ctx.phase(f"{name} x{factor}")
                times.append(p50(ddp, grow(batch.args, factor, dim), grow(batch.kwargs, factor, dim)))
            growth[name] = times
            facts[f"scaling.{name}_exponent"] = exponent(list(GROWTH), times)
            table += [{name: f"x{f}", "step_s": round(t, 5)} for f, t in zip(GROWTH, times)]
        eff = facts.get("scaling.efficiency")
        message = (f"efficiency {eff * 100:.0f}% at {n} ranks; " if eff is not None else "") + ", ".join(
            f"{k} exponent {facts[f'scaling.{k}_exponent']:.2f}" for k in dims)
        if rank != 0:  # every rank measured the same reduced numbers: rank 0 alone reports them
            facts = {}
        return self.result(facts, message=message, table=table)
