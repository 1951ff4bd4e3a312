"""System probe: /dev/shm and CPU oversubscription created for real (tmpfs mount, CPU affinity, rank layout)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .conftest import clean_env, findings_by_id, probe_facts, run_cli

USABLE = len(os.sched_getaffinity(0))
needs_root_unshare = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                        reason="needs root and unshare for a private /dev/shm mount")


def test_healthy_machine_has_no_system_finding():
    report = run_cli("system", clean_env())
    facts = probe_facts(report, "system")
    assert facts["system.cpus_usable"] == USABLE
    assert facts["system.shm_present"] is True and facts["system.shm_total_bytes"] > 0
    assert facts["system.mem_available_bytes"] <= facts["system.mem_total_bytes"]
    assert not {"shm-too-small", "cpu-oversubscribed"} & set(findings_by_id(report))


@needs_root_unshare
def test_small_dev_shm_is_found():
    """A 64 MiB tmpfs on /dev/shm in a private mount namespace (Docker's default size)."""
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m not permitted: {probe.stderr.decode()[:200]}")
    report = run_cli("system", clean_env(), prefix=("unshare", "-m", "sh", "-c",
                     'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$0" "$@"'))
    assert probe_facts(report, "system")["system.shm_total_bytes"] == 64 * 1024 * 1024
    finding = findings_by_id(report)["shm-too-small"]
    assert "/dev/shm is 64.0 MiB (64.0 MiB free), below 512 MiB" in finding["evidence"][0]["detail"]
    assert finding["evidence"][0]["facts"]["system.shm_total_bytes"] == 64 * 1024 * 1024


@needs_root_unshare
def test_full_dev_shm_is_found(tmp_path):
    """A 600 MiB /dev/shm with 200 MiB left: big enough, but nearly full."""
    script = ('mount -t tmpfs -o size=600m tmpfs /dev/shm && '
              'dd if=/dev/zero of=/dev/shm/fill bs=1M count=400 status=none && exec "$0" "$@"')
    report = run_cli("system", clean_env(), prefix=("unshare", "-m", "sh", "-c", script))
    finding = findings_by_id(report)["shm-too-small"]
    assert "only 200.0 MiB free in /dev/shm (size 600.0 MiB)" in finding["evidence"][0]["detail"]


def test_omp_threads_times_ranks_exceed_cores():
    """OMPI reports USABLE+1 ranks on this node, each with OMP_NUM_THREADS=2."""
    ranks = USABLE + 1
    env = clean_env(OMPI_COMM_WORLD_LOCAL_SIZE=str(ranks), OMP_NUM_THREADS="2")
    report = run_cli("system", env)
    finding = findings_by_id(report)["cpu-oversubscribed"]
    assert f"{ranks} ranks x OMP_NUM_THREADS=2 (+ workers) = {2 * ranks} threads on {USABLE} usable CPUs" \
        in finding["evidence"][0]["detail"]


@pytest.mark.skipif(shutil.which("taskset") is None or USABLE < 2, reason="needs taskset and 2 CPUs")
def test_cpu_affinity_limits_usable_cores():
    """Two local ranks with one thread each fit 2 CPUs but not the 1 CPU taskset leaves."""
    env = clean_env(LOCAL_WORLD_SIZE="2", OMP_NUM_THREADS="1")
    assert "cpu-oversubscribed" not in findings_by_id(run_cli("system", env, prefix=("taskset", "-c", "0,1")))
    report = run_cli("system", env, prefix=("taskset", "-c", "0"))
    assert probe_facts(report, "system")["system.cpus_usable"] == 1
    assert "2 ranks x OMP_NUM_THREADS=1 (+ workers) = 2 threads on 1 usable CPUs" in \
        findings_by_id(report)["cpu-oversubscribed"]["evidence"][0]["detail"]


def test_omp_unset_under_launcher(probe_and_judge):
    result, findings = probe_and_judge("system", clean_env(LOCAL_WORLD_SIZE="2"))
    per_rank = result.facts["system.threads_per_rank"]
    if 2 * per_rank <= USABLE:
        pytest.skip("one thread per core does not oversubscribe on this machine")
    assert "OMP_NUM_THREADS unset: 2 ranks" in findings["cpu-oversubscribed"].evidence[0].detail


def test_dataloader_workers_exceed_cores(probe_and_judge):
    result, findings = probe_and_judge("system", clean_env(OMP_NUM_THREADS="1"), {"nproc": 2, "num_workers": USABLE})
    assert result.facts["system.worker_processes"] == 2 * (1 + USABLE)
    details = [e.detail for e in findings["cpu-oversubscribed"].evidence]
    assert any(f"2 ranks x (1 + {USABLE} workers) = {2 * (1 + USABLE)} processes" in d for d in details), details


def test_diagnosis_nproc_alone_is_not_an_alarm(probe_and_judge):
    """--nproc sizes the diagnosis's own world; without OMP/workers it says nothing about the user's job."""
    result, findings = probe_and_judge("system", clean_env(), {"nproc": 2})
    assert result.facts["system.local_ranks_source"] == "option"
    assert "cpu-oversubscribed" not in findings
