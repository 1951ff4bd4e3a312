"""Launcher probe: each launcher family detected, its inconsistencies and gaps found, a plain shell left alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from .conftest import ENV_FINDINGS, clean_env, findings_by_id, probe_facts, run_cli

TORCHRUN = {"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0",
            "ROLE_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "none",
            "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0", "GROUP_WORLD_SIZE": "2"}
DEEPSPEED = {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4", "LOCAL_SIZE": "2", "CROSS_RANK": "1",
             "CROSS_SIZE": "2", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
TORCH_MAPPED = {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
OPENMPI = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_NODE_RANK": "1"}
MVAPICH2 = {"MV2_COMM_WORLD_RANK": "2", "MV2_COMM_WORLD_SIZE": "4", "MV2_COMM_WORLD_LOCAL_RANK": "0",
            "MV2_COMM_WORLD_LOCAL_SIZE": "2"}
MPICH = {"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"}
SLURM = {"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0", "SLURM_PROCID": "2", "SLURM_LOCALID": "0", "SLURM_NODEID": "1",
         "SLURM_NTASKS": "4", "SLURM_STEP_NUM_TASKS": "4", "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
         "SLURM_JOB_NODELIST": "node[01-02]", "SLURM_JOB_NUM_NODES": "2"}
LOCAL = {"TROUBLESHOOTER_LOCAL_WORLD": "1", "RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2",
         "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29555"}


def mapped(native: dict, rank: str, size: str, local: str) -> dict:
    """An MPI/SLURM environment whose torch variables were mapped (correctly or not) by a wrapper."""
    return {**native, **TORCH_MAPPED, "RANK": rank, "WORLD_SIZE": size, "LOCAL_RANK": local}


HEALTHY = {
    "torchrun": TORCHRUN, "deepspeed": DEEPSPEED, "local": LOCAL,
    "openmpi": mapped(OPENMPI, "2", "4", "0"), "mvapich2": mapped(MVAPICH2, "2", "4", "0"),
    "mpich": mapped(MPICH, "2", "4", "0"), "slurm": mapped(SLURM, "2", "4", "0"),
    "manual": {"RANK": "0", "WORLD_SIZE": "1", **TORCH_MAPPED},
}


@pytest.mark.parametrize("kind", sorted(HEALTHY))
def test_each_launcher_detected_without_findings(kind, probe_and_judge):
    result, findings = probe_and_judge("launcher", clean_env(**HEALTHY[kind]))
    assert result.facts["launcher.kind"] == kind
    assert result.facts["launcher.missing_vars"] == []
    assert not set(findings) & set(ENV_FINDINGS), {k: [e.detail for e in f.evidence] for k, f in findings.items()}


def test_slurm_identity_read_from_slurm_variables(probe_and_judge):
    result, findings = probe_and_judge("launcher", clean_env(**SLURM, **TORCH_MAPPED))
    f = result.facts
    assert (f["launcher.rank"], f["launcher.world_size"], f["launcher.local_rank"]) == (2, 4, 0)
    assert (f["launcher.local_world_size"], f["launcher.node_rank"], f["launcher.num_nodes"]) == (2, 1, 2)
    assert f["launcher.sources"]["local_world_size"] == "SLURM_STEP_TASKS_PER_NODE"
    assert f["launcher.nodelist"] == "node[01-02]"
    # srun alone never sets RANK/WORLD_SIZE: torch's env:// would fail, a warning
    assert findings["launcher-env-missing"].severity == "warning"
    assert "RANK, WORLD_SIZE" in findings["launcher-env-missing"].evidence[0].detail


INCONSISTENT = [
    ("torchrun", {**TORCHRUN, "RANK": "4"}, "rank 4 (RANK) is not below world size 4 (WORLD_SIZE)"),
    ("torchrun", {**TORCHRUN, "LOCAL_RANK": "2"}, "local rank 2 (LOCAL_RANK) is not below the local world size 2"),
    ("torchrun", {**TORCHRUN, "GROUP_RANK": "2"}, "node rank 2 (GROUP_RANK) is not below the node count 2"),
    ("torchrun", {**TORCHRUN, "LOCAL_WORLD_SIZE": "8"}, "8 ranks on this node (LOCAL_WORLD_SIZE) but a world of 4"),
    ("deepspeed", {**DEEPSPEED, "LOCAL_SIZE": "1"}, "local rank 1 (LOCAL_RANK) is not below the local world size 1 (LOCAL_SIZE)"),
    ("openmpi", mapped(OPENMPI, "3", "4", "0"), "RANK=3 but the openmpi launcher says rank 2"),
    ("mvapich2", mapped(MVAPICH2, "2", "8", "0"), "WORLD_SIZE=8 but the mvapich2 launcher started 4 processes"),
    ("mpich", {**MPICH, "PMI_RANK": "4"}, "rank 4 (PMI_RANK) is not below world size 4 (PMI_SIZE)"),
    ("slurm", mapped(SLURM, "2", "4", "1"), "LOCAL_RANK=1 but the slurm launcher says local rank 0"),
    ("local", {**LOCAL, "RANK": "-1"}, "launcher.rank = -1"),
    ("manual", {**HEALTHY["manual"], "MASTER_PORT": "29500x"}, 'MASTER_PORT="29500x" is not a TCP port number'),
    ("manual", {**HEALTHY["manual"], "MASTER_PORT": "70000"}, 'MASTER_PORT="70000" is not a TCP port number'),
    ("manual", {**HEALTHY["manual"], "WORLD_SIZE": "two"}, "not an integer: WORLD_SIZE='two'"),
]


@pytest.mark.parametrize("kind,env,detail", INCONSISTENT, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(INCONSISTENT)])
def test_inconsistent_rank_variables(kind, env, detail, probe_and_judge):
    result, findings = probe_and_judge("launcher", clean_env(**env))
    assert result.facts["launcher.kind"] == kind
    assert "rank-env-inconsistent" in findings, sorted(findings)
    details = [e.detail for e in findings["rank-env-inconsistent"].evidence]
    assert any(detail in d for d in details), details
    assert findings["rank-env-inconsistent"].evidence[0].rank == 0


MISSING = [
    ("torchrun", {k: v for k, v in TORCHRUN.items() if k not in ("LOCAL_WORLD_SIZE", "MASTER_PORT")},
     "torchrun launch, but LOCAL_WORLD_SIZE, MASTER_PORT not set", "error"),
    ("deepspeed", {k: v for k, v in DEEPSPEED.items() if k != "LOCAL_RANK"}, "deepspeed launch, but LOCAL_RANK not set",
     "error"),
    ("openmpi", OPENMPI, "openmpi launch without the torch variables RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT",
     "warning"),
    ("openmpi", {k: v for k, v in mapped(OPENMPI, "2", "4", "0").items() if k != "OMPI_COMM_WORLD_LOCAL_RANK"},
     "openmpi launch, but OMPI_COMM_WORLD_LOCAL_RANK not set", "error"),
    ("mvapich2", MVAPICH2, "mvapich2 launch without the torch variables", "warning"),
    ("mpich", {"PMI_RANK": "0", "RANK": "0", "WORLD_SIZE": "1", **TORCH_MAPPED}, "mpich launch, but PMI_SIZE not set",
     "error"),
    ("manual", {"RANK": "0", "WORLD_SIZE": "2"}, "manual launch, but MASTER_ADDR, MASTER_PORT not set", "error"),
]


@pytest.mark.parametrize("kind,env,detail,severity", MISSING, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(MISSING)])
def test_launcher_variables_missing(kind, env, detail, severity, probe_and_judge):
    result, findings = probe_and_judge("launcher", clean_env(**env))
    assert result.facts["launcher.kind"] == kind
    finding = findings["launcher-env-missing"]
    assert any(detail in e.detail for e in finding.evidence), [e.detail for e in finding.evidence]
    assert finding.severity == severity


def test_plain_shell_is_no_launcher(probe_and_judge):
    result, findings = probe_and_judge("launcher", clean_env(MASTER_PORT="29500"))
    assert result.facts["launcher.kind"] == "none"
    assert result.facts["launcher.kinds_detected"] == []
    assert "launcher.rank" not in result.facts
    assert not findings


def test_sbatch_shell_is_a_scheduler_not_a_launcher(probe_and_judge):
    result, findings = probe_and_judge("launcher", clean_env(SLURM_JOB_ID="77", SLURM_JOB_NODELIST="n1"))
    assert result.facts["launcher.kind"] == "none"
    assert result.facts["launcher.scheduler"] == "slurm"
    assert not findings


@pytest.mark.slow
def test_real_torchrun_environment(tmp_path, registry, rules):
    """Two ranks started by the real torchrun judge their own environment: torchrun, consistent, no finding. Each rank
    writes its verdict to a file of its own (two ranks printing to one pipe may interleave their lines)."""
    script = tmp_path / "judge.py"
    script.write_text(textwrap.dedent("""
        import json, os
        from troubleshooter.core.engine import Observations, evaluate
        from troubleshooter.core.facts import Facts
        from troubleshooter.core.probe import ProbeContext, run_probe
        from troubleshooter.core.registry import Registry
        from troubleshooter.core.ruleset import load_rules
        result = run_probe(Registry.load(entry_points=False).get("launcher")(), ProbeContext(env=dict(os.environ)))
        found = evaluate(load_rules(), Observations(ranks={0: Facts.from_dict(result.facts, "launcher", 0)}))
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank%s.json" % os.environ["RANK"])
        with open(out, "w") as f:
            json.dump({"facts": result.facts, "findings": [f.id for f in found]}, f)
    """))
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(script)], env=clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(path.read_text()) for path in sorted(tmp_path.glob("rank*.json"))]
    assert len(rows) == 2
    assert sorted(r["facts"]["launcher.rank"] for r in rows) == [0, 1]
    for row in rows:
        assert row["facts"]["launcher.kind"] == "torchrun"
        assert row["facts"]["launcher.world_size"] == 2 and row["facts"]["launcher.local_world_size"] == 2
        assert row["findings"] == []


@pytest.mark.slow
def test_cli_local_world_reports_local(tmp_path):
    report = run_cli("launcher", clean_env(), "--nproc", "2")
    kinds = {p["facts"].get("launcher.kind") for p in report["probes"] if p["name"] == "launcher"}
    assert kinds == {"local"}
    assert not set(findings_by_id(report)) & set(ENV_FINDINGS)
    assert probe_facts(report, "launcher")["launcher.world_size"] == 2


# The shell of a user whose launcher (or wrapper) set inconsistent rank variables: `troubleshoot probe
# launcher` judges that process's own environment, not the troubleshooter's local world.
USER_SHELLS = {
    "torch": {"RANK": "3", "WORLD_SIZE": "2"},
    "slurm": {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "3", "SLURM_NTASKS_PER_NODE": "2"},
    "openmpi": {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "4"},
}
HEALTHY_SHELLS = {
    "torchrun": TORCHRUN,
    "srun": mapped(SLURM, "2", "4", "0"),
    "mpirun": mapped(OPENMPI, "2", "4", "0"),
}


@pytest.mark.parametrize("shell", sorted(USER_SHELLS))
def test_probe_command_judges_the_users_own_launcher_variables(shell):
    report = run_cli("launcher", clean_env(**USER_SHELLS[shell]))
    found = findings_by_id(report)
    assert "rank-env-inconsistent" in found, report["probes"]
    launcher = next(p for p in report["probes"] if p["name"] == "launcher")
    assert launcher["rank"] is None and "troubleshooter's own" not in launcher["message"]
    assert report["world"]["launcher"] != "local"


@pytest.mark.parametrize("shell", sorted(HEALTHY_SHELLS))
def test_probe_command_in_a_healthy_launcher_shell_finds_nothing(shell):
    report = run_cli("launcher", clean_env(**HEALTHY_SHELLS[shell]))
    assert not set(findings_by_id(report)) & set(ENV_FINDINGS), report["findings"]
    assert probe_facts(report, "launcher")["launcher.kind"] != "local"


@pytest.mark.slow
def test_local_world_says_it_is_the_troubleshooters_own(tmp_path):
    report = run_cli("launcher", clean_env(), "--nproc", "2")
    messages = {p["message"] for p in report["probes"] if p["name"] == "launcher"}
    assert all(m.startswith("the troubleshooter's own 2-rank world on this host") for m in messages), messages
    assert report["world"]["launcher"] == "local"
