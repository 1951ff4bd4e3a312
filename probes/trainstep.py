"""Train-step probe: timed and profiled DDP steps; compute vs communication; stragglers; no_sync savings.

1. Synchronised steps (forward, backward with DDP's all-reduce, optimizer step): p50/p90 per rank.
2. The same steps under ``no_sync()``: the rank's own compute time. Under DDP every rank waits for
   the slowest inside the all-reduce, so synchronised step times look alike; the local times are
   what tell which rank is slow.
3. A few steps under torch.profiler: communication intervals (gloo/nccl/c10d all_reduce ops on the
   CPU, NCCL kernels on the GPU) against compute intervals; the communication not overlapped with
   compute, divided by the step time, is ``trainstep.comm_exposed_fraction``.
4. Gradient accumulation over k micro-steps with and without ``no_sync()`` on the first k-1.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import WORLD, Probe, ProbeContext, ProbeResult

WARMUP, STEPS, PROFILED, ACCUM_CYCLES, DEFAULT_ACCUM = 2, 8, 2, 2, 3
STEP_MARK = "troubleshoot.step"
COMM_MARKS = ("gloo:", "nccl:", "c10d::", "ncclKernel", "ncclDevKernel")


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) with linear interpolation."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge overlapping intervals."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def length(intervals: list[tuple[float, float]]) -> float:
    """Total length of disjoint intervals."""
    return sum(b - a for a, b in intervals)


def intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """Length of the intersection of two sorted disjoint interval lists."""
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def split_profile(events: list[Any], on_gpu: bool) -> dict[str, float]:
    """Compute, communication, overlap and exposed communication (seconds) of the profiled steps.

    CPU: compute is the top-level ops on the thread that ran the steps; communication is the
    collective ops on any thread (gloo runs them on its own threads, from enqueue to completion).
    GPU: kernels; NCCL kernels are communication, all others compute.
    """
    steps = [e for e in events if e.name == STEP_MARK]
    step_time = sum(e.time_range.end - e.time_range.start for e in steps) / 1e6
    windows = union([(e.time_range.start, e.time_range.end) for e in steps])
    main = {e.thread for e in steps}

    def is_comm(name: str) -> bool:
        return any(name.startswith(m) or m in name for m in COMM_MARKS)

    def clip(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return union([(max(a, w0), min(b, w1)) for a, b in intervals for w0, w1 in windows if min(b, w1) > max(a, w0)])

    if on_gpu:
        kernels = [e for e in events if str(e.device_type).endswith("CUDA")]
        comm = union([(e.time_range.start, e.time_range.end) for e in kernels if is_comm(e.name)])
        compute = union([(e.time_range.start, e.time_range.end) for e in kernels if not is_comm(e.name)])
    else:
        comm = clip([(e.time_range.start, e.time_range.end) for e in events if is_comm(e.name)])
        compute = clip([(e.time_range.start, e.time_range.end) for e in events
                        if e.thread in main and e.cpu_parent is not None and e.cpu_parent.name == STEP_MARK
                        and not is_comm(e.name)])
    overlap = intersect(comm, compute) / 1e6
    comm_s, compute_s = length(comm) / 1e6, length(compute) / 1e6
    return {"step_s": step_time, "compute_s": compute_s, "comm_s": comm_s, "overlap_s": overlap,
            "exposed_s": max(0.0, comm_s - overlap)}


class TrainStepProbe(Probe):
    """Profiles DDP train steps of the model: step-time percentiles, compute/communication split, no_sync savings."""

    id = "trainstep"
    title = "Profiled DDP train step"
    scope = WORLD
    needs = ("torch", "process_group")
    timeout_s = 90.0
    order = 230
    produces = (
        FactSpec("trainstep.model_source", "str", "user (--model) or builtin"),
        FactSpec("trainstep.step_p50_s", "float", "Median synchronised step time on this rank"),
        FactSpec("trainstep.step_p90_s", "float", "90th percentile synchronised step time on this rank"),
        FactSpec("trainstep.step_p90_p50", "float", "p90 / p50 of the synchronised step time (jitter)"),
        FactSpec("trainstep.steps", "int", "Timed steps per measurement"),
        FactSpec("trainstep.local_p50_s", "float", "Median step time under no_sync() (this rank's own compute)"),
        FactSpec("trainstep.rank_p50_s", "list", "Every rank's median synchronised step time, by rank"),
        FactSpec("trainstep.rank_local_p50_s", "list", "Every rank's median no_sync step time, by rank"),
        FactSpec("trainstep.slowest_rank", "int", "Rank with the longest no_sync (own compute) step time"),
        FactSpec("trainstep.slowest_ratio", "float", "Slowest rank's no_sync step time / median of the others'"),
        FactSpec("trainstep.rank_slowdown", "float", "This rank's no_sync step time / median of the other ranks'"),
        FactSpec("trainstep.compute_s", "float", "Compute time per profiled step"),
        FactSpec("trainstep.comm_s", "float", "Communication time per profiled step"),
        FactSpec("trainstep.overlap_s", "float", "Communication overlapped with compute per profiled step"),
        FactSpec("trainstep.comm_exposed_fraction", "float", "Communication not overlapped with compute / step time "
                 "(0..1), from torch.profiler"),
        FactSpec("trainstep.accum_steps", "int", "Micro-steps per accumulation cycle measured"),
        FactSpec("trainstep.accum_sync_s", "float", "Seconds per accumulation cycle all-reducing every micro-step"),
        FactSpec("trainstep.accum_no_sync_s", "float", "Seconds per accumulation cycle with no_sync() on k-1 micro-steps"),
        FactSpec("trainstep.no_sync_saving_fraction", "float", "1 - no_sync cycle / sync cycle"),
        FactSpec("trainstep.samples_per_s", "float", "Samples per second of the whole world (synchronised steps)"),
        FactSpec("trainstep.ids_per_s", "float", "Token ids per second of the whole world (tokens/s), when the input is "
                 "a batch of token-id sequences"),
        FactSpec("trainstep.error", "str", "Why the step could not run"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Warm up, time, time without sync, profile, accumulate; then share the medians."""
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        from troubleshooter.run import user_code
        from troubleshooter.run.in_rank import all_gather_json, device_sync, timed_calls

        if not dist.is_initialized():
            return self.skip("no process group")
        n = dist.get_world_size()
        device = torch.device(ctx.device or "cpu")
        cuda = device.type == "cuda"
        sync = device_sync(device)
        ctx.phase("build")
        try:
            loaded = user_code.load_model(ctx.options)
            model = loaded.module.to(device)
            batch = user_code.make_batch(model, ctx.options, device)
            ok = True
        except Exception as exc:  # every rank must agree before the DDP wrap (a collective)
            error, ok = f"{type(exc).__name__}: {exc}".splitlines()[0][:300], False
        agreed = all_gather_json(ok)
        if not all(agreed):
            return self.result({"trainstep.error": error if not ok else f"ranks {[r for r, a in enumerate(agreed) if not a]} "
                                "could not build the model"}, message="the train step could not run")
        ddp = DDP(model, device_ids=[device.index] if cuda else None)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-6)

        def train_step() -> None:
            optimizer.zero_grad(set_to_none=True)
            user_code.step(ddp, batch)
            optimizer.step()

        def local_step() -> None:
            with ddp.no_sync():
                train_step()

        ctx.phase("warm-up")
        timed_calls(train_step, WARMUP, sync)
        ctx.phase("timed steps")
        synced = timed_calls(train_step, STEPS, sync)
        ctx.phase("no_sync steps")
        local = timed_calls(local_step, STEPS, sync)
        ctx.phase("realign")
        dist.barrier()

        ctx.phase("profile")
        split = self.profile(train_step, sync, cuda)

        accum = int(ctx.options.get("grad_accum") or DEFAULT_ACCUM)
        ctx.phase(f"accumulate x{accum}")
        cycle_sync, cycle_nosync = [], []
        for _ in range(ACCUM_CYCLES):
            cycle_sync += timed_calls(lambda: self.accumulate(ddp, batch, optimizer, accum, False), 1, sync)
            cycle_nosync += timed_calls(lambda: self.accumulate(ddp, batch, optimizer, accum, True), 1, sync)

        ctx.phase("gather")
        mine = {"p50": statistics.median(synced), "local": statistics.median(local)}
        everyone = all_gather_json(mine)
        rank_local = [e["local"] for e in everyone]
        slowest = max(range(n), key=rank_local.__getitem__)

        def slowdown(rank: int) -> float | None:
            others = [v for r, v in enumerate(rank_local) if r != rank]
            return rank_local[rank] / statistics.median(others) if others and statistics.median(others) > 0 else None

        p50, p90 = mine["p50"], percentile(synced, 0.9)
        sync_s, nosync_s = statistics.median(cycle_sync), statistics.median(cycle_nosync)
        facts = {
            "trainstep.model_source": loaded.source, "trainstep.steps": STEPS,
            "trainstep.step_p50_s": p50, "trainstep.step_p90_s": p90, "trainstep.step_p90_p50": p90 / p50,
            "trainstep.local_p50_s": mine["local"], "trainstep.rank_p50_s": [e["p50"] for e in everyone],
            "trainstep.rank_local_p50_s": rank_local, "trainstep.slowest_rank": slowest,
            "trainstep.slowest_ratio": slowdown(slowest), "trainstep.rank_slowdown": slowdown(dist.get_rank()),
            "trainstep.compute_s": split["compute_s"] / PROFILED, "trainstep.comm_s": split["comm_s"] / PROFILED,
            "trainstep.overlap_s": split["overlap_s"] / PROFILED,
            "trainstep.comm_exposed_fraction": min(1.0, split["exposed_s"] / split["step_s"]) if split["step_s"] else None,
            "trainstep.accum_steps": accum, "trainstep.accum_sync_s": sync_s, "trainstep.accum_no_sync_s": nosync_s,
            "trainstep.no_sync_saving_fraction": max(0.0, 1 - nosync_s / sync_s) if sync_s > 0 else None,
            "trainstep.samples_per_s": batch.samples * n / p50,
        }
        if batch.tokens:
            facts["trainstep.ids_per_s"] = batch.tokens * n / p50
        exposed = facts["trainstep.comm_exposed_fraction"]
        message = (f"step p50 {p50 * 1000:.1f} ms, p90/p50 {p90 / p50:.2f}; exposed communication "
                   f"{(exposed or 0) * 100:.0f}% of the step; slowest rank {slowest} "
                   f"(x{facts['trainstep.slowest_ratio'] or 1:.2f}); {facts['trainstep.samples_per_s']:.0f} samples/s")
        return self.result(facts, message=message, split={k: round(v, 6) for k, v in split.items()},
                           step_times_s=[round(t, 5) for t in synced], local_times_s=[round(t, 5) for t in local])

    @staticmethod
    def profile(train_step: Callable[[], None], sync: Callable[[], None], cuda: bool) -> dict[str, float]:
        """Run PROFILED steps under torch.profiler and split their time."""
        from torch.autograd.profiler import record_function
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=activities) as prof:
            for _ in range(PROFILED):
                with record_function(STEP_MARK):
                    train_step()
                    sync()
        return split_profile(list(prof.events()), cuda)

    @staticmethod
    def accumulate(ddp: Any, batch: Any, optimizer: Any, micro: int, use_no_sync: bool) -> None:
        """One accumulation cycle of ``micro`` micro-steps; with ``use_no_sync`` only the last one all-reduces."""
        import contextlib

        from troubleshooter.run import user_code

        optimizer.zero_grad(set_to_none=True)
        for i in range(micro):
            skip = use_no_sync and i < micro - 1
            with ddp.no_sync() if skip else contextlib.nullcontext():
                user_code.step(ddp, batch)
        optimizer.step()
