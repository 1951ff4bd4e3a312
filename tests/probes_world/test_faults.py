"""Fault tests: create the real condition in a 2-rank world, run the real CLI, assert on the JSON report.

Each run carries a unique marker in its environment so the test can prove that no process of that
run (the CLI or any rank) is left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.slow


def run_cli(tmp_path: Path, args: list[str], modules: dict[str, str], timeout: float = 120) -> tuple[dict, float]:
    """Write ``modules`` into tmp_path, run ``troubleshoot --auto ARGS`` there, return (report, seconds)."""
    for name, source in modules.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    marker = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "TS_FAULT_TEST": marker}
    out = tmp_path / "r.json"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "troubleshooter", "--auto", *args, "--format", "json", "-o", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - started
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    time.sleep(0.2)
    left = [p.pid for p in psutil.process_iter() if _has_marker(p, marker)]
    assert not left, f"processes left behind: {left}"
    return json.loads(out.read_text()), took


def _has_marker(proc, marker: str) -> bool:
    try:
        return proc.environ().get("TS_FAULT_TEST") == marker
    except (psutil.Error, OSError):
        return False


def evidence(report: dict, finding_id: str) -> list[dict]:
    """Evidence items of ``finding_id`` (fails listing the findings present when it is absent)."""
    found = {f["id"]: f for f in report["findings"]}
    assert finding_id in found, f"{finding_id} missing; findings: {sorted(found)}"
    return found[finding_id]["evidence"]


SLEEPY_FACTORY = """
    import os, time, torch
    def build():
        if os.environ.get("RANK") == "1":
            time.sleep(120)
        return torch.nn.Linear(8, 8)
    """


def test_rank_sleeping_past_timeout_is_named_and_reaped(tmp_path):
    report, took = run_cli(tmp_path, ["--probe", "placement", "--timeout", "6", "--model", "sleepy:build"],
                           {"sleepy": SLEEPY_FACTORY})
    assert took < 60
    assert report["facts"]["world.stuck_ranks"] == [1]
    details = [e["detail"] for e in evidence(report, "collective-timeout")]
    assert any("rank 1 did not arrive (stuck in placement:build-model)" in d for d in details), details
    statuses = {(p["name"], p["rank"]): p["status"] for p in report["probes"]}
    assert statuses[("placement", 1)] == "timeout"


SLEEPER_PROBE = """
    import os, time
    from troubleshooter.core.probe import RANK, Probe

    class SleeperProbe(Probe):
        id = "sleeper"; scope = RANK; timeout_s = 60.0; order = 1; default = False
        def run(self, ctx):
            ctx.phase("sleep")
            if ctx.rank == 1:
                time.sleep(6)
            return self.result()
    """


def test_monitored_barrier_names_the_late_rank(tmp_path):
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "sleeper.py").write_text(textwrap.dedent(SLEEPER_PROBE))
    report, _ = run_cli(tmp_path, ["--probes", str(probes), "--probe", "sleeper", "--probe", "collective",
                                   "--timeout", "12"], {})
    rank0 = next(p for p in report["probes"] if p["name"] == "collective" and p["rank"] == 0)
    assert rank0["facts"]["collective.missing_ranks"] == [1]
    details = [e["detail"] for e in evidence(report, "collective-timeout")]
    assert any("rank(s) 1 did not reach the monitored barrier" in d for d in details), details


def test_slow_rank_each_step_is_the_straggler(tmp_path):
    slow = """
        import os, time, torch
        class Slow(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Linear(64, 64)
                self.example_input_array = torch.randn(16, 64)
            def forward(self, x):
                if os.environ.get("RANK") == "1":
                    time.sleep(0.04)
                return self.body(x)
        def build():
            return Slow()
        """
    report, _ = run_cli(tmp_path, ["--probe", "trainstep", "--model", "slowstep:build"], {"slowstep": slow})
    items = evidence(report, "straggler-rank")
    assert {e["rank"] for e in items} == {1}, items
    rank0 = next(p for p in report["probes"] if p["name"] == "trainstep" and p["rank"] == 0)
    assert rank0["facts"]["trainstep.slowest_rank"] == 1
    assert 0.0 <= rank0["facts"]["trainstep.comm_exposed_fraction"] <= 1.0


def test_parameter_left_on_meta_is_a_device_mismatch_naming_the_module(tmp_path):
    meta = """
        import torch
        def build():
            model = torch.nn.Sequential()
            model.add_module("encoder", torch.nn.Linear(8, 8))
            model.add_module("head", torch.nn.Linear(8, 2))
            model.head.weight = torch.nn.Parameter(torch.empty(2, 8, device="meta"))
            model.example_input_array = torch.randn(4, 8)
            return model
        """
    report, _ = run_cli(tmp_path, ["--probe", "placement", "--model", "metamodel:build"], {"metamodel": meta})
    details = [e["detail"] for e in evidence(report, "device-mismatch")]
    assert any("parameter head.weight is on meta, expected cpu" in d for d in details), details


def test_slow_model_factory_is_the_slow_startup_phase(tmp_path):
    slow = """
        import time, torch
        def build():
            time.sleep(2.5)
            model = torch.nn.Linear(16, 16)
            model.example_input_array = torch.randn(4, 16)
            return model
        """
    report, _ = run_cli(tmp_path, ["--probe", "startup", "--model", "slowload:build"], {"slowload": slow})
    details = [e["detail"] for e in evidence(report, "slow-startup-phase")]
    assert any(d.startswith("model-load takes 2.") for d in details), details
    rank0 = next(p for p in report["probes"] if p["name"] == "startup" and p["rank"] == 0)
    assert [row["phase"] for row in rank0["details"]["table"]][:3] == ["init", "model-load", "to-device"]


def test_scaling_runs_on_every_rank_and_rank_0_reports(tmp_path):
    report, _ = run_cli(tmp_path, ["--probe", "scaling"], {}, timeout=240)
    runs = {p["rank"]: p for p in report["probes"] if p["name"] == "scaling"}
    assert set(runs) == {0, 1} and all(p["status"] in ("pass", "warn") for p in runs.values()), runs
    assert "scaling.efficiency" in runs[0]["facts"] and runs[1]["facts"] == {}
