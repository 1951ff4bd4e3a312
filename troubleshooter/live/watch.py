"""Watch a launch command (``troubleshoot run -- LAUNCH...``): stream its output, notice when it ends, fails or stalls.

The job's stdout and stderr pass through to ours byte for byte and are copied to a log file a
whole line at a time (the two streams interleave by lines, never inside one); each complete line
is fed to the log analyzer as it arrives. A stall is --stall seconds with no
output and no CPU progress in the job's process tree; then the job's ranks are attached to
(stacks, flight recorder) and the job is stopped. Ctrl-C (SIGINT) and SIGTERM (timeout, Slurm,
kill) are forwarded to the job's process group and still yield a report. The job runs in its own session; launchers such as
torchrun start each rank in a session of its own too, so the watcher remembers every descendant
it has seen and stops the job as a whole (SIGINT to the group, then SIGTERM, then SIGKILL to the
group and every remembered process): no process is left behind.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import psutil

from troubleshooter.core.errors import UsageError

POLL_S = 0.5
CPU_PROGRESS_S = 0.02      # CPU seconds per poll that count as progress (idle waits use far less)
GRACE_S = (10.0, 5.0)      # after SIGINT, after SIGTERM
READ_CHUNK = 65536
FORWARDED = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C; timeout, Slurm's scancel / time limit, kill


@dataclass
class Outcome:
    """How the watched job ended."""

    exit_code: int | None = None
    stalled: bool = False
    interrupted: bool = False
    duration_s: float = 0.0
    stopped_by_us: bool = False
    attach_facts: dict[str, Any] = field(default_factory=dict)
    attach_extra: dict[str, Any] = field(default_factory=dict)
    attach_error: str | None = None


class _Tee:
    """Copies one pipe of the job to a terminal stream and the log, and feeds lines to the analyzer."""

    def __init__(self, source: BinaryIO, sink: BinaryIO, log: BinaryIO, lock: threading.Lock, on_line, on_output):
        self.source, self.sink, self.log, self.lock = source, sink, log, lock
        self.on_line, self.on_output = on_line, on_output
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.partial = b""

    def _pump(self) -> None:
        fd = self.source.fileno()
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                break
            if not chunk:
                break
            self.on_output()
            try:
                self.sink.write(chunk)
                self.sink.flush()
            except (OSError, ValueError):  # our terminal went away: keep logging
                pass
            lines = (self.partial + chunk).split(b"\n")
            self.partial = lines.pop()
            if len(self.partial) > READ_CHUNK:  # a stream that never ends its line (a \r progress bar) still logs
                lines.append(self.partial)
                self.partial = b""
            if lines:  # whole lines only: a line cut between two reads is never split by the other stream's
                with self.lock:
                    self.log.write(b"\n".join(lines) + b"\n")
                    self.log.flush()
            for line in lines:
                self.on_line(line)
        if self.partial:
            with self.lock:
                self.log.write(self.partial)
                self.log.flush()
            self.on_line(self.partial)


def _tree_cpu(pid: int, seen: dict[int, psutil.Process]) -> float | None:
    """User + system CPU seconds of ``pid`` and its descendants (None once it is gone); records them in ``seen``."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    for proc in procs:
        seen.setdefault(proc.pid, proc)
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            continue
    return total


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _group_alive(pgid: int) -> bool:
    """True while a process of the group (other than a zombie) exists."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                return True
        except (psutil.Error, ProcessLookupError, OSError):
            continue
    return False


def stop_job(proc: subprocess.Popen, seen: dict[int, psutil.Process], first: int | None = signal.SIGINT) -> None:
    """Stop the whole job: ``first`` to the launcher's group (None: already sent), then SIGTERM, then SIGKILL
    to the group and every process of the job seen so far, each after a grace period."""
    pgid = proc.pid

    def done() -> bool:
        _tree_cpu(proc.pid, seen)
        return proc.poll() is not None and not _group_alive(pgid) and not any(_alive(p) for p in seen.values())

    for sig, grace, tree in ((first, GRACE_S[0], False), (signal.SIGTERM, GRACE_S[1], True),
                             (signal.SIGKILL, 2.0, True)):
        if done():
            return
        if sig is not None:
            _signal_group(pgid, sig)
        if tree:
            for child in seen.values():
                if child.pid != os.getpid() and _alive(child):
                    try:
                        child.send_signal(sig)
                    except psutil.Error:
                        pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.1)


class Watcher:
    """Runs the launch command, streams its output, watches for a stall, handles Ctrl-C."""

    def __init__(self, launch: list[str], env: dict[str, str], log_path: Path, stall_s: float, analyzer: Any,
                 on_stall):
        self.launch, self.env, self.log_path, self.stall_s = launch, env, log_path, stall_s
        self.analyzer, self.on_stall = analyzer, on_stall
        self.last_output = time.monotonic()
        self.lock = threading.Lock()
        self.interrupted = False
        self.seen: dict[int, psutil.Process] = {}

    def _feed(self, raw: bytes) -> None:
        if self.analyzer is None:
            return
        line = raw.decode("utf-8", "replace")
        with self.lock:
            self.analyzer.feed(line, str(self.log_path))

    def _touch(self) -> None:
        self.last_output = time.monotonic()

    def run(self) -> Outcome:
        """Run to completion (or stall / Ctrl-C); always leaves the job's process group stopped."""
        outcome = Outcome()
        start = time.monotonic()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            try:
                proc = subprocess.Popen(self.launch, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
                                        start_new_session=True)
            except FileNotFoundError:
                raise UsageError(f"command not found: {self.launch[0]}") from None
            except PermissionError:
                raise UsageError(f"not executable: {self.launch[0]}") from None
            pgid = proc.pid
            log_lock = threading.Lock()  # one lock: stdout and stderr lines never interleave inside the log
            tees = [_Tee(proc.stdout, sys.stdout.buffer, log, log_lock, self._feed, self._touch),
                    _Tee(proc.stderr, sys.stderr.buffer, log, log_lock, self._feed, self._touch)]
            for tee in tees:
                tee.thread.start()

            def forward(sig, _frame):
                self.interrupted = True
                _signal_group(pgid, sig)

            in_main = threading.current_thread() is threading.main_thread()
            previous = {sig: signal.signal(sig, forward) for sig in FORWARDED} if in_main else {}
            try:
                self._watch(proc, outcome)
            finally:
                try:  # still forwarding: a second Ctrl-C or SIGTERM while stopping must not kill us before the report
                    stop_job(proc, self.seen, None if self.interrupted else signal.SIGTERM)
                    proc.wait()
                finally:
                    for sig, handler in previous.items():
                        signal.signal(sig, handler)
                for tee in tees:
                    tee.thread.join(timeout=5.0)
            outcome.exit_code = proc.returncode
        outcome.interrupted = self.interrupted
        outcome.duration_s = time.monotonic() - start
        return outcome

    def _watch(self, proc: subprocess.Popen, outcome: Outcome) -> None:
        last_cpu = _tree_cpu(proc.pid, self.seen) or 0.0
        last_progress = time.monotonic()
        while proc.poll() is None:
            time.sleep(POLL_S)
            cpu = _tree_cpu(proc.pid, self.seen)
            now = time.monotonic()
            if cpu is not None and abs(cpu - last_cpu) >= CPU_PROGRESS_S:
                last_progress = now
            last_cpu = cpu if cpu is not None else last_cpu
            if self.interrupted:
                return
            if now - max(last_progress, self.last_output) >= self.stall_s:
                outcome.stalled = True
                self.on_stall(proc.pid, outcome)
                outcome.stopped_by_us = True
                stop_job(proc, self.seen, signal.SIGTERM)
                return


_RANK_PREFIX = re.compile(r"^\[rank(\d+)\]:\s?(.*)$")


def rank_traceback(log_path: Path, rank: int, limit: int = 60) -> str | None:
    """The last Python traceback printed with torchrun's ``[rankN]:`` prefix by ``rank``."""
    block: list[str] = []
    last: list[str] = []
    try:
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                match = _RANK_PREFIX.match(line.rstrip("\n"))
                if not match or int(match[1]) != rank:
                    continue
                text = match[2]
                if text.startswith("Traceback (most recent call last)"):
                    block = [text]
                elif block:
                    block.append(text)
                    if not text.startswith((" ", "\t")) and not text.startswith("Traceback"):
                        last, block = block, []
    except OSError:
        return None
    return "\n".join(last[-limit:]) if last else None


def root_failure(log_facts: dict[str, Any], log_path: Path) -> dict[str, Any] | None:
    """The launcher's root-cause failure record, with that rank's full traceback from the log."""
    failures = [f for f in log_facts.get("log.failures") or [] if isinstance(f, dict)]
    root = next((f for f in failures if f.get("root")), None)
    if root is None:
        return None
    info = {k: root.get(k) for k in ("rank", "local_rank", "host", "exit_code", "signal", "pid") if root.get(k) is not None}
    rank = root.get("rank")
    trace = rank_traceback(log_path, int(rank)) if rank is not None else None
    info["traceback"] = trace or root.get("traceback")
    return info


def make_analyzer(rules: Any) -> Any:
    try:
        from troubleshooter.logs import LogAnalyzer
    except ImportError:
        return None
    return LogAnalyzer(rules)
