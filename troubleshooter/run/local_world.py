"""Start a local world of rank processes, supervise them, and turn hangs into named stuck ranks.

The supervisor reads each rank's event stream (rank_worker.py). Every probe has a deadline
from the moment the first rank enters it; past it, the world is torn down (process groups
killed, children reaped) and the ranks that had not finished are reported with the phase
each was in. A rank that dies takes the world down the same way.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from troubleshooter.core.launchers import LOCAL_WORLD_VAR
from troubleshooter.core.probe import ProbeResult
from troubleshooter.run.job import Job
from troubleshooter.run.node_runner import kill_group

POLL_S = 0.02


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
PORT_SPAN = 10_000  # how far below the ephemeral range a master port is drawn


def free_port() -> int:
    """A TCP port that was free a moment ago, below the kernel's ephemeral range when that range is known.

    Between this check and the store binding the port, the kernel may hand an ephemeral port to any
    outgoing connection or ``bind(0)`` on the machine (other jobs' gloo pairs, other tests); a port
    below that range is never handed out on its own, so only an explicit bind can take it.
    """
    low = _ephemeral_low()
    if low > 1024 + PORT_SPAN:
        for _ in range(50):
            port = random.randrange(low - PORT_SPAN, low)
            with socket.socket() as s:
                try:
                    s.bind(("", port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ephemeral_low() -> int:
    """The lowest port of the kernel's ephemeral range (0 when unknown)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


@dataclass
class SupervisedRank:
    """What the supervisor knows about one rank."""

    rank: int
    proc: subprocess.Popen
    probe: str | None = None
    phase: str | None = None
    finished: list[str] = field(default_factory=list)
    results: list[ProbeResult] = field(default_factory=list)
    backend: str | None = None
    device: str | None = None
    host: str = ""
    done: bool = False
    error: str | None = None
    offset: int = 0


@dataclass
class WorldOutcome:
    """Results of a local world run."""

    size: int
    backend: str | None
    results: dict[int, list[ProbeResult]]
    teardown_facts: dict[str, Any]  # world.stuck_*, world.dead_* ...: empty when every rank finished
    log_tails: dict[int, str]


def _read_events(path: Path, state: SupervisedRank) -> list[dict]:
    if not path.exists():
        return []
    with open(path, "rb") as handle:
        handle.seek(state.offset)
        data = handle.read()
    cut = data.rfind(b"\n") + 1
    state.offset += cut
    return [json.loads(line) for line in data[:cut].splitlines() if line.strip()]


def _apply(state: SupervisedRank, event: dict, on_event: Callable[[int, dict], None] | None) -> None:
    kind = event["event"]
    if kind == "hello":
        state.host = event.get("host", "")
    elif kind == "init-start":
        state.probe, state.phase = "init", "init_process_group"
    elif kind == "init-done":
        state.backend, state.device = event.get("backend"), event.get("device")
        state.probe, state.phase = None, None
    elif kind == "probe-start":
        state.probe, state.phase = event["probe"], "start"
    elif kind == "phase":
        state.phase = event["phase"]
    elif kind == "probe-end":
        state.results.append(ProbeResult.from_dict(event["result"]))
        state.finished.append(event["probe"])
        state.probe, state.phase = None, None
    elif kind == "done":
        state.done = True
    elif kind == "error":
        state.error = event["message"]
    if on_event:
        on_event(state.rank, event)


def classify_stuck(states: Mapping[int, SupervisedRank], phase_order: list[str]) -> tuple[list[int], list[int]]:
    """Split unfinished ranks into (did not arrive, waiting): the laggards are those in the earliest phase."""
    unfinished = {r: s for r, s in states.items() if not s.done}
    if not unfinished:
        return [], []
    position = {p: i for i, p in enumerate(phase_order)}
    key = {r: position.get(f"{s.probe}:{s.phase}", -1) for r, s in unfinished.items()}
    earliest = min(key.values())
    laggards = sorted(r for r, k in key.items() if k == earliest)
    waiting = sorted(r for r in unfinished if r not in laggards)
    if not waiting:  # everyone in the same place: a genuine collective hang, all are stuck
        return sorted(unfinished), []
    return laggards, waiting


def run_world(job: Job, nproc: int, *, on_event: Callable[[int, dict], None] | None = None,
              cancel: threading.Event | None = None) -> WorldOutcome:
    """Spawn ``nproc`` ranks running ``job`` and supervise them to the end: the one place a local world starts.

    ``job.node_probes`` run once, in rank 0 before it joins the world, judging the user's environment
    (``job.probe_env``): NODE probes that import torch cost nothing extra there. Setting ``cancel``
    tears the world down at once.
    """
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="troubleshoot-world-") as tmp:
        events_dir = Path(tmp)
        job.events_dir, job.local_world = str(events_dir), True
        path = job.write(events_dir / "job.json")
        states: dict[int, SupervisedRank] = {}
        logs: dict[int, Any] = {}
        try:
            for rank in range(nproc):
                rank_env = {**job.probe_env, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(nproc),
                            "LOCAL_WORLD_SIZE": str(nproc), "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                            "MASTER_PORT": str(port), LOCAL_WORLD_VAR: "1", "PYTHONUNBUFFERED": "1"}
                rank_env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))
                logs[rank] = open(events_dir / f"rank{rank}.log", "wb")
                proc = subprocess.Popen([sys.executable, "-m", "troubleshooter.run.rank_worker", str(path)],
                                        env=rank_env, stdin=subprocess.DEVNULL, stdout=logs[rank],
                                        stderr=subprocess.STDOUT, start_new_session=True)
                states[rank] = SupervisedRank(rank, proc)
            teardown_facts = supervise(states, events_dir, job.timeouts, job.init_timeout_s, on_event, cancel)
        finally:
            for state in states.values():
                kill_group(state.proc)
            for handle in logs.values():
                handle.close()
        tails = {}
        for rank in states:
            text = (events_dir / f"rank{rank}.log").read_text(errors="replace")
            tails[rank] = "\n".join(text.strip().splitlines()[-20:])
    backend_used = next((s.backend for s in states.values() if s.backend), None)
    return WorldOutcome(nproc, backend_used, {r: s.results for r, s in states.items()}, teardown_facts, tails)


def supervision_limit(timeouts: dict[str, float], init_timeout_s: float) -> float:
    """The longest a supervised world may run in all: init, every probe's timeout, and some slack."""
    return init_timeout_s + 5 + sum(timeouts.values()) + 30


def supervise(states: dict[int, SupervisedRank], events_dir: Path, timeouts: dict[str, float],
              init_timeout_s: float, on_event: Callable[[int, dict], None] | None,
              cancel: threading.Event | None = None) -> dict[str, Any]:
    """Follow every rank's events until all are done, a deadline passes, a rank dies or ``cancel`` is set.

    Used by the local world and, for one rank child, by distributed mode; returns the world facts of a teardown.
    """
    phase_order: list[str] = []
    entered: dict[str, float] = {}  # probe id -> time the first rank entered it
    started = time.monotonic()
    while True:
        for rank, state in states.items():
            for event in _read_events(events_dir / f"rank{rank}.jsonl", state):
                _apply(state, event, on_event)
                if state.probe and f"{state.probe}:{state.phase}" not in phase_order:
                    phase_order.append(f"{state.probe}:{state.phase}")
                if event["event"] == "probe-start":
                    entered.setdefault(event["probe"], time.monotonic())
                if event["event"] == "init-start":
                    entered.setdefault("init", time.monotonic())
        if all(s.done for s in states.values()):
            return {}
        if cancel is not None and cancel.is_set():
            return _teardown(states, phase_order, "cancelled", [])
        now = time.monotonic()
        dead = [s for s in states.values() if not s.done and s.proc.poll() is not None]
        if dead:
            return _teardown(states, phase_order, "died", dead)
        current = {s.probe for s in states.values() if s.probe and not s.done}
        for probe_id in current:
            limit = init_timeout_s + 5 if probe_id == "init" else timeouts.get(probe_id, 30.0)
            if now - entered.get(probe_id, now) > limit:
                return _teardown(states, phase_order, "timeout", [], probe_id, limit)
        if now - started > supervision_limit(timeouts, init_timeout_s):
            return _teardown(states, phase_order, "timeout", [], next(iter(current), "world"), now - started)
        time.sleep(POLL_S)


def _teardown(states: dict[int, SupervisedRank], phase_order: list[str], why: str, dead: list[SupervisedRank],
              probe_id: str | None = None, limit: float = 0.0) -> dict[str, Any]:
    """Kill every rank and describe what each was doing; returns world facts."""
    snapshot = {r: (s.probe, s.phase) for r, s in states.items()}
    for state in states.values():
        kill_group(state.proc)
    facts: dict[str, Any] = {}
    if why == "died":
        culprit = dead[0]
        probe_id = culprit.probe or (culprit.finished[-1] if culprit.finished else "init")
        laggards = [s.rank for s in dead]
        waiting = [r for r, s in states.items() if not s.done and r not in laggards]
        message = f"rank {culprit.rank} exited with code {culprit.proc.returncode}" + (
            f": {culprit.error}" if culprit.error else "")
        facts["world.dead_ranks"] = laggards
        facts["world.dead_exit_codes"] = {str(s.rank): s.proc.returncode for s in dead}
    elif why == "cancelled":
        laggards, waiting, message = [], [], "cancelled by the user"
    else:
        laggards, waiting = classify_stuck(states, phase_order)
        message = f"{probe_id} did not finish within {limit:.0f} s"
    if why == "cancelled":
        for rank, state in states.items():
            if snapshot[rank][0] and not state.done:
                state.results.append(ProbeResult(snapshot[rank][0], "skipped", rank=rank, host=state.host,
                                                 message="cancelled"))
        return {"world.teardown_reason": message}
    facts.update({
        "world.stuck_probe": probe_id or "", "world.stuck_ranks": laggards, "world.waiting_ranks": waiting,
        "world.stuck_phases": {str(r): f"{p}:{ph}" for r, (p, ph) in snapshot.items() if p},
        "world.teardown_reason": message,
    })
    for rank, state in states.items():
        probe, phase = snapshot[rank]
        if probe and probe != "init" and not state.done:
            status = "error" if why == "died" and rank not in laggards else "timeout"
            state.results.append(ProbeResult(probe, status, rank=rank, host=state.host,
                                             message=f"{message}; rank {rank} was in phase {phase!r}"))
    return facts
