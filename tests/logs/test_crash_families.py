"""Crash, device, build and launch-argument failures are recognised by family: several torch/CUDA/ROCm
generations and launchers say the same thing in different words, and each wording reaches one finding."""

from __future__ import annotations

import pytest

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.logs import LogAnalyzer


def _report(rules, text: str) -> tuple[str | None, list[str]]:
    """(root cause id, ids shown as warning/error) for a log given as text."""
    analyzer = LogAnalyzer(rules)
    for line in text.strip("\n").splitlines():
        analyzer.feed(line + "\n", "job.log")
    facts = analyzer.facts()
    findings = evaluate(rules, Observations(Facts.from_dict(facts, "logs")))
    return (facts.get("log.root_cause") or {}).get("id"), [f.id for f in findings if f.severity in ("error", "warning")]


# A build without kernels for the GPU: torch's start-up warning, the CUDA runtime and driver-API errors,
# and ROCm's start-up abort and first-kernel error.
GPU_ARCH = [
    "NVIDIA GeForce RTX 3060 with CUDA capability sm_86 is not compatible with the current PyTorch installation.",
    "GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMath.cu line=244 error=48 : "
    "no kernel image is available for execution on the device",
    "CUDA_ERROR_NO_BINARY_FOR_GPU",
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
    'ERROR："hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
    "RuntimeError: HIP error: invalid device function",
]


@pytest.mark.parametrize("line", GPU_ARCH)
def test_missing_kernels_for_the_gpu_are_one_family(rules, line):
    root, shown = _report(rules, line)
    assert root == "gpu-arch-unsupported"
    assert shown[0] == "gpu-arch-unsupported"
