"""Real launches on this machine: torchrun, python -m torch.distributed.run, mpirun, hand-set variables."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import HERE, QUICK, clean_env, finding_ids, free_port, load, run, torchrun

pytestmark = pytest.mark.slow
AUTO = ["-m", "troubleshooter", "--auto", "--format", "json", "-q"]


def test_torchrun_two_ranks_one_report_from_rank_0(tmp_path):
    port = free_port()
    proc = run([*torchrun(), "--nproc_per_node=2", f"--master_port={port}", *AUTO, "-o", "r.json", "--timeout", "60"],
               timeout=240, cwd=tmp_path, env=clean_env())
    doc = load(tmp_path / "r.json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert doc["world"] == {"size": 2, "backend": "gloo", "launcher": "torchrun", "nodes": 1}
    assert [row["rank"] for row in doc["rank_table"]] == [0, 1]
    assert all(row["status"] == "ok" and row["torch"] != "-" for row in doc["rank_table"])
    for rank in (0, 1):
        statuses = {p["name"]: p["status"] for p in doc["probes"] if p["rank"] == rank}
        assert statuses["job"] == "pass" and statuses["launcher"] in ("pass", "warn")
    assert not list(tmp_path.glob("r.json.rank*.json"))  # everything reached rank 0
    assert proc.stdout.strip() == ""  # -q with -o: rank 0 prints nothing on stdout, and no other rank speaks


def test_torch_distributed_run_with_a_stale_rank_flags_version_mismatch(tmp_path):
    port = free_port()
    proc = run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={port}", *AUTO,
                "-o", "r.json", "--probes", str(HERE / "fake_version_probe"), "--probe", "launcher",
                "--probe", "hardware", "--timeout", "60"], timeout=240, cwd=tmp_path, env=clean_env())
    doc = load(tmp_path / "r.json")
    assert proc.returncode == 1, proc.stderr[-2000:]
    finding = next(f for f in doc["findings"] if f["id"] == "version-mismatch-across-ranks")
    assert "0.0.0+stale on rank 1" in finding["evidence"][0]["detail"]
    assert doc["rank_table"][1]["torch"] == "0.0.0+stale"


@pytest.mark.skipif(not shutil.which("mpirun"), reason="mpirun (OpenMPI) is not installed")
def test_mpirun_two_ranks_without_torch_variables(tmp_path):
    env = clean_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", MASTER_PORT=str(free_port()))
    proc = run(["mpirun", "-np", "2", "--oversubscribe", "-x", "MASTER_PORT", sys.executable, *AUTO, *QUICK,
                "-o", "r.json", "--timeout", "60"], timeout=240, cwd=tmp_path, env=env)
    doc = load(tmp_path / "r.json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert doc["world"]["launcher"] == "mpirun" and doc["world"]["size"] == 2
    assert [row["rank"] for row in doc["rank_table"]] == [0, 1]
    assert doc["facts"]["world.backend"] == "gloo"
    assert "collective-wrong-result" not in finding_ids(doc)
    # the user's own script would need RANK/MASTER_ADDR mapped: the launcher probe judged the real environment
    assert "launcher-env-missing" in finding_ids(doc)


def test_rank_with_a_different_master_port_is_named_instead_of_hanging(tmp_path):
    ports = [free_port(), free_port()]
    procs = []
    for rank in (0, 1):
        env = clean_env(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(ports[rank]))
        procs.append(subprocess.Popen(
            [sys.executable, *AUTO, *QUICK, "-o", "r.json", "--timeout", "12"], cwd=tmp_path, env=env,
            stdout=-1, stderr=-1, text=True, start_new_session=True))
    try:
        for proc in procs:
            proc.communicate(timeout=150)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
    main = load(tmp_path / "r.json")
    assert main["facts"]["world.missing_ranks"] == [1]
    assert "ranks-missing-at-rendezvous" in finding_ids(main)
    partial = load(tmp_path / "r.json.rank1.json")
    assert partial["partial"] is True and partial["partial_rank"] == 1
    assert "network-unreachable" in finding_ids(partial)
    assert procs[1].returncode == 0  # a launcher must not tear the others down because of rank 1
