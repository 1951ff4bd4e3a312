"""Dump the Python stacks of running processes with py-spy (in parallel, each with a timeout).

py-spy reads another process's memory, which needs ptrace permission: the same user and
``kernel.yama.ptrace_scope`` <= 1, or root, and in containers the SYS_PTRACE capability.
Failures become a clear message with the remedy, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from troubleshooter.core.errors import TroubleshooterError

PTRACE_REMEDY = (
    "py-spy needs permission to read the training processes (ptrace). Run `troubleshoot attach` as the "
    "same user as the job (or with sudo); if /proc/sys/kernel/yama/ptrace_scope is 2 or 3, lower it "
    "(`sudo sysctl kernel.yama.ptrace_scope=1`) or use sudo; in Docker start the container with "
    "`--cap-add SYS_PTRACE` (Kubernetes: securityContext.capabilities.add: [SYS_PTRACE]).")
MISSING_REMEDY = "py-spy is not installed: `pip install py-spy` (or `pip install 'ddp-troubleshooter[live]'`)."


class PySpyMissing(TroubleshooterError):
    """py-spy is not on PATH nor next to this Python (exit 2: the user installs a tool, nothing is broken)."""

    exit_code = 2

    def __init__(self) -> None:
        super().__init__(MISSING_REMEDY, "Cannot read the ranks' stacks")


class PtraceDenied(TroubleshooterError):
    """The OS refused py-spy access to the process."""

    def __init__(self, pid: int, message: str) -> None:
        super().__init__(f"PID {pid}: {message.strip()}\n{PTRACE_REMEDY}", "Not permitted to read the ranks' stacks")


@dataclass(frozen=True)
class Frame:
    """One Python (or native) frame, innermost first in a stack."""

    function: str
    file: str
    line: int

    @property
    def short(self) -> str:
        """``file.py:LINE`` for display."""
        return f"{os.path.basename(self.file)}:{self.line}"


@dataclass
class ThreadStack:
    """One thread's frames (innermost first) and whether py-spy saw it running."""

    name: str
    tid: int
    active: bool
    frames: list[Frame]


@dataclass
class StackDump:
    """The result of dumping one process: its threads, or why it could not be read."""

    pid: int
    threads: list[ThreadStack] = field(default_factory=list)
    error: str | None = None
    gone: bool = False

    @property
    def main(self) -> ThreadStack | None:
        """The main thread (the one named MainThread, else the thread whose id is the PID, else the first)."""
        for thread in self.threads:
            if thread.name == "MainThread":
                return thread
        for thread in self.threads:
            if thread.tid == self.pid:
                return thread
        return self.threads[0] if self.threads else None


def pyspy_path() -> str | None:
    """The py-spy executable: next to this Python first (same virtualenv), then on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("py-spy")


def _parse(pid: int, text: str) -> StackDump:
    threads = []
    for item in json.loads(text):
        frames = [Frame(str(f.get("name", "?")), str(f.get("filename", "?")), int(f.get("line") or 0))
                  for f in item.get("frames") or []]
        threads.append(ThreadStack(str(item.get("thread_name") or ""), int(item.get("os_thread_id") or 0),
                                   bool(item.get("active")), frames))
    return StackDump(pid, threads)


def _denied(text: str) -> bool:
    low = text.lower()
    return "permission denied" in low or "operation not permitted" in low or "sys_ptrace" in low


def dump_stack(pid: int, native: bool = False, timeout_s: float = 10.0, pyspy: str | None = None) -> StackDump:
    """Dump one process; raises PtraceDenied when not permitted, otherwise errors land in ``error``."""
    exe = pyspy or pyspy_path()
    if not exe:
        raise PySpyMissing()
    cmd = [exe, "dump", "--pid", str(pid), "--json", *(["--native"] if native else [])]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return StackDump(pid, error=f"py-spy did not answer within {timeout_s:g}s")
    if proc.returncode == 0:
        try:
            return _parse(pid, proc.stdout)
        except (ValueError, TypeError, AttributeError) as exc:
            return StackDump(pid, error=f"unreadable py-spy output: {exc}")
    message = (proc.stderr or proc.stdout).strip().splitlines()
    first = message[0] if message else f"py-spy exited with {proc.returncode}"
    if _denied(proc.stderr + proc.stdout):
        raise PtraceDenied(pid, first)
    gone = "no such process" in first.lower() or not os.path.exists(f"/proc/{pid}")
    return StackDump(pid, error=first, gone=gone)


def dump_all(pids: list[int], native: bool = False, timeout_s: float = 10.0) -> dict[int, StackDump]:
    """Dump every process in parallel (bounded threads, each dump bounded by ``timeout_s``)."""
    exe = pyspy_path()
    if not exe:
        raise PySpyMissing()
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(pids)))) as pool:
        futures = {pid: pool.submit(dump_stack, pid, native, timeout_s, exe) for pid in pids}
        return {pid: future.result() for pid, future in futures.items()}
