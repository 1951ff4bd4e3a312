"""Helpers for the live-job tests: free ports, jobs started in their own process group, leftover checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from troubleshooter.run.local_world import free_port

JOBS = Path(__file__).parent / "jobs"


def torchrun(script: str, nproc: int) -> list[str]:
    """A torchrun command line (python -m torch.distributed.run, no shim) for a job script of tests/live/jobs."""
    return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc),
            "--master_addr", "127.0.0.1", "--master_port", str(free_port()), str(JOBS / script)]


def troubleshoot(*args: str, timeout: float = 90, **kw) -> subprocess.CompletedProcess:
    """Run the CLI in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "troubleshooter", *args], capture_output=True, timeout=timeout, **kw)


def job_processes() -> list[psutil.Process]:
    """Every live process running one of this directory's job scripts."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            if str(JOBS) in cmd and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


class Jobs:
    """Starts jobs in their own session and kills their process groups at the end of a test."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def start(self, cmd: list[str], **kw) -> subprocess.Popen:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, **kw)
        self.procs.append(proc)
        return proc

    def wait_for_lines(self, proc: subprocess.Popen, needle: bytes, count: int, timeout: float = 180) -> list[bytes]:
        """Read the job's output until ``needle`` was seen ``count`` times (fails the test on timeout or exit)."""
        lines: list[bytes] = []
        deadline = time.monotonic() + timeout
        os.set_blocking(proc.stdout.fileno(), False)
        buf = b""
        while sum(line.count(needle) for line in lines) < count:
            exited = proc.poll() is not None  # read what it printed before judging that it ended
            chunk = proc.stdout.read() or b""
            buf += chunk
            *done, buf = buf.split(b"\n")
            lines += done
            if sum(line.count(needle) for line in lines) >= count:  # ranks' writes can share a line
                break
            if time.monotonic() > deadline or exited:
                tail = b"\n".join(lines)[-2000:]
                pytest.fail(f"job {'exited' if exited else 'still running'} without printing {needle!r} x{count}: {tail!r}")
            time.sleep(0.1)
        return lines

    def wait_until_blocked(self, proc: subprocess.Popen, ranks: int, timeout: float = 60, quiet_s: float = 1.0) -> None:
        """Wait until ``ranks`` rank processes of the job sit blocked (their CPU time stops growing for ``quiet_s``).

        A rank that printed "ready" may not have entered its collective yet, least of all on a loaded machine.
        """
        deadline, last, quiet_since = time.monotonic() + timeout, None, None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail("the job exited while the test waited for its ranks to block")
            try:
                children = [c for c in psutil.Process(proc.pid).children(recursive=True) if str(JOBS) in
                            " ".join(c.cmdline())]
                cpu = sum(sum(c.cpu_times()[:2]) for c in children)
            except psutil.Error:
                children, cpu = [], None
            now = time.monotonic()
            if len(children) >= ranks and cpu is not None and last is not None and cpu - last < 0.01 * ranks:
                quiet_since = quiet_since or now
                if now - quiet_since >= quiet_s:
                    return
            else:
                quiet_since = None
            last = cpu
            time.sleep(0.25)
        pytest.fail(f"the job's {ranks} ranks did not block within {timeout:.0f} s")

    def cleanup(self) -> None:
        for proc in self.procs:
            try:  # torchrun starts each rank in a session of its own: kill the tree, then the group
                for child in psutil.Process(proc.pid).children(recursive=True):
                    child.kill()
            except psutil.Error:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def _kill_leftovers() -> list[str]:
    left = job_processes()
    names = [f"{p.pid}: {' '.join(p.cmdline())[:120]}" for p in left if p.is_running()]
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return names


@pytest.fixture
def jobs():
    """Jobs started by the test; afterwards their groups are killed and no job process may remain."""
    manager = Jobs()
    yield manager
    manager.cleanup()
    time.sleep(0.5)
    assert not _kill_leftovers(), "job processes were left behind"


@pytest.fixture
def no_leftovers():
    """For tests where `troubleshoot run` owns the job: it must leave no job process behind."""
    yield
    deadline = time.monotonic() + 5
    while job_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _kill_leftovers()
    assert not left, f"troubleshoot run left processes behind: {left}"
