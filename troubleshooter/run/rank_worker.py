"""One rank of the diagnosis world: join the process group, run RANK/WORLD probes, stream events.

Events are JSON lines appended to a per-rank file so a supervisor can tell, at any time,
which probe and phase each rank is in (that is how a hang names the stuck rank).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

from troubleshooter.core.facts import Facts
from troubleshooter.core.probe import ProbeContext, ProbeResult, run_probe
from troubleshooter.core.registry import Registry
from troubleshooter.run.job import Job

Emit = Callable[..., None]


def file_emitter(path: Path) -> Emit:
    """An ``emit(event, **data)`` that appends flushed JSON lines to ``path``."""
    handle = open(path, "a", buffering=1, encoding="utf-8")

    def emit(event: str, **data: Any) -> None:
        handle.write(json.dumps({"t": time.time(), "event": event, **data}, default=str) + "\n")
        handle.flush()
    return emit


def identity(env: dict[str, str]) -> tuple[int, int, int, int]:
    """(rank, local_rank, world_size, local_world_size) from torch-style variables."""
    rank = int(env["RANK"])
    world = int(env["WORLD_SIZE"])
    local_rank = int(env.get("LOCAL_RANK", rank))
    local_world = int(env.get("LOCAL_WORLD_SIZE", world))
    return rank, local_rank, world, local_world


def join_world(backend_request: str, env: dict[str, str], timeout_s: float, emit: Emit) -> tuple[str, str, float]:
    """Initialise the default process group; return (backend, device, seconds it took)."""
    import torch
    import torch.distributed as dist

    from troubleshooter.run.in_rank import choose_backend, rank_device

    rank, local_rank, world, local_world = identity(env)
    backend = choose_backend(backend_request, local_world)
    device = rank_device(backend, local_rank)
    if device.startswith("cuda") and torch.cuda.is_available():  # a CPU-only torch has no set_device to call
        torch.cuda.set_device(local_rank)
    emit("init-start", backend=backend)
    started = time.perf_counter()
    dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(seconds=timeout_s))
    took = time.perf_counter() - started
    emit("init-done", seconds=took, backend=backend, device=device)
    return backend, device, took


def run_in_rank(probe_ids: list[str], registry: Registry, job: Job, env: dict[str, str], backend: str | None,
                device: str | None, init_s: float | None, emit: Emit, as_node: bool = False) -> list[ProbeResult]:
    """Run the probes in order inside this rank, emitting start/phase/end events.

    NODE probes (``as_node``: no rank identity, results carry rank None) judge the user's environment
    ``job.probe_env``; RANK/WORLD probes judge it too, except in the troubleshooter's own local world.
    """
    rank, local_rank, world = (None, None, None) if as_node else identity(env)[:3]
    judged = env if job.local_world and not as_node else job.probe_env
    known = dict(job.facts)
    if init_s is not None:
        known["world.init_s"] = init_s
    results = []
    for probe_id in probe_ids:
        probe = registry.get(probe_id)()
        emit("probe-start", probe=probe_id)
        ctx = ProbeContext(env=judged, options=job.options, facts=Facts.from_dict(known, "earlier", rank),
                           rank=rank, local_rank=local_rank, world_size=world, backend=backend, device=device,
                           timeout_s=job.timeouts.get(probe_id, probe.timeout_s),
                           on_phase=lambda name, _p=probe_id: emit("phase", probe=_p, phase=name))
        result = run_probe(probe, ctx)
        result.rank = rank
        known.update(result.facts)
        emit("probe-end", probe=probe_id, result=result.to_dict())
        results.append(result)
    return results


def exit_with_supervisor(supervisor_pid: int, poll_s: float = 0.5) -> threading.Thread:
    """Kill this rank's process group once its supervisor is gone (SIGKILL, OOM killer, a crash).

    A rank runs in a session of its own, so nothing else takes it down: a rank stuck in a collective
    would otherwise outlive the tool until its own timeout.
    """
    def watch() -> None:
        while os.getppid() == supervisor_pid:
            time.sleep(poll_s)
        os.killpg(os.getpgid(0), signal.SIGKILL)
    thread = threading.Thread(target=watch, name="exit-with-supervisor", daemon=True)
    thread.start()
    return thread


def main(job_path: str) -> int:
    """Entry point of a spawned rank (see local_world.py and distributed/rank.py)."""
    exit_with_supervisor(os.getppid())
    job = Job.read(job_path)
    env = dict(os.environ)
    rank = int(env["RANK"])
    emit = file_emitter(Path(job.events_dir) / f"rank{rank}.jsonl")
    emit("hello", pid=os.getpid(), host=socket.gethostname())
    try:
        registry = Registry.load(job.probe_dirs)
        if job.node_probes and identity(env)[1] == 0:  # once per node, with the user's environment
            run_in_rank(job.node_probes, registry, job, env, None, None, None, emit, as_node=True)
        backend, device, init_s = (None, None, None)
        if job.needs_world:
            backend, device, init_s = join_world(job.backend, env, job.init_timeout_s, emit)
        run_in_rank(job.probes, registry, job, env, backend, device, init_s, emit)
        if job.needs_world:
            import torch.distributed as dist
            dist.destroy_process_group()
    except Exception as exc:  # report, then let the supervisor decide
        emit("error", message=f"{type(exc).__name__}: {exc}")
        return 1
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
