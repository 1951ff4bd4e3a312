"""Tools probe: which launchers and build tools are on PATH, their versions, and the hostfile.

Binaries are asked for their version in parallel threads with a short timeout; Python entry
points (torchrun, deepspeed) would import torch to answer, so their version comes from the
installed package's metadata instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from typing import Mapping

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import NODE, Probe, ProbeContext, ProbeResult

# tool -> (version command after the binary, or None: read the version of this Python package)
TOOLS: dict[str, tuple[list[str] | None, str | None]] = {
    "torchrun": (None, "torch"),
    "deepspeed": (None, "deepspeed"),
    "mpirun": (["--version"], None),
    "srun": (["--version"], None),
    "pdsh": (["-V"], None),
    "ninja": (["--version"], None),
    "nvidia-smi": (["--query-gpu=driver_version", "--format=csv,noheader"], None),
    "gcc": (["--version"], None),
    "cc": (["--version"], None),
}
VERSION_TIMEOUT_S = 0.8
DEEPSPEED_DEFAULT_HOSTFILE = "/job/hostfile"
HOSTFILE_LINE = re.compile(r"^(\S+)\s+slots=(\d+)")  # DeepSpeed/MPI style: "worker-0 slots=8"
VERSION_RE = re.compile(r"\d+(?:\.\d+)+[\w.+-]*")


def _version_of(path: str, args: list[str]) -> str | None:
    try:
        out = subprocess.run([path, *args], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or "") + (out.stderr or "")
    first = next((line for line in text.splitlines() if VERSION_RE.search(line)), "")
    found = VERSION_RE.findall(first)  # "gcc (Debian 12.2.0-14) 12.2.0": the last one is the version
    return found[-1] if found else None


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def read_hostfile(path: str) -> tuple[int, list[str]]:
    """(number of `host slots=N` entries, lines that are neither such an entry, blank nor a comment)."""
    hosts, bad = 0, []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if HOSTFILE_LINE.match(line):
                hosts += 1
            else:
                bad.append(line[:200])
    return hosts, bad



def tool_search_path(env: Mapping[str, str]) -> str:
    """PATH, then the running interpreter's own directory.

    A virtual environment's ``torchrun``/``deepspeed`` sit beside its ``python``; run as
    ``.venv/bin/troubleshoot`` without activating the venv, they are not on PATH but are exactly
    what the job would use. ``sys.executable`` is not resolved: a venv's python is a symlink.
    """
    beside = os.path.dirname(sys.executable)
    return os.pathsep.join(p for p in (env.get("PATH", os.defpath), beside) if p)

class ToolsProbe(Probe):
    """Finds torchrun, mpirun, srun, deepspeed, pdsh, ninja, nvidia-smi and a C compiler, and reads the hostfile."""

    id = "tools"
    title = "Launchers and build tools"
    scope = NODE
    timeout_s = 5.0
    order = 30
    produces = (
        FactSpec("tools.paths", "dict", "Tool -> its path on PATH, for the tools found"),
        FactSpec("tools.versions", "dict", "Tool -> version string, when it could be read"),
        FactSpec("tools.missing", "list", "Tools of interest that are not on PATH"),
        FactSpec("tools.deepspeed_installed", "bool", "The deepspeed Python package is installed (it JIT-builds ops "
                 "such as FusedAdam with ninja)"),
        FactSpec("tools.in_slurm_job", "bool", "The process runs inside a SLURM allocation (SLURM_JOB_ID set)"),
        FactSpec("tools.slurm_step", "bool", "The process is a task of a SLURM job step (started by srun)"),
        FactSpec("tools.requested_launcher", "str", "Launcher asked for (option 'launcher')"),
        FactSpec("tools.hostfile", "str", "Hostfile in play: option 'hostfile', else DeepSpeed's /job/hostfile"),
        FactSpec("tools.hostfile_source", "str", "option (asked for explicitly) or default (DeepSpeed's /job/hostfile)"),
        FactSpec("tools.hostfile_exists", "bool", "The hostfile exists and is a file"),
        FactSpec("tools.hostfile_hosts", "int", "Entries 'host slots=N' in the hostfile"),
        FactSpec("tools.hostfile_bad_lines", "list", "Hostfile lines that are not 'host slots=N' (DeepSpeed rejects them)"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Look tools up on ctx.env's PATH (and beside the interpreter) and read versions in parallel."""
        env = ctx.env
        search_path = tool_search_path(env)
        paths = {name: shutil.which(name, path=search_path) for name in TOOLS}
        found = {name: p for name, p in paths.items() if p}
        versions: dict[str, str] = {}
        with ThreadPoolExecutor(max_workers=len(TOOLS)) as pool:
            futures = {}
            for name, (args, package) in TOOLS.items():
                if package is not None:
                    version = _package_version(package)
                    if version and name in found:
                        versions[name] = version
                elif name in found:
                    futures[name] = pool.submit(_version_of, found[name], args)
            for name, future in futures.items():
                version = future.result()
                if version:
                    versions[name] = version
        facts: dict = {
            "tools.paths": found, "tools.versions": versions, "tools.missing": [n for n in TOOLS if n not in found],
            "tools.deepspeed_installed": importlib.util.find_spec("deepspeed") is not None,
            "tools.in_slurm_job": "SLURM_JOB_ID" in env or "SLURM_JOBID" in env,
            "tools.slurm_step": "SLURM_STEP_ID" in env or "SLURM_STEPID" in env,
            "tools.requested_launcher": ctx.options.get("launcher"),
        }
        hostfile, source = ctx.options.get("hostfile"), "option"
        if not hostfile:
            hostfile, source = DEEPSPEED_DEFAULT_HOSTFILE, "default"
        facts["tools.hostfile"] = str(hostfile)
        facts["tools.hostfile_source"] = source
        facts["tools.hostfile_exists"] = os.path.isfile(hostfile)
        if facts["tools.hostfile_exists"]:
            try:
                hosts, bad = read_hostfile(hostfile)
                facts["tools.hostfile_hosts"] = hosts
                facts["tools.hostfile_bad_lines"] = bad
            except OSError:
                pass
        table = [[name, found.get(name, "not found"), versions.get(name, "")] for name in TOOLS]
        message = f"found {', '.join(found) or 'none'}; not found: {', '.join(facts['tools.missing']) or 'none'}"
        return self.result(facts, message, table=table, table_header=["tool", "path", "version"])
