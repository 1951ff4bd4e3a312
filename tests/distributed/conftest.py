"""Helpers for distributed-mode tests: a clean launcher-free environment, free ports, bounded subprocesses."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from troubleshooter.core.launchers import launcher_table
from troubleshooter.run import local_world

HERE = Path(__file__).resolve().parent
# Not launcher variables, but they change how a test world talks (the launcher's come from rules/launchers.yaml).
NETWORK_PREFIXES = ("NCCL_", "GLOO_")
# Fast probe selection for world tests: the launcher (rank), system/network (node), the collective (world).
QUICK = ["--probe", "launcher", "--probe", "system", "--probe", "network", "--probe", "collective"]


def clean_env(**extra: str) -> dict[str, str]:
    """os.environ without any launcher variable, plus ``extra``."""
    launch_vars = launcher_table().all_variables()
    env = {k: v for k, v in os.environ.items() if k not in launch_vars and not k.startswith(NETWORK_PREFIXES)}
    env.update({"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}, **extra)
    return env


def free_port() -> int:
    """A port P such that P and P+1 were free a moment ago (a master port whose neighbour another store takes).

    Drawn like ``troubleshooter.run.local_world.free_port`` (a single port), below the ephemeral range.
    """
    for _ in range(50):
        port = local_world.free_port()
        with socket.socket() as s:
            try:
                s.bind(("", port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port pair")


def run(cmd: list[str], timeout: float, **kw) -> subprocess.CompletedProcess:
    """Run ``cmd`` in its own session; kill the whole group when it outlives ``timeout`` (then fail)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            stdin=subprocess.DEVNULL, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not finish within {timeout} s\n{err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def load(path: Path) -> dict:
    """A JSON report, with a readable failure when it is missing."""
    assert path.exists(), f"{path} was not written"
    return json.loads(path.read_text())


def finding_ids(doc: dict) -> set[str]:
    """The finding ids of a report."""
    return {f["id"] for f in doc["findings"]}


def torchrun() -> list[str]:
    """The torchrun command of this interpreter."""
    beside = Path(sys.executable).with_name("torchrun")  # a torchrun on PATH may belong to another Python
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "torch.distributed.run"]
