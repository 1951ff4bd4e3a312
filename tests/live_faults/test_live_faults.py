"""A fast subset of the live faults (bench/live_faults.py runs them all): real injection, real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .faults import FAULTS, missing_prerequisite, verdict

BY_NAME = {fault.name: fault for fault in FAULTS}
FAST = ["master-port-bound", "master-addr-unresolvable", "gloo-ifname-missing", "rank-ge-world-size", "rank-ge-world-size-probe",
        "omp-unset-probe", "omp-empty-probe", "shm-small-probe", "netns-nothing-listens", "netns-route-prohibited", "netns-ifname-down"]
SLOW = ["stuck-rank-stall", "gloo-ifname-missing-job"]  # torchrun jobs under `troubleshoot run`


def _case(name: str, *marks):
    fault = BY_NAME[name]
    if fault.netns:
        marks = (*marks, pytest.mark.netns)
    return pytest.param(fault, id=name, marks=marks)


@pytest.mark.parametrize("fault", [_case(n) for n in FAST] + [_case(n, pytest.mark.slow) for n in SLOW])
def test_live_fault_is_diagnosed(fault, tmp_path):
    if reason := missing_prerequisite(fault):
        pytest.skip(reason)
    outcome = fault.diagnose(tmp_path, False)
    passed, why = verdict(fault, outcome)
    stderr = sorted(tmp_path.rglob("stderr.txt"))
    assert passed, f"{why}\ncommand: {outcome.command}\n{stderr[0].read_text()[-1500:] if stderr else ''}"


def test_nccl_on_cpu_torch_rank_worker_does_not_crash(tmp_path):
    """The rank worker must not call torch.cuda.set_device on a CPU-only torch (AttributeError: _cuda_setDevice)."""
    outcome = BY_NAME["nccl-on-cpu-auto"].diagnose(tmp_path, False)
    passed, why = verdict(BY_NAME["nccl-on-cpu-auto"], outcome)
    assert passed, why
    assert "_cuda_setDevice" not in json.dumps(outcome.report)


def test_fault_ids_are_in_the_catalog():
    findings = Path(__file__).resolve().parents[2] / "rules" / "findings"
    for fault in FAULTS:
        for ident in (*fault.expected, *fault.extra):
            assert (findings / f"{ident}.yaml").exists(), (fault.name, ident)


# Logs captured from the live faults above (frame lines dropped, script paths neutralised): the diagnosis
# of each must not regress while the signatures change.
CAPTURED = {"master-addr-unresolvable.torchrun.log": "master-addr-unresolvable",
            "gloo-ifname-missing.torchrun.log": "wrong-network-interface",
            "nccl-on-cpu.torchrun.log": "backend-unavailable"}


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_captured_live_log_is_diagnosed(name, tmp_path):
    report = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "troubleshooter", "logs", str(Path(__file__).parent / "logs" / name),
                           "--format", "json", "-o", str(report)], capture_output=True, text=True, timeout=60)
    doc = json.loads(report.read_text())
    first = next(f for f in doc["findings"] if f["severity"] in ("error", "warning"))
    assert first["id"] == CAPTURED[name], [f["id"] for f in doc["findings"]]
    assert proc.returncode == 1
