"""The parity probe through the real CLI on a 2-rank gloo world: one user module per injected fault.

The factories live in tests/data/parity/parity_models.py; each run is
``troubleshoot --auto --probe parity --model parity_models:NAME --format json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
MODELS = Path(__file__).resolve().parents[1] / "data" / "parity"


def run(tmp_path: Path, *args: str) -> dict:
    """``troubleshoot --auto --probe parity ARGS`` with the test factories importable; the JSON report."""
    out = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(MODELS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "troubleshooter", "--auto", "--nproc", "2", "--backend", "gloo",
                           "--probe", "parity", *args, "--format", "json", "-o", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(out.read_text())
    statuses = {p["rank"]: p["status"] for p in report["probes"] if p["name"] == "parity"}
    assert set(statuses) == {0, 1} and "error" not in statuses.values(), report["probes"]
    return report


def findings(report: dict) -> dict[str, dict]:
    return {f["id"]: f for f in report["findings"]}


def details(report: dict, finding_id: str) -> str:
    found = findings(report)
    assert finding_id in found, f"{finding_id} missing; findings: {sorted(found)}"
    return " | ".join(e["detail"] for e in found[finding_id]["evidence"])


def parity_facts(report: dict) -> dict:
    return next(p["facts"] for p in report["probes"] if p["name"] == "parity" and p["rank"] == 0)


def test_healthy_model_reports_nothing(tmp_path):
    report = run(tmp_path, "--model", "parity_models:healthy")
    assert findings(report) == {}
    facts = parity_facts(report)
    assert facts["parity.reference_compared"] is True
    assert facts["parity.update_rel_err"] < facts["parity.tolerance"]
    assert facts["parity.grads_differ"] == [] and facts["parity.params_differ"] == []


def test_layer_created_after_wrap_with_per_rank_seed(tmp_path):
    report = run(tmp_path, "--model", "parity_models:created_after_wrap")
    text = details(report, "unsynced-init-seed")
    assert "head.weight" in text and "ranks agree as [[0], [1]]" in text, text
    assert findings(report)["unsynced-init-seed"]["severity"] == "error"
    assert "single-process-mismatch" not in findings(report)


def test_batchnorm_statistics_differ(tmp_path):
    report = run(tmp_path, "--model", "parity_models:batchnorm")
    text = details(report, "batchnorm-not-synced")
    assert "norm.running_mean" in text and "differs from one process" in text, text
    assert set(findings(report)) == {"batchnorm-not-synced"}


def test_buffer_changed_in_place_is_named(tmp_path):
    report = run(tmp_path, "--model", "parity_models:buffer_inplace")
    text = details(report, "replicas-diverge")
    assert "input_ema (Ema)" in text and "max abs diff" in text, text
    assert "input_ema" in findings(report)["replicas-diverge"]["title"]


def test_declared_per_rank_buffer_is_info_only(tmp_path):
    report = run(tmp_path, "--model", "parity_models:buffer_declared")
    assert findings(report) == {}
    assert parity_facts(report)["parity.legit_differ"] == ["input_ema"]


def test_rules_overlay_declares_a_per_rank_buffer(tmp_path):
    """A --rules overlay's parity.may_differ reaches the probe on every rank, like a model's own declaration."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "expectations.yaml").write_text("parity:\n  may_differ: ['input_ema']\n")
    report = run(tmp_path, "--model", "parity_models:buffer_inplace", "--rules", "overlay")
    assert findings(report) == {}
    assert parity_facts(report)["parity.legit_differ"] == ["input_ema"]


def test_loss_divided_by_world_size(tmp_path):
    report = run(tmp_path, "--model", "parity_models:loss_scaled_by_world")
    text = details(report, "world-size-scaling-error")
    assert "is 0.5x the single-process one" in text and "with 2 ranks" in text, text
    assert "single-process-mismatch" not in findings(report)


def test_layerdrop_with_per_rank_random_stream(tmp_path):
    report = run(tmp_path, "--model", "parity_models:layerdrop_per_rank_rng")
    assert "hidden ran on some ranks only" in details(report, "unsynced-dropout-rng")
    assert parity_facts(report)["parity.reference_compared"] is False


def test_allreduce_that_returns_different_results(tmp_path):
    report = run(tmp_path, "--model", "parity_models:corrupt_allreduce")
    text = details(report, "collective-wrong-result")
    assert "inp.weight" in text and "max abs diff 1" in text, text
    assert "replicas-diverge" not in findings(report)


def test_loader_without_distributed_sampler(tmp_path):
    report = run(tmp_path, "--model", "parity_models:healthy", "--data", "parity_models:loader_no_sampler")
    text = details(report, "missing-distributed-sampler")
    assert "RandomSampler: 100% of the samples" in text and "[64, 64]" in text, text


def test_sharded_loader_is_quiet(tmp_path):
    report = run(tmp_path, "--model", "parity_models:healthy", "--data", "parity_models:loader_sharded")
    assert findings(report) == {}
    facts = parity_facts(report)
    assert facts["parity.shard_overlap_fraction"] == 0.0 and facts["parity.shard_coverage"] == 1.0
    assert facts["parity.epoch_order_repeats"] is True and facts["parity.set_epoch_changes_order"] is True


def test_frozen_shuffle_order(tmp_path):
    report = run(tmp_path, "--model", "parity_models:healthy", "--data", "parity_models:loader_frozen_order")
    assert "FrozenShuffle yields the same shuffled order" in details(report, "missing-set-epoch")
    assert "missing-distributed-sampler" not in findings(report)


def test_script_without_set_epoch_is_confirmed_by_measurement(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, DistributedSampler
        from parity_models import _dataset

        data = _dataset()
        sampler = DistributedSampler(data, shuffle=True)
        loader = DataLoader(data, batch_size=8, sampler=sampler)
        for epoch in range(3):
            for x, y in loader:
                pass
        """))
    report = run(tmp_path, "--model", "parity_models:healthy", "--data", "parity_models:loader_sharded",
                 "--script", str(script))
    evidence = findings(report)["missing-set-epoch"]["evidence"]
    assert any("measured: DistributedSampler yields the same shuffled order" in e["detail"] for e in evidence), evidence


def test_branch_that_never_trains(tmp_path):
    report = run(tmp_path, "--model", "parity_models:unused_branch")
    assert "aux.weight, aux.bias" in details(report, "parameters-never-trained")
    assert set(findings(report)) == {"parameters-never-trained"}


def test_sum_reduced_loss_is_a_world_size_factor(tmp_path):
    report = run(tmp_path, "--model", "parity_models:loss_sum_reduced")
    assert "is 0.5x the single-process one" in details(report, "world-size-scaling-error")


def test_dropout_streams_are_measured_not_judged(tmp_path):
    same = parity_facts(run(tmp_path, "--model", "parity_models:healthy"))
    report = run(tmp_path, "--model", "parity_models:dropout_per_rank_seed")
    assert same["parity.rng_shared_across_ranks"] is True
    assert parity_facts(report)["parity.rng_shared_across_ranks"] is False
    assert parity_facts(report)["parity.random_beyond_dropout"] is False
    assert findings(report) == {}  # different dropout masks per rank are normal under DDP
