"""Who this process is in a launched job: rank, local rank, world size and the master endpoint.

The launcher probe (``probes/launcher.py``, over ``rules/launchers.yaml``) reads every launcher's
variables; its facts are reused here. What torch's ``env://`` rendezvous needs but the launcher did not set (MPI and
SLURM set only their own variables) is derived: MASTER_ADDR from SLURM's node list, or the
loopback address when every rank is on this node; MASTER_PORT from the SLURM job id or 29500.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from troubleshooter.core.errors import UsageError
from troubleshooter.core.launchers import launcher_table
from troubleshooter.core.probe import ProbeContext, ProbeResult, run_probe
from troubleshooter.core.registry import Registry

DEFAULT_PORT = 29500
HOSTLIST_RE = re.compile(r"^([^\[,]*)(?:\[([^\]]*)\])?")


@dataclass
class Identity:
    """This rank's place in the job and the rendezvous endpoint it will use."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int
    launcher: str
    kind: str
    derived: list[str] = field(default_factory=list)  # torch variables filled in by the diagnosis

    def torch_env(self) -> dict[str, str]:
        """The env:// variables a rank child needs."""
        return {"RANK": str(self.rank), "WORLD_SIZE": str(self.world_size), "LOCAL_RANK": str(self.local_rank),
                "LOCAL_WORLD_SIZE": str(self.local_world_size), "MASTER_ADDR": self.master_addr,
                "MASTER_PORT": str(self.master_port)}


def first_host(nodelist: str) -> str | None:
    """The first host of a SLURM host list: ``gpu[07-09,12],cpu1`` -> ``gpu07``."""
    match = HOSTLIST_RE.match(nodelist.strip())
    if not match or not match.group(1) and not match.group(2):
        return None
    prefix, ranges = match.group(1), match.group(2)
    if ranges is None:
        return prefix or None
    return prefix + ranges.split(",")[0].split("-")[0]


def launcher_result(env: Mapping[str, str], registry: Registry) -> ProbeResult:
    """The launcher probe's reading of ``env`` (it only reads the environment, so it runs in-process)."""
    if "launcher" not in registry.probes:
        raise UsageError("distributed mode needs the 'launcher' probe to read the rank variables; "
                         "it is missing from the probe directories")
    return run_probe(registry.get("launcher")(), ProbeContext(env=env))


def launcher_facts(env: Mapping[str, str], registry: Registry) -> dict:
    """The launcher probe's facts for ``env``."""
    return launcher_result(env, registry).facts


def derive(env: Mapping[str, str], registry: Registry) -> Identity:
    """This process's identity; a UsageError says which variable is missing and how to set it."""
    facts = launcher_facts(env, registry)
    kind = facts.get("launcher.kind", "none")
    if "launcher.rank" not in facts or "launcher.world_size" not in facts:
        raise UsageError(f"cannot tell this process's rank and world size ({kind} launch): set RANK and WORLD_SIZE "
                         "or start it with torchrun, srun, mpirun or deepspeed")
    rank, world = facts["launcher.rank"], facts["launcher.world_size"]
    if "launcher.local_rank" not in facts:
        raise UsageError(f"{kind} launch of rank {rank}: no local-rank variable "
                         f"({', '.join(launcher_table().variables('local_rank'))}); export LOCAL_RANK")
    local_rank = facts["launcher.local_rank"]
    local_world = facts.get("launcher.local_world_size", local_rank + 1)
    derived = [name for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE") if name not in env]

    addr = env.get("MASTER_ADDR")
    if not addr:
        nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
        addr = first_host(nodelist) if nodelist else None
        if not addr and local_world == world:
            addr = "127.0.0.1"  # every rank runs on this node
        if not addr:
            raise UsageError(f"{kind} launch across several nodes without MASTER_ADDR: export MASTER_ADDR=<host of "
                             "rank 0> (mpirun: -x MASTER_ADDR=...) or run inside a SLURM allocation")
        derived.append("MASTER_ADDR")
    port_text = env.get("MASTER_PORT")
    if port_text is None:
        job = env.get("SLURM_JOB_ID", "")
        port = 20000 + int(job) % 10000 if job.isdigit() else DEFAULT_PORT  # jobs sharing a node differ
        derived.append("MASTER_PORT")
    elif port_text.strip().isdigit() and 0 < int(port_text) < 65535:
        port = int(port_text)
    else:
        raise UsageError(f"MASTER_PORT={port_text!r} is not a TCP port (1-65534)")
    return Identity(rank, world, local_rank, local_world, addr, port, launcher_table().launcher_name(kind), kind, derived)
