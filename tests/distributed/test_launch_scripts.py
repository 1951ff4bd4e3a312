"""``troubleshoot launch`` scripts: shellcheck-clean, fail fast without their tools, torchrun's runs here."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import clean_env, free_port, load, run
from troubleshooter.cli import main
from troubleshooter.launch.scripts import render_script

LAUNCHERS = ("slurm", "mpirun", "torchrun", "deepspeed")


@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize("nodes", (1, 4))
def test_scripts_are_shellcheck_clean(tmp_path, launcher, nodes):
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck is not installed")
    path = tmp_path / f"{launcher}.sh"
    assert main(["launch", "--launcher", launcher, "--nodes", str(nodes), "--gpus-per-node", "8",
                 "--partition", "gpu", "-o", str(path)]) == 0
    assert path.stat().st_mode & 0o100
    checked = subprocess.run(["shellcheck", "-s", "bash", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout


def test_sbatch_script_runs_one_srun_task_per_gpu():
    text = render_script("slurm", 4, 8, partition="a100")
    assert "#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n#SBATCH --partition=a100" in text
    assert 'srun --kill-on-bad-exit=0 --nodes=4 --ntasks-per-node=8' in text
    assert "need srun" in text and "need scontrol" in text


def test_mpirun_line_binds_and_exports_the_rendezvous():
    text = render_script("mpirun", 2, 4, master_addr="node01", master_port=29400)
    assert "mpirun -np 8 --hostfile \"$HOSTFILE\" --map-by ppr:4:node" in text
    assert "--bind-to numa" in text and "-x MASTER_ADDR -x MASTER_PORT" in text
    assert "MASTER_ADDR=${MASTER_ADDR:-node01}" in text and "MASTER_PORT=${MASTER_PORT:-29400}" in text


def test_missing_launcher_fails_fast_with_its_name(tmp_path):
    path = tmp_path / "ds.sh"
    path.write_text(render_script("deepspeed", 2, 8))
    proc = run(["bash", str(path), "0"], timeout=60, env=clean_env(PATH="/usr/bin:/bin"))
    assert proc.returncode == 127
    assert "'deepspeed' is not on PATH" in proc.stderr


def test_bad_sizes_are_usage_errors(capsys):
    assert main(["launch", "--launcher", "torchrun", "--nodes", "0", "--gpus-per-node", "8"]) == 2
    assert "--nodes and --gpus-per-node must be at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_generated_torchrun_script_runs_the_diagnosis_here(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text(render_script("torchrun", 1, 2, master_port=free_port()))
    bin_dir = tmp_path / "bin"  # the torchrun of this interpreter (one on PATH may belong to another Python)
    bin_dir.mkdir()
    (bin_dir / "torchrun").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m torch.distributed.run "$@"\n')
    (bin_dir / "torchrun").chmod(0o755)
    env = clean_env(REPORT="diag.json", PYTHON=sys.executable)
    env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:{env.get('PATH', '')}"
    proc = run(["bash", str(path), "0"], timeout=300, cwd=tmp_path, env=env)
    doc = load(tmp_path / "diag.json")
    assert proc.returncode == (1 if any(f["severity"] != "info" for f in doc["findings"]) else 0), proc.stderr[-2000:]
    assert [row["rank"] for row in doc["rank_table"]] == [0, 1]
    assert (tmp_path / "diag.md").read_text().startswith("#")
