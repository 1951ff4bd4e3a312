"""Tools probe: tools found with versions; a missing tool only matters when the launch needs it; hostfiles."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from .conftest import clean_env, findings_by_id, probe_facts, run_cli


def bin_dir_with(tmp_path, *tools: str) -> str:
    """A PATH holding only symlinks to ``tools`` (those this machine has)."""
    d = tmp_path / "bin"
    d.mkdir()
    for tool in tools:
        path = shutil.which(tool)
        if path:
            (d / tool).symlink_to(path)
    return str(d)


def test_healthy_machine_tools_and_no_finding():
    report = run_cli("tools", clean_env())
    facts = probe_facts(report, "tools")
    for tool in ("gcc", "ninja", "torchrun"):
        if shutil.which(tool):
            assert facts["tools.paths"][tool] == shutil.which(tool)
            assert facts["tools.versions"][tool][0].isdigit()
    assert not {"tool-missing", "hostfile-missing"} & set(findings_by_id(report))


def test_srun_missing_inside_slurm_allocation(tmp_path):
    """An sbatch script (SLURM_JOB_ID, no job step) on a PATH without srun."""
    env = clean_env(SLURM_JOB_ID="4242", PATH=bin_dir_with(tmp_path, "gcc"))
    finding = findings_by_id(run_cli("tools", env))["tool-missing"]
    assert "inside SLURM job allocation, outside a job step, and srun is not on PATH" in \
        [e["detail"] for e in finding["evidence"]]


def test_srun_step_does_not_need_srun(tmp_path):
    """A task started by srun (SLURM_STEP_ID) inside a container without the SLURM client is fine."""
    env = clean_env(SLURM_JOB_ID="4242", SLURM_STEP_ID="0", PATH=bin_dir_with(tmp_path, "gcc"))
    assert "tool-missing" not in findings_by_id(run_cli("tools", env))


@pytest.mark.parametrize("launcher,tool", [("mpirun", "mpirun"), ("deepspeed", "deepspeed"), ("torchrun", "torchrun"),
                                           ("slurm", "srun")])
def test_requested_launcher_missing(tmp_path, monkeypatch, probe_and_judge, launcher, tool):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # nothing beside this interpreter
    _, findings = probe_and_judge("tools", clean_env(PATH=bin_dir_with(tmp_path, "gcc")), {"launcher": launcher})
    detail = findings["tool-missing"].evidence[0].detail
    assert f"launcher {launcher} requested but its command is not on PATH" in detail and tool in detail


def test_requested_launcher_present_is_quiet(tmp_path, probe_and_judge):
    if not shutil.which("torchrun"):
        pytest.skip("torchrun not installed")
    _, findings = probe_and_judge("tools", clean_env(PATH=bin_dir_with(tmp_path, "torchrun")), {"launcher": "torchrun"})
    assert "tool-missing" not in findings


def test_multi_node_hostfile_without_pdsh(tmp_path, probe_and_judge):
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("# two nodes\nworker-0 slots=8\nworker-1 slots=8\n")
    env = clean_env(PATH=bin_dir_with(tmp_path, "gcc"))
    result, findings = probe_and_judge("tools", env, {"hostfile": str(hostfile)})
    assert result.facts["tools.hostfile_hosts"] == 2
    assert f"{hostfile} lists 2 hosts (a multi-node DeepSpeed launch over pdsh) but pdsh is not on PATH" in \
        findings["tool-missing"].evidence[0].detail
    # one host needs no pdsh
    hostfile.write_text("worker-0 slots=8\n")
    assert "tool-missing" not in probe_and_judge("tools", env, {"hostfile": str(hostfile)})[1]


def test_deepspeed_without_ninja(tmp_path):
    """An installed deepspeed package (here an empty one on PYTHONPATH) and no ninja on PATH."""
    pkg = tmp_path / "site" / "deepspeed"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    env = clean_env(PATH=bin_dir_with(tmp_path, "gcc"), PYTHONPATH=f"{tmp_path / 'site'}{os.pathsep}"
                    f"{os.environ.get('PYTHONPATH', '')}")
    report = run_cli("tools", env)
    assert probe_facts(report, "tools")["tools.deepspeed_installed"] is True
    details = [e["detail"] for e in findings_by_id(report)["tool-missing"]["evidence"]]
    assert "deepspeed is installed but ninja is not on PATH (needed to JIT-build ops such as FusedAdam)" in details


def test_hostfile_absent(tmp_path, probe_and_judge):
    missing = tmp_path / "nope" / "hostfile"
    _, findings = probe_and_judge("tools", clean_env(), {"hostfile": str(missing)})
    assert findings["hostfile-missing"].evidence[0].detail == f"hostfile {missing} does not exist"


def test_hostfile_empty_or_malformed(tmp_path, probe_and_judge):
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("# nothing yet\n\n")
    _, findings = probe_and_judge("tools", clean_env(), {"hostfile": str(hostfile)})
    assert findings["hostfile-missing"].evidence[0].detail == f"hostfile {hostfile} has no 'host slots=N' entry"
    hostfile.write_text("worker-0\nworker-1 8\n")
    _, findings = probe_and_judge("tools", clean_env(), {"hostfile": str(hostfile)})
    assert "(unusable lines: worker-0; worker-1 8)" in findings["hostfile-missing"].evidence[0].detail


def test_default_hostfile_absent_is_single_node(probe_and_judge):
    if os.path.exists("/job/hostfile"):
        pytest.skip("this machine has a /job/hostfile")
    result, findings = probe_and_judge("tools", clean_env())
    assert result.facts["tools.hostfile_source"] == "default" and result.facts["tools.hostfile_exists"] is False
    assert "hostfile-missing" not in findings


def test_tools_beside_the_interpreter_are_found_off_path(tmp_path):
    """A venv's torchrun sits beside its python: found even when the venv is not on PATH (not activated)."""
    beside = os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.path.exists(beside):
        pytest.skip("this interpreter has no torchrun beside it")
    report = run_cli("tools", clean_env(PATH=bin_dir_with(tmp_path, "true")))
    facts = probe_facts(report, "tools")
    assert facts["tools.paths"]["torchrun"] == beside
    assert "torchrun" not in facts["tools.missing"]
