"""The parity probe under the user's own launcher (torchrun, 2 ranks): the same measurement, one report."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.distributed.conftest import clean_env, free_port, load, run, torchrun

pytestmark = pytest.mark.slow
MODELS = Path(__file__).resolve().parents[1] / "data" / "parity"


def test_batchnorm_fault_found_under_torchrun(tmp_path):
    port = free_port()
    env = clean_env(PYTHONPATH=os.pathsep.join([str(MODELS), os.environ.get("PYTHONPATH", "")]))
    proc = run([*torchrun(), "--nproc_per_node=2", f"--master_port={port}", "-m", "troubleshooter", "--auto",
                "--probe", "parity", "--model", "parity_models:batchnorm", "--format", "json", "-q", "-o", "r.json"],
               timeout=240, cwd=tmp_path, env=env)
    doc = load(tmp_path / "r.json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert doc["world"]["launcher"] == "torchrun" and doc["world"]["size"] == 2
    found = {f["id"]: f for f in doc["findings"]}
    assert "batchnorm-not-synced" in found, sorted(found)
    assert any("norm.running_mean" in e["detail"] for e in found["batchnorm-not-synced"]["evidence"])
