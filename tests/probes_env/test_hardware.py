"""Hardware probe: the CPU-only truth without GPUs; backend and precision requests judged against the build."""

from __future__ import annotations

import pytest

from .conftest import ENV_FINDINGS, clean_env, findings_by_id, probe_facts, run_cli

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

HAS_CUDA = torch.cuda.is_available()


@pytest.fixture(scope="module")
def cpu_report():
    """One CLI run of the hardware probe on this machine."""
    return run_cli("hardware", clean_env())


def test_reports_the_build_and_nothing_false(cpu_report):
    facts = probe_facts(cpu_report, "hardware")
    assert facts["hw.torch_version"] == torch.__version__
    assert facts["hw.gloo_available"] is dist.is_gloo_available()
    assert facts["hw.nccl_available"] is dist.is_nccl_available()
    assert facts["hw.gpu_count"] == (torch.cuda.device_count() if HAS_CUDA else 0)
    if not HAS_CUDA:
        assert facts["hw.cuda_available"] is False and facts["hw.gpus"] == []
        assert facts["hw.recommended_precision"] == "fp32" and facts["hw.default_backend"] == "gloo"
        assert "no GPU visible" in cpu_report["probes"][0]["message"]
    assert not set(findings_by_id(cpu_report)) & set(ENV_FINDINGS)


@pytest.mark.skipif(dist.is_nccl_available() and HAS_CUDA, reason="NCCL is usable here")
def test_nccl_requested_where_it_cannot_work():
    report = run_cli("hardware", clean_env(), "--backend", "nccl")
    finding = findings_by_id(report)["backend-unavailable"]
    details = [e["detail"] for e in finding["evidence"]]
    if not dist.is_nccl_available():
        assert f"backend nccl requested but torch {torch.__version__} was built without it" in details
    else:
        assert "backend nccl requested but no GPU is visible to this process" in details


def test_gloo_requested_is_fine(probe_and_judge):
    _, findings = probe_and_judge("hardware", clean_env(), {"backend": "gloo"})
    assert "backend-unavailable" not in findings


@pytest.mark.skipif(HAS_CUDA, reason="needs a machine without GPU")
def test_fp16_asked_without_gpu():
    report = run_cli("hardware", clean_env(ACCELERATE_MIXED_PRECISION="fp16"))
    finding = findings_by_id(report)["precision-unsupported"]
    assert "fp16 asked for (ACCELERATE_MIXED_PRECISION) but no GPU is visible" in finding["evidence"][0]["detail"]


def test_bf16_on_cpu_is_not_an_alarm(probe_and_judge):
    result, findings = probe_and_judge("hardware", clean_env(ACCELERATE_MIXED_PRECISION="bf16"))
    assert result.facts["hw.requested_precision"] == "bf16"
    if not HAS_CUDA:
        assert "precision-unsupported" not in findings


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
def test_local_rank_beyond_visible_gpus(probe_and_judge):
    n = torch.cuda.device_count()
    _, findings = probe_and_judge("hardware", clean_env(LOCAL_RANK=str(n)))
    assert f"LOCAL_RANK={n} but only {n} GPU(s) visible" in findings["local-rank-exceeds-devices"].evidence[0].detail


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
def test_bf16_below_ampere(probe_and_judge):
    result, findings = probe_and_judge("hardware", clean_env(), {"precision": "bf16"})
    if result.facts["hw.min_compute_capability"] >= 8.0:
        assert "precision-unsupported" not in findings
    else:
        assert "bf16 asked for (option)" in findings["precision-unsupported"].evidence[0].detail
