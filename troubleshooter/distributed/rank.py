"""One launched process = the supervisor of one rank child.

The child is the same ``troubleshooter.run.rank_worker`` the local world uses: it joins the real
process group (with a timeout) and runs the RANK and WORLD probes, streaming events. This
process supervises it with ``local_world.supervise`` (per-probe deadlines; a hang is torn down
and named), runs the NODE probes when it is local rank 0, and packs everything into a JSON
payload for rank 0. The child can hang or die; the supervisor always returns a payload.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from troubleshooter.distributed.identity import Identity
from troubleshooter.run.local_world import SupervisedRank, supervise
from troubleshooter.core.probe import ProbeResult
from troubleshooter.run.events import Listener, RunEvent, ignore
from troubleshooter.run.job import Job
from troubleshooter.run.node_runner import kill_group, run_node_probes
from troubleshooter.run.options import RunOptions
from troubleshooter.run.plan import Plan

AGREE_PREFIXES = ("NCCL_", "GLOO_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_")
AGREE_NAMES = ("WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_WORLD_SIZE", "TORCHELASTIC_RUN_ID")


def job_env(env: dict[str, str]) -> dict[str, str]:
    """The variables that every rank of one job is expected to share (compared across ranks by rank 0)."""
    return {k: v for k, v in env.items() if k in AGREE_NAMES or k.startswith(AGREE_PREFIXES)}


def versions() -> dict[str, str]:
    """Python / torch / CUDA / NCCL versions of this interpreter (the rank's own, measured here)."""
    import torch

    found = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda or "none"}
    if torch.cuda.is_available():
        found["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    return found


def run_rank(ident: Identity, plan: Plan, opts: RunOptions, user_env: dict[str, str], join_timeout_s: float,
             listener: Listener = ignore) -> dict[str, Any]:
    """Run this rank's share of ``plan`` and return its payload (never raises for a child failure).

    NODE probes run once per node (local rank 0), beside the rank child, judging the user's environment.
    """
    node_results: list[ProbeResult] = []

    def node_done(result: ProbeResult) -> None:
        node_results.append(result)
        listener(RunEvent("result", result=result))

    node_thread = threading.Thread(target=run_node_probes, daemon=True, kwargs=dict(
        probes=list(plan.node) if ident.local_rank == 0 else [], env=user_env, options=opts.probe_options(),
        facts={}, probe_dirs=opts.probe_dirs, timeouts=plan.timeouts, on_done=node_done))
    node_thread.start()
    payload: dict[str, Any] = {"rank": ident.rank, "host": socket.gethostname(), "pid": os.getpid(),
                               "identity": vars(ident), "env": job_env(user_env), "versions": versions()}
    try:
        payload.update(_run_child(ident, plan.rank_job(opts, {}, user_env, join_timeout_s), listener))
    finally:
        node_thread.join()
    payload["node_results"] = [r.to_dict() for r in node_results]
    return payload


def _run_child(ident: Identity, job: Job, listener: Listener) -> dict[str, Any]:
    phases: list[str] = []
    join: dict[str, Any] = {}

    def on_event(rank: int, event: dict) -> None:
        if event["event"] in ("probe-start", "phase"):
            phases.append(f"{event['probe']}:{event.get('phase', 'start')}")
        elif event["event"] == "init-start":
            phases.append("init:init_process_group")
            join["started"] = event["t"]
        elif event["event"] == "init-done":
            join["seconds"] = event.get("seconds")
        elif event["event"] == "probe-end":
            listener(RunEvent("result", result=ProbeResult.from_dict(event["result"])))

    with tempfile.TemporaryDirectory(prefix="troubleshoot-rank-") as tmp:
        events_dir = Path(tmp)
        job.events_dir, job.needs_world, job.node_probes = str(events_dir), True, []
        path = job.write(events_dir / "job.json")
        log_path = events_dir / f"rank{ident.rank}.log"
        started = time.time()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "troubleshooter.run.rank_worker", str(path)],
                                    env={**job.probe_env, **ident.torch_env(), "PYTHONUNBUFFERED": "1"},
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            state = SupervisedRank(ident.rank, proc)
            try:
                world_facts = supervise({ident.rank: state}, events_dir, job.timeouts, job.init_timeout_s, on_event)
            finally:
                kill_group(proc)
        tail = "\n".join(log_path.read_text(errors="replace").strip().splitlines()[-20:])
    joined = "seconds" in join
    return {
        "results": [r.to_dict() for r in state.results], "backend": state.backend, "device": state.device,
        "joined": joined, "init_s": join.get("seconds"),
        "join_error": None if joined else (state.error or world_facts.get("world.teardown_reason")
                                           or "the rank child ended before joining"),
        "join_duration_s": time.time() - join.get("started", started),
        "done": state.done, "phases": phases, "finished": state.finished,
        "stuck": {"probe": state.probe, "phase": state.phase} if not state.done else None,
        "world_facts": world_facts, "exit_code": proc.returncode, "log_tail": tail,
    }
