"""Run NODE-scoped probes isolated: each in its own process group, bounded by a timeout, always reaped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from troubleshooter.core.probe import Probe, ProbeResult
from troubleshooter.run.job import Job


def kill_group(proc: subprocess.Popen, grace_s: float = 1.0) -> None:
    """Terminate a child started with ``start_new_session=True`` and everything it spawned."""
    if proc.poll() is None:
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
    else:  # the leader exited; its children may live on in the group
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def run_isolated(probe: type[Probe], env: Mapping[str, str], options: Mapping[str, Any],
                 facts: Mapping[str, Any], probe_dirs: Iterable[str] = (), timeout_s: float | None = None,
                 cancel: threading.Event | None = None) -> ProbeResult:
    """Run one probe in a fresh interpreter; a hang becomes status ``timeout``, a crash status ``error``.

    Setting ``cancel`` kills the probe's process group at once (status ``skipped``, "cancelled").
    """
    timeout = float(timeout_s or probe.timeout_s)
    with tempfile.TemporaryDirectory(prefix="troubleshoot-probe-") as tmp:
        out = Path(tmp) / "result.json"
        job = Job(list(probe_dirs), dict(options), dict(facts), {probe.id: timeout}, dict(env),
                  node_probes=[probe.id], result_path=str(out)).write(Path(tmp) / "job.json")
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "troubleshooter.run.node_worker", str(job)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    _, stderr = proc.communicate(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if cancel is not None and cancel.is_set():
                    kill_group(proc)
                    return ProbeResult(probe.id, "skipped", message="cancelled",
                                       duration_s=time.perf_counter() - started)
                if time.monotonic() > deadline:
                    kill_group(proc)
                    return ProbeResult(probe.id, "timeout", message=f"did not finish within {timeout:g} s",
                                       duration_s=time.perf_counter() - started)
        finally:
            kill_group(proc)
        if out.exists():
            return ProbeResult.from_dict(json.loads(out.read_text()))
        tail = (stderr or b"").decode(errors="replace").strip().splitlines()[-3:]
        return ProbeResult(probe.id, "error", duration_s=time.perf_counter() - started,
                           message=f"probe did not complete (exit code {proc.returncode}): {' | '.join(tail)}")


def run_node_probes(probes: list[type[Probe]], env: Mapping[str, str], options: Mapping[str, Any],
                    facts: Mapping[str, Any], probe_dirs: Iterable[str] = (),
                    timeouts: Mapping[str, float] | None = None,
                    on_done: Callable[[ProbeResult], None] | None = None, workers: int = 4,
                    cancel: threading.Event | None = None) -> list[ProbeResult]:
    """Run NODE probes concurrently, each isolated (``timeouts``: probe id -> seconds); results in the order given."""
    probe_dirs = list(probe_dirs)

    def one(probe: type[Probe]) -> ProbeResult:
        result = run_isolated(probe, env, options, facts, probe_dirs, (timeouts or {}).get(probe.id), cancel)
        if on_done:
            on_done(result)
        return result

    if not probes:
        return []
    with ThreadPoolExecutor(max_workers=min(workers, len(probes))) as pool:
        return list(pool.map(one, probes))
