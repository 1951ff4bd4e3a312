"""Launcher probe: which launcher started this process and the rank identity it handed over.

Reads the environment only (``ctx.env``). Every launcher family publishes its own variables
(the table in ``rules/launchers.yaml``); torch's ``env://`` rendezvous needs RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT. The probe reports both views as raw facts so the rules in
``rules/checks/`` can compare them. In the troubleshooter's own local world it says so.
"""

from __future__ import annotations

import re

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.launchers import LOCAL_WORLD_VAR, as_int, launcher_table
from troubleshooter.core.probe import RANK, Probe, ProbeContext, ProbeResult

TORCH_ENV_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
IDENTITY_FIELDS = ("rank", "world_size", "local_rank", "local_world_size", "node_rank", "num_nodes")


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
        env, launchers = ctx.env, launcher_table()
        kinds = launchers.detect(env)
        kind = kinds[0] if kinds else "none"
        facts: dict = {"launcher.kind": kind, "launcher.kinds_detected": kinds}
        scheduler = launchers.scheduler(env)
        if scheduler:
            facts["launcher.scheduler"] = scheduler

        per_node = launchers.per_node_variables()
        int_vars = sorted({v for f in IDENTITY_FIELDS for v in launchers.variables(f)} - per_node)
        facts["launcher.invalid_vars"] = [f"{n}={env[n]!r}" for n in int_vars if n in env and as_int(env[n]) is None]
        own = launchers.get(kind).fields if launchers.get(kind) else {}
        torch = launchers.torch

        def pick(fields: dict[str, tuple[str, ...]], name: str, node: int | None) -> tuple[int | None, str | None]:
            return launchers.read(env, name, fields.get(name, ()), node)

        node_rank, _ = pick(torch, "node_rank", None)
        if node_rank is None:
            node_rank, _ = pick(own, "node_rank", None)
        sources: dict[str, str] = {}
        for field in IDENTITY_FIELDS:
            value, name = pick(torch, field, node_rank)
            if value is None:
                value, name = pick(own, field, node_rank)
            if value is not None:
                facts[f"launcher.{field}"] = value
                sources[field] = name
        facts["launcher.sources"] = sources
        for field in ("rank", "world_size", "local_rank", "local_world_size"):
            value, _ = pick(torch, field, node_rank)
            if value is not None and field != "local_world_size":
                facts[f"launcher.torch_{field}"] = value
            native = {k: v for k, v in own.items() if not set(v) & per_node}  # the launcher's plain variables
            value, _ = pick(native, field, node_rank)
            if value is not None:
                facts[f"launcher.native_{field}"] = value

        if "MASTER_ADDR" in env:
            facts["launcher.master_addr"] = env["MASTER_ADDR"]
        if "MASTER_PORT" in env:
            facts["launcher.master_port"] = env["MASTER_PORT"]
            if re.fullmatch(r"\s*[+-]?\d+\s*", env["MASTER_PORT"]):
                facts["launcher.master_port_int"] = int(env["MASTER_PORT"])
        if "SLURM_JOB_NODELIST" in env:
            facts["launcher.nodelist"] = env["SLURM_JOB_NODELIST"]
        expected = launchers.get(kind).sets if launchers.get(kind) else ()
        facts["launcher.missing_vars"] = [v for v in expected if v not in env]
        facts["launcher.torch_missing_vars"] = [v for v in TORCH_ENV_VARS if v not in env]
        seen = sorted({v for k in kinds for v in (*launchers.get(k).markers, *launchers.get(k).sets)} | set(int_vars)
                      | per_node | {"MASTER_ADDR", "MASTER_PORT", "SLURM_JOB_ID", "SLURM_JOB_NODELIST",
                                    "SLURM_NTASKS_PER_NODE", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE"})
        facts["launcher.vars"] = {v: env[v] for v in seen if v in env}

        table_rows = [[f, facts.get(f"launcher.{f}"), sources.get(f, "")] for f in IDENTITY_FIELDS]
        where = f"rank {facts.get('launcher.rank', '?')} of {facts.get('launcher.world_size', '?')}, " \
                f"local rank {facts.get('launcher.local_rank', '?')}"
        if kind == "none":
            message = "no launcher variables: a plain process (torch's env:// would need RANK, WORLD_SIZE, " \
                      "MASTER_ADDR, MASTER_PORT)"
        elif kind == "local" and env.get(LOCAL_WORLD_VAR):
            message = f"the troubleshooter's own {facts.get('launcher.world_size', '?')}-rank world on this host: " \
                      f"{where} (not your launcher: run the diagnosis under it to check its variables)"
        else:
            message = f"{kind}: {where}"
        return self.result(facts, message, table=table_rows, table_header=["field", "value", "from"])
