"""No false alarms: the environment probes under `troubleshoot --auto` on this machine find nothing; each is fast."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import ENV_FINDINGS, clean_env

PROBES = ("launcher", "system", "tools", "hardware", "network")


@pytest.mark.slow
def test_auto_on_healthy_machine_reports_none_of_these(tmp_path):
    out = tmp_path / "auto.json"
    cmd = [sys.executable, "-m", "troubleshooter", "--auto", "--format", "json", "-o", str(out)]
    for name in PROBES:
        cmd += ["--probe", name]
    proc = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(out.read_text())
    ran = {p["name"]: p for p in report["probes"]}
    assert set(ran) == set(PROBES)
    assert all(p["status"] == "pass" for p in report["probes"]), [(p["name"], p["message"]) for p in report["probes"]]
    assert not {f["id"] for f in report["findings"]} & set(ENV_FINDINGS), report["findings"]


@pytest.mark.parametrize("name", PROBES)
def test_probe_own_work_under_one_second(name, probe_and_judge):
    if name == "hardware":
        import torch  # noqa: F401  (the import is measured apart, see bench/probes_env.py)
    result, findings = probe_and_judge(name, clean_env())
    assert result.duration_s < 1.0
    assert not set(findings) & set(ENV_FINDINGS)
