"""Launcher probe: which launcher started this process and the rank identity it handed over.

Reads the environment only (``ctx.env``). Every launcher family publishes its own variables;
torch's ``env://`` rendezvous needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT. The probe
reports both views as raw facts so the rules in ``rules/checks/`` can compare them.
"""

from __future__ import annotations

import re
from typing import Mapping

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import RANK, Probe, ProbeContext, ProbeResult

TORCH_ENV_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")

# kind -> (marker variables, variables that launcher always sets)
# DeepSpeed's launch.py sets CROSS_RANK/CROSS_SIZE/LOCAL_SIZE (not LOCAL_WORLD_SIZE);
# torchrun sets GROUP_RANK/ROLE_RANK and TORCHELASTIC_*; Hydra (MPICH, Intel MPI) sets PMI_*.
FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "local": (("TROUBLESHOOTER_LOCAL_WORLD",),
              ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")),
    "deepspeed": (("CROSS_RANK", "CROSS_SIZE"),
                  ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_SIZE", "CROSS_RANK", "CROSS_SIZE",
                   "MASTER_ADDR", "MASTER_PORT")),
    "torchrun": (("TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
                  "GROUP_RANK", "ROLE_RANK"),
                 ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                  "MASTER_ADDR", "MASTER_PORT")),
    "openmpi": (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                 "OMPI_COMM_WORLD_LOCAL_SIZE")),
    "mvapich2": (("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"),
                 ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
                  "MV2_COMM_WORLD_LOCAL_SIZE")),
    "mpich": (("PMI_RANK", "PMI_SIZE"), ("PMI_RANK", "PMI_SIZE")),
    # srun sets SLURM_STEP_ID for each task; a bare sbatch/salloc shell has only the job's variables.
    "slurm": (("SLURM_STEP_ID", "SLURM_STEPID"), ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID")),
    "manual": (("RANK", "WORLD_SIZE", "LOCAL_RANK"), ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")),
}
PRIORITY = ("local", "deepspeed", "torchrun", "openmpi", "mvapich2", "mpich", "slurm", "manual")

# The launcher's own rank variables: field -> candidate names (first present wins).
NATIVE: dict[str, dict[str, tuple[str, ...]]] = {
    "openmpi": {"rank": ("OMPI_COMM_WORLD_RANK",), "world_size": ("OMPI_COMM_WORLD_SIZE",),
                "local_rank": ("OMPI_COMM_WORLD_LOCAL_RANK",), "local_world_size": ("OMPI_COMM_WORLD_LOCAL_SIZE",),
                "node_rank": ("OMPI_COMM_WORLD_NODE_RANK",)},
    "mvapich2": {"rank": ("MV2_COMM_WORLD_RANK",), "world_size": ("MV2_COMM_WORLD_SIZE",),
                 "local_rank": ("MV2_COMM_WORLD_LOCAL_RANK",), "local_world_size": ("MV2_COMM_WORLD_LOCAL_SIZE",)},
    "mpich": {"rank": ("PMI_RANK",), "world_size": ("PMI_SIZE",),
              "local_rank": ("MPI_LOCALRANKID",), "local_world_size": ("MPI_LOCALNRANKS",)},
    "slurm": {"rank": ("SLURM_PROCID",), "world_size": ("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"),
              "local_rank": ("SLURM_LOCALID",), "node_rank": ("SLURM_NODEID",),
              "num_nodes": ("SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES")},
}
TORCH_FIELDS: dict[str, tuple[str, ...]] = {
    "rank": ("RANK",), "world_size": ("WORLD_SIZE",), "local_rank": ("LOCAL_RANK",),
    "local_world_size": ("LOCAL_WORLD_SIZE", "LOCAL_SIZE"), "node_rank": ("GROUP_RANK", "CROSS_RANK", "NODE_RANK"),
    "num_nodes": ("GROUP_WORLD_SIZE", "CROSS_SIZE"),
}
INT_VARS = sorted({v for f in (*NATIVE.values(), TORCH_FIELDS) for names in f.values() for v in names})
TASKS_PER_NODE_RE = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


def _tasks_on_node(spec: str, node_id: int) -> int | None:
    """SLURM's compressed tasks-per-node list ("2(x3),1") -> the count on node ``node_id``."""
    counts: list[int] = []
    for part in spec.split(","):
        m = TASKS_PER_NODE_RE.match(part.strip())
        if not m:
            return None
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    return counts[node_id] if 0 <= node_id < len(counts) else None


def detect_kinds(env: Mapping[str, str]) -> list[str]:
    """Every launcher family whose marker variables are present, most specific first."""
    return [kind for kind in PRIORITY if any(m in env for m in FAMILIES[kind][0])]


class LauncherProbe(Probe):
    """Detects the launcher (torchrun, MPI, SLURM, DeepSpeed, ...) and reads the rank identity it set."""

    id = "launcher"
    title = "Launcher and rank environment"
    scope = RANK
    timeout_s = 5.0
    order = 10
    produces = (
        FactSpec("launcher.kind", "str", "torchrun, deepspeed, openmpi, mvapich2, mpich, slurm, local, manual "
                 "(torch variables set by hand) or none"),
        FactSpec("launcher.kinds_detected", "list", "Every launcher family whose variables are present "
                 "(e.g. [torchrun, slurm] for torchrun started by srun)"),
        FactSpec("launcher.scheduler", "str", "Batch scheduler allocation around the process (slurm) when present"),
        FactSpec("launcher.rank", "int", "Global rank (torch RANK, else the launcher's own rank variable)"),
        FactSpec("launcher.local_rank", "int", "Local rank on this node"),
        FactSpec("launcher.world_size", "int", "World size"),
        FactSpec("launcher.local_world_size", "int", "Ranks on this node"),
        FactSpec("launcher.node_rank", "int", "Index of this node (GROUP_RANK, CROSS_RANK, SLURM_NODEID, ...)"),
        FactSpec("launcher.num_nodes", "int", "Number of nodes (GROUP_WORLD_SIZE, CROSS_SIZE, SLURM_*_NUM_NODES)"),
        FactSpec("launcher.sources", "dict", "Field -> the environment variable it was read from"),
        FactSpec("launcher.torch_rank", "int", "RANK as set in the environment"),
        FactSpec("launcher.torch_world_size", "int", "WORLD_SIZE as set in the environment"),
        FactSpec("launcher.torch_local_rank", "int", "LOCAL_RANK as set in the environment"),
        FactSpec("launcher.native_rank", "int", "The MPI/SLURM launcher's own rank (OMPI_COMM_WORLD_RANK, PMI_RANK, ...)"),
        FactSpec("launcher.native_world_size", "int", "The MPI/SLURM launcher's own world size"),
        FactSpec("launcher.native_local_rank", "int", "The MPI/SLURM launcher's own local rank"),
        FactSpec("launcher.native_local_world_size", "int", "The MPI/SLURM launcher's own ranks on this node"),
        FactSpec("launcher.master_addr", "str", "MASTER_ADDR as set"),
        FactSpec("launcher.master_port", "str", "MASTER_PORT exactly as set (may not be a number)"),
        FactSpec("launcher.master_port_int", "int", "MASTER_PORT when it parses as an integer"),
        FactSpec("launcher.missing_vars", "list", "Variables the detected launcher always sets that are absent"),
        FactSpec("launcher.torch_missing_vars", "list", "torch env:// variables (RANK, WORLD_SIZE, MASTER_ADDR, "
                 "MASTER_PORT) that are absent"),
        FactSpec("launcher.invalid_vars", "list", "Rank/size variables whose value is not an integer, as NAME=value"),
        FactSpec("launcher.nodelist", "str", "SLURM_JOB_NODELIST as set"),
        FactSpec("launcher.vars", "dict", "The launcher-related variables seen (name -> value)"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Read the environment; never guess a value that is not there."""
        env = ctx.env
        kinds = detect_kinds(env)
        kind = kinds[0] if kinds else "none"
        facts: dict = {"launcher.kind": kind, "launcher.kinds_detected": kinds}
        if "SLURM_JOB_ID" in env or "SLURM_JOBID" in env:
            facts["launcher.scheduler"] = "slurm"

        ints: dict[str, int] = {}
        invalid: list[str] = []
        for name in INT_VARS:
            if name in env:
                try:
                    ints[name] = int(env[name].strip())
                except ValueError:
                    invalid.append(f"{name}={env[name]!r}")
        facts["launcher.invalid_vars"] = invalid

        def pick(fields: dict[str, tuple[str, ...]], field: str) -> tuple[int | None, str | None]:
            for name in fields.get(field, ()):
                if name in ints:
                    return ints[name], name
            return None, None

        native = NATIVE.get(kind, {})
        sources: dict[str, str] = {}
        for field in ("rank", "world_size", "local_rank", "local_world_size", "node_rank", "num_nodes"):
            value, name = pick(TORCH_FIELDS, field)
            if value is None:
                value, name = pick(native, field)
            if value is not None:
                facts[f"launcher.{field}"] = value
                sources[field] = name
        if kind == "slurm" and "launcher.local_world_size" not in facts:
            spec = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE")
            if spec and "SLURM_NODEID" in ints:
                count = _tasks_on_node(spec, ints["SLURM_NODEID"])
                if count is not None:
                    facts["launcher.local_world_size"] = count
                    sources["local_world_size"] = "SLURM_STEP_TASKS_PER_NODE" \
                        if "SLURM_STEP_TASKS_PER_NODE" in env else "SLURM_TASKS_PER_NODE"
        facts["launcher.sources"] = sources
        for field in ("rank", "world_size", "local_rank"):
            value, _ = pick(TORCH_FIELDS, field)
            if value is not None:
                facts[f"launcher.torch_{field}"] = value
            value, _ = pick(native, field)
            if value is not None:
                facts[f"launcher.native_{field}"] = value
        value, _ = pick(native, "local_world_size")
        if value is not None:
            facts["launcher.native_local_world_size"] = value

        if "MASTER_ADDR" in env:
            facts["launcher.master_addr"] = env["MASTER_ADDR"]
        if "MASTER_PORT" in env:
            facts["launcher.master_port"] = env["MASTER_PORT"]
            if re.fullmatch(r"\s*[+-]?\d+\s*", env["MASTER_PORT"]):
                facts["launcher.master_port_int"] = int(env["MASTER_PORT"])
        if "SLURM_JOB_NODELIST" in env:
            facts["launcher.nodelist"] = env["SLURM_JOB_NODELIST"]
        facts["launcher.missing_vars"] = [v for v in FAMILIES[kind][1] if v not in env] if kind != "none" else []
        facts["launcher.torch_missing_vars"] = [v for v in TORCH_ENV_VARS if v not in env]
        seen = sorted({v for k in kinds for group in FAMILIES[k] for v in group} | set(INT_VARS)
                      | {"MASTER_ADDR", "MASTER_PORT", "SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NTASKS_PER_NODE",
                         "SLURM_STEP_TASKS_PER_NODE", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE"})
        facts["launcher.vars"] = {v: env[v] for v in seen if v in env}

        table = [[f, facts.get(f"launcher.{f}"), sources.get(f, "")]
                 for f in ("rank", "local_rank", "world_size", "local_world_size", "node_rank", "num_nodes")]
        if kind == "none":
            message = "no launcher variables: a plain process (torch's env:// would need RANK, WORLD_SIZE, " \
                      "MASTER_ADDR, MASTER_PORT)"
        else:
            message = f"{kind}: rank {facts.get('launcher.rank', '?')} of {facts.get('launcher.world_size', '?')}, " \
                      f"local rank {facts.get('launcher.local_rank', '?')}"
        return self.result(facts, message, table=table, table_header=["field", "value", "from"])
