"""Start-up probe: times each phase of a DDP start-up on every rank and tables them phase x rank.

Phases: process-group init, the ``--model`` factory, the ``--data`` factory, ``.to(device)``, the DDP
wrap and the first forward/backward. The local phases (model, data, move) are followed by an
untimed barrier so the DDP wrap and the first step measure themselves, not a late rank.
"""

from __future__ import annotations

import importlib
import os
import statistics
import time
from pathlib import Path
from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import WORLD, Probe, ProbeContext, ProbeResult

PHASES = ("init", "model-load", "data-load", "to-device", "ddp-import", "ddp-wrap", "first-step")
# The first DDP() imports torch._dynamo (seconds on a small CPU); every DDP job pays it and cannot
# change it, so it is timed on its own and left out of the "slowest phase" judgement.
ACTIONABLE = tuple(p for p in PHASES if p != "ddp-import")
LOCAL = ("model-load", "data-load", "to-device")  # phases a rank does alone: who is behind shows here
LOCK_SCAN_LIMIT = 10000


def hf_cache_dirs(env: dict) -> list[Path]:
    """Hugging Face cache folders named by the environment (or the default one)."""
    home = Path(env.get("HF_HOME") or Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface")
    dirs = [Path(env[v]) for v in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE")
            if env.get(v)]
    return dirs or [home / "hub", home / "datasets"]


def count_lock_files(dirs: list[Path]) -> int:
    """``*.lock`` files in the caches (huggingface_hub keeps them under ``.locks/``), bounded."""
    count = 0
    for directory in dirs:
        if not directory.is_dir():
            continue
        for _, _, files in os.walk(directory):
            count += sum(1 for f in files if f.endswith(".lock"))
            if count >= LOCK_SCAN_LIMIT:
                return count
    return count


class StartupProbe(Probe):
    """Times init, model load, data load, move, DDP wrap and first step per rank; finds the slow phase and rank."""

    id = "startup"
    title = "Start-up phases per rank"
    scope = WORLD
    needs = ("torch", "process_group")
    timeout_s = 60.0
    order = 210
    produces = (
        FactSpec("startup.phase_s", "dict", "Seconds of each start-up phase on this rank"),
        FactSpec("startup.total_s", "float", "Sum of this rank's start-up phases"),
        FactSpec("startup.slowest_phase", "str", "This rank's longest phase (ddp-import aside)"),
        FactSpec("startup.slowest_phase_s", "float", "Seconds of the longest phase"),
        FactSpec("startup.slowest_phase_share", "float", "Longest phase / start-up without ddp-import (0..1)"),
        FactSpec("startup.failed_phase", "str", "The phase that raised, when one did"),
        FactSpec("startup.error", "str", "The error of the failed phase"),
        FactSpec("startup.wait_s", "float", "Seconds this rank waited at the barrier after its local phases"),
        FactSpec("startup.rank_local_s", "list", "Every rank's local phases (model, data, move) in seconds, by rank"),
        FactSpec("startup.slowest_rank", "int", "Rank with the longest local phases"),
        FactSpec("startup.behind_s", "float", "This rank's local phases minus the median of the other ranks'"),
        FactSpec("startup.behind_ratio", "float", "This rank's local phases / the median of the other ranks'"),
        FactSpec("startup.hf_calls", "list", "Hugging Face cache calls (from_pretrained, load_dataset, ...) in the "
                 "--model/--data factory modules: {call, repo, path, line}"),
        FactSpec("startup.hf_cache_locks", "int", "*.lock files found in the Hugging Face caches"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Run the start-up for real, one timed phase at a time, then gather the table."""
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        from troubleshooter.run import user_code
        from troubleshooter.run.in_rank import all_gather_json

        if not dist.is_initialized():
            return self.skip("no process group")
        device = torch.device(ctx.device or "cpu")
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
        phases: dict[str, float] = {}
        if "world.init_s" in ctx.facts:
            phases["init"] = float(ctx.facts["world.init_s"])
        facts: dict[str, Any] = {}
        state: dict[str, Any] = {}

        def timed(name: str, action) -> bool:
            ctx.phase(name)
            started = time.perf_counter()
            try:
                action()
                sync()
            except Exception as exc:  # the user's code failed: that is the finding, keep the table
                facts.update({"startup.failed_phase": name, "startup.error": f"{type(exc).__name__}: {exc}"[:300]})
                return False
            phases[name] = time.perf_counter() - started
            return True

        def load_model() -> None:
            state["loaded"] = user_code.load_model(ctx.options)

        ok = timed("model-load", load_model)
        if ok:  # a cached factory result keeps the time of the real load
            phases["model-load"] = state["loaded"].load_s
        if ok and ctx.options.get("data"):
            ok = timed("data-load", lambda: state.update(data=user_code.load_data(ctx.options)))
        ok = ok and timed("to-device", lambda: state.update(model=state["loaded"].module.to(device)))

        ctx.phase("barrier")
        started = time.perf_counter()
        flags = all_gather_json(ok)
        facts["startup.wait_s"] = time.perf_counter() - started
        if all(flags):
            timed("ddp-import", lambda: importlib.import_module("torch._dynamo"))
            ids = [device.index] if device.type == "cuda" else None
            if timed("ddp-wrap", lambda: state.update(ddp=DDP(state["model"], device_ids=ids))):
                def first_step() -> None:
                    batch = user_code.make_batch(state["model"], ctx.options, device, state.get("data"))
                    user_code.step(state["ddp"], batch)
                timed("first-step", first_step)

        ctx.phase("gather")
        local = sum(phases.get(p, 0.0) for p in LOCAL)
        tables = all_gather_json({"phases": phases, "local": local})
        total = sum(phases.values())
        judged = {p: s for p, s in phases.items() if p in ACTIONABLE}
        slowest = max(judged, key=judged.get) if judged else None
        rank_local = [t["local"] for t in tables]
        others = [v for r, v in enumerate(rank_local) if r != dist.get_rank()]
        facts.update({"startup.phase_s": {k: round(v, 4) for k, v in phases.items()}, "startup.total_s": total,
                      "startup.rank_local_s": [round(v, 4) for v in rank_local],
                      "startup.slowest_rank": max(range(len(rank_local)), key=rank_local.__getitem__)})
        if slowest:
            facts.update({"startup.slowest_phase": slowest, "startup.slowest_phase_s": phases[slowest],
                          "startup.slowest_phase_share": phases[slowest] / sum(judged.values())
                          if sum(judged.values()) > 0 else 0.0})
        if others:
            median = statistics.median(others)
            facts["startup.behind_s"] = local - median
            if median > 0:
                facts["startup.behind_ratio"] = local / median
        spec_hits = user_code.hf_calls(ctx.options.get("model")) + user_code.hf_calls(ctx.options.get("data"))
        facts["startup.hf_calls"] = spec_hits
        if spec_hits:
            facts["startup.hf_cache_locks"] = count_lock_files(hf_cache_dirs(dict(ctx.env)))
        table = self.table(tables)
        message = f"start-up {total:.2f} s on rank {ctx.rank}" + (
            f", longest phase {slowest} {phases[slowest]:.2f} s" if slowest else "") + (
            f"; {facts['startup.failed_phase']} failed: {facts['startup.error']}" if "startup.failed_phase" in facts else "")
        return self.result(facts, message=message, table=table)

    @staticmethod
    def table(tables: list[dict]) -> list[dict]:
        """Rows phase x rank (seconds), each with the slowest rank of that phase marked."""
        rows = []
        for phase in PHASES:
            values = {r: t["phases"][phase] for r, t in enumerate(tables) if phase in t["phases"]}
            if values:
                slowest = max(values, key=values.get)
                rows.append({"phase": phase, **{f"rank {r}": round(v, 4) for r, v in values.items()},
                             "slowest_rank": slowest})
        return rows
