"""Collective probe: a verified all_reduce, a monitored barrier that names missing ranks, a bandwidth sweep.

Bandwidth follows nccl-tests (doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw x 2(n-1)/n
for all_reduce; warm-up iterations, then the median of timed iterations, taking for each size the
slowest rank's median (a collective is as fast as its slowest participant).
"""

from __future__ import annotations

import re
import socket
import statistics
from datetime import timedelta
from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import WORLD, Probe, ProbeContext, ProbeResult

KIB, MIB = 1024, 1024 * 1024
# (bytes, warm-up iterations, timed iterations): CPU sizes stop at 16 MiB to keep the probe near a second.
CPU_SWEEP = ((KIB, 3, 20), (32 * KIB, 3, 15), (MIB, 2, 10), (16 * MIB, 2, 7))
GPU_SWEEP = tuple((KIB * 4 ** i, 5, 20) for i in range(9))  # 1 KiB ... 64 MiB
MISSING_RE = re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier")


def bus_factor(world_size: int) -> float:
    """all_reduce bus-bandwidth correction 2(n-1)/n (nccl-tests)."""
    return 2.0 * (world_size - 1) / world_size if world_size > 1 else 1.0


def missing_ranks(message: str) -> list[int]:
    """Ranks named in gloo's "Rank N failed to pass monitoredBarrier" message(s)."""
    return sorted({int(r) for m in MISSING_RE.finditer(message) for r in m.group(1).replace(" ", "").split(",") if r})


def time_allreduce(tensor: Any, warmup: int, iters: int, sync: Any) -> list[float]:
    """Seconds of each timed all_reduce of ``tensor`` after ``warmup`` untimed ones (``sync`` waits for the device)."""
    import torch.distributed as dist

    from troubleshooter.run.in_rank import timed_calls

    for _ in range(warmup):
        dist.all_reduce(tensor)
    sync()
    return timed_calls(lambda: dist.all_reduce(tensor), iters, sync)


def load_expectations(options: dict) -> dict:
    """The bandwidth table of rules/expectations.yaml and the run's --rules overlays (the knowledge loader)."""
    from troubleshooter.core.ruleset import load_rules

    return load_rules(options.get("rules") or [], only=("expectations",)).expectations


def expected_busbw(expectations: dict, backend: str, transport: str) -> float | None:
    """slow_below_gbps of the ``links`` entry matching (backend, transport), if the table has one."""
    for link in expectations.get("links") or []:
        if isinstance(link, dict) and link.get("backend") == backend and link.get("transport") == transport:
            value = link.get("slow_below_gbps")
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return None


class CollectiveProbe(Probe):
    """Checks that all_reduce is correct and every rank reaches a barrier, then measures bus bandwidth."""

    id = "collective"
    title = "Collectives: correctness, barrier and bandwidth"
    scope = WORLD
    needs = ("torch", "process_group")
    timeout_s = 30.0
    order = 200
    produces = (
        FactSpec("collective.init_s", "float", "Seconds this rank spent in init_process_group"),
        FactSpec("collective.allreduce_ok", "bool", "An all_reduce of ones returned world_size everywhere"),
        FactSpec("collective.allreduce_expected", "float", "The value every element should have had"),
        FactSpec("collective.allreduce_got", "float", "The first wrong value seen (the right one when all were right)"),
        FactSpec("collective.barrier_ok", "bool", "Every rank passed the monitored barrier in time"),
        FactSpec("collective.barrier_timeout_s", "float", "Timeout of the monitored barrier"),
        FactSpec("collective.barrier_error", "str", "The barrier's error message"),
        FactSpec("collective.missing_ranks", "list", "Ranks the monitored barrier named as not arriving"),
        FactSpec("collective.busbw_gbps", "float", "all_reduce bus bandwidth at the largest size, GB/s"),
        FactSpec("collective.algbw_gbps", "float", "all_reduce algorithm bandwidth at the largest size, GB/s"),
        FactSpec("collective.busbw_bytes", "int", "Message size of busbw_gbps"),
        FactSpec("collective.latency_us", "float", "all_reduce latency at the smallest size, microseconds"),
        FactSpec("collective.link", "str", "backend/transport measured: gloo/loopback, gloo/tcp, nccl/intranode, "
                 "nccl/internode"),
        FactSpec("collective.expected_busbw_gbps", "float", "Bus bandwidth below which this link is slow "
                 "(rules/expectations.yaml links: slow_below_gbps)"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Barrier first (it names absent ranks), then verify and sweep; every phase is announced."""
        import torch
        import torch.distributed as dist

        from troubleshooter.run.in_rank import all_gather_json, device_sync, object_group

        if not dist.is_initialized():
            return self.skip("no process group")
        n = dist.get_world_size()
        device = torch.device(ctx.device or "cpu")
        cuda = device.type == "cuda"
        sync = device_sync(device)
        facts: dict[str, Any] = {}
        if "world.init_s" in ctx.facts:
            facts["collective.init_s"] = float(ctx.facts["world.init_s"])

        ctx.phase("barrier")
        limit = max(1.0, min(30.0, ctx.timeout_s / 4))
        facts["collective.barrier_timeout_s"] = limit
        try:
            dist.monitored_barrier(group=object_group(), timeout=timedelta(seconds=limit), wait_all_ranks=True)
            facts["collective.barrier_ok"] = True
        except RuntimeError as exc:
            facts.update({"collective.barrier_ok": False, "collective.barrier_error": str(exc).splitlines()[0][:300],
                          "collective.missing_ranks": missing_ranks(str(exc))})
            return self.result(facts, message=f"monitored barrier failed: {facts['collective.barrier_error']}")

        ctx.phase("verify")
        ones = torch.ones(1024, device=device)
        dist.all_reduce(ones)
        sync()
        wrong = ones[ones != n]
        facts.update({"collective.allreduce_ok": wrong.numel() == 0, "collective.allreduce_expected": float(n),
                      "collective.allreduce_got": float(wrong[0] if wrong.numel() else ones[0])})

        ctx.phase("hosts")
        hosts = all_gather_json(socket.gethostname())
        backend = dist.get_backend()
        one_host = len(set(hosts)) == 1
        transport = ("loopback" if one_host else "tcp") if backend == "gloo" else ("intranode" if one_host else "internode")
        facts["collective.link"] = f"{backend}/{transport}"
        expected = expected_busbw(load_expectations(dict(ctx.options)), backend, transport)
        if expected is not None:
            facts["collective.expected_busbw_gbps"] = expected

        if n == 1:  # an all_reduce over one rank moves nothing: no bandwidth to measure
            verdict = "correct" if facts["collective.allreduce_ok"] else "WRONG"
            return self.result(facts, message=f"all_reduce {verdict}; 1 rank, so no bandwidth to measure")
        medians = []
        sweep = GPU_SWEEP if cuda else CPU_SWEEP
        for size, warmup, iters in sweep:
            ctx.check_cancelled()
            ctx.phase(f"sweep {size // KIB} KiB")
            tensor = torch.zeros(size // 4, dtype=torch.float32, device=device)
            medians.append(statistics.median(time_allreduce(tensor, warmup, iters, sync)))
        ctx.phase("sweep reduce")
        slowest = torch.tensor(medians, dtype=torch.float64, device=device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        table = []
        for (size, _, iters), seconds in zip(sweep, slowest.tolist()):
            algbw = size / seconds / 1e9
            table.append({"bytes": size, "iters": iters, "time_us": round(seconds * 1e6, 1),
                          "algbw_gbps": round(algbw, 4), "busbw_gbps": round(algbw * bus_factor(n), 4)})

        ctx.phase("verify large")
        tensor.fill_(1.0)
        dist.all_reduce(tensor)
        sync()
        wrong = tensor[tensor != n]
        if wrong.numel():
            facts.update({"collective.allreduce_ok": False, "collective.allreduce_got": float(wrong[0])})
        last = table[-1]
        facts.update({"collective.busbw_gbps": last["busbw_gbps"], "collective.algbw_gbps": last["algbw_gbps"],
                      "collective.busbw_bytes": last["bytes"], "collective.latency_us": table[0]["time_us"]})
        verdict = "correct" if facts["collective.allreduce_ok"] else "WRONG"
        return self.result(facts, message=f"all_reduce {verdict}; busbw {last['busbw_gbps']:.3g} GB/s at "
                           f"{last['bytes'] // MIB} MiB ({facts['collective.link']}, {n} ranks)",
                           sweep=table, hosts=hosts)
