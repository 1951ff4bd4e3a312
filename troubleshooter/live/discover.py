"""Find a running job's processes on this node: the launcher and its rank processes.

A rank is a Python process whose environment carries a rank variable (``RANK``,
``OMPI_COMM_WORLD_RANK``, ``SLURM_PROCID``... from the launcher table ``rules/launchers.yaml``) and that is
not itself a launcher. Processes below a rank (DataLoader workers, compile workers) inherit
its environment and are not ranks. The launcher is the nearest ancestor whose command line
matches a launcher pattern.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

import psutil

from troubleshooter.core.errors import UsageError
from troubleshooter.live.rules import LiveRules


@dataclass
class RankProcess:
    """One rank of the job, as seen from outside."""

    pid: int
    rank: int | None
    local_rank: int | None = None
    world_size: int | None = None
    host: str = ""
    cmdline: str = ""
    status: str = ""
    env: dict[str, str] = field(default_factory=dict, repr=False)


@dataclass
class Job:
    """A launcher (may be absent) and its ranks on this node, sorted by rank."""

    launcher_pid: int | None
    launcher: str
    ranks: list[RankProcess]

    @property
    def world_size(self) -> int | None:
        """WORLD_SIZE as the ranks see it (None when unknown)."""
        sizes = [r.world_size for r in self.ranks if r.world_size]
        return max(sizes) if sizes else None

    def missing_ranks(self) -> list[int]:
        """Ranks of the world not found on this node (only meaningful for a single-node job)."""
        size = self.world_size
        if not size:
            return []
        present = {r.rank for r in self.ranks}
        return [r for r in range(size) if r not in present]


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _first(env: dict[str, str], names: list[str]) -> int | None:
    for name in names:
        if name in env:
            return _int(env[name])
    return None


def _is_python(proc: psutil.Process) -> bool:
    try:
        exe = os.path.basename(proc.exe() or "")
    except (psutil.Error, OSError):
        exe = ""
    try:
        name = proc.name()
    except psutil.Error:
        name = ""
    return exe.startswith("python") or name.startswith("python")


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def launcher_of(argv: list[str], rules: LiveRules) -> str | None:
    """The launcher id whose pattern matches the start of ``argv``, or None."""
    head = " ".join(argv[:3])
    for launcher in rules.launchers:
        if launcher.match.search(head):
            return launcher.id
    return None


def _identity(proc: psutil.Process, rules: LiveRules, host: str) -> RankProcess | None:
    try:
        env = proc.environ()
    except psutil.AccessDenied:
        return None
    except psutil.Error:
        return None
    rank = _first(env, rules.rank_env.get("rank", []))
    if rank is None:
        return None
    try:
        status = proc.status()
    except psutil.Error:
        status = "gone"
    return RankProcess(proc.pid, rank, _first(env, rules.rank_env.get("local_rank", [])),
                       _first(env, rules.rank_env.get("world_size", [])), host, " ".join(_cmdline(proc)), status, env)


def _subtree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


def _ancestors(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.parents()
    except psutil.Error:
        return []


def _ranks_in(procs: list[psutil.Process], rules: LiveRules) -> list[RankProcess]:
    """Rank processes among ``procs``: Python, with a rank variable, not a launcher, not below another rank."""
    host = socket.gethostname()
    found: dict[int, RankProcess] = {}
    for proc in procs:
        if proc.pid == os.getpid() or not _is_python(proc) or launcher_of(_cmdline(proc), rules):
            continue
        ident = _identity(proc, rules, host)
        if ident is not None:
            found[proc.pid] = ident
    ranks = []
    for pid, ident in found.items():
        try:
            above = {p.pid for p in _ancestors(psutil.Process(pid))}
        except psutil.Error:
            continue
        if not above & set(found):
            ranks.append(ident)
    return sorted(ranks, key=lambda r: (r.rank if r.rank is not None else 1 << 30, r.pid))


def _launcher_above(proc: psutil.Process, rules: LiveRules) -> tuple[int | None, str]:
    for parent in _ancestors(proc):
        launcher = launcher_of(_cmdline(parent), rules)
        if launcher:
            return parent.pid, launcher
    return None, "none"


def _python_children(root: psutil.Process) -> list[RankProcess]:
    """Fallback for jobs that set no rank variables (mp.spawn): the top Python processes below ``root``."""
    host = socket.gethostname()
    procs = [p for p in _subtree(root)[1:] if _is_python(p)]
    pids = {p.pid for p in procs}
    top = [p for p in procs if not {a.pid for a in _ancestors(p)} & pids]
    return [RankProcess(p.pid, i, i, len(top), host, " ".join(_cmdline(p)), "") for i, p in enumerate(top)]


def find_job(rules: LiveRules, pid: int | None = None) -> Job:
    """The job to inspect: around ``pid`` (a launcher or a rank), or the only job on this node."""
    if pid is not None:
        try:
            proc = psutil.Process(pid)
        except psutil.NoSuchProcess:
            raise UsageError(f"no process with PID {pid} on this node") from None
        except psutil.Error as exc:
            raise UsageError(f"cannot inspect PID {pid}: {exc}") from None
        launcher_pid, launcher = (pid, launcher_of(_cmdline(proc), rules)) if launcher_of(_cmdline(proc), rules) \
            else _launcher_above(proc, rules)
        root = psutil.Process(launcher_pid) if launcher_pid else proc
        ranks = _ranks_in(_subtree(root), rules) or _python_children(root)
        if not ranks and _is_python(proc):
            ranks = [RankProcess(pid, 0, 0, 1, socket.gethostname(), " ".join(_cmdline(proc)), proc.status())]
        if not ranks:
            raise UsageError(f"PID {pid} ({' '.join(_cmdline(proc))[:80]}) has no Python rank processes")
        return Job(launcher_pid, launcher, ranks)
    jobs: dict[int | None, list[RankProcess]] = {}
    launchers: dict[int | None, str] = {}
    for ident in _ranks_in(list(psutil.process_iter()), rules):
        try:
            key, name = _launcher_above(psutil.Process(ident.pid), rules)
        except psutil.Error:
            continue
        key = key if key is not None else -ident.pid
        jobs.setdefault(key, []).append(ident)
        launchers[key] = name
    if not jobs:
        raise UsageError("no distributed training job found on this node (no Python process with RANK, "
                         "OMPI_COMM_WORLD_RANK, SLURM_PROCID... in its environment); pass the launcher's PID")
    if len(jobs) > 1:
        listing = "; ".join(f"PID {k if k > 0 else -k} ({launchers[k]}, ranks {[r.rank for r in v]})"
                            for k, v in jobs.items())
        raise UsageError(f"several jobs run on this node: {listing}. Pass the PID of the one to inspect")
    key, ranks = next(iter(jobs.items()))
    return Job(key if key and key > 0 else None, launchers[key], ranks)
