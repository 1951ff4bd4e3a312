"""Crash, device, build and launch-argument failures are recognised by family: several torch/CUDA/ROCm
generations and launchers say the same thing in different words, and each wording reaches one finding."""

from __future__ import annotations

import io

import pytest

from tests.logs.helpers import analyse, shown, torchrun_summary
from troubleshooter.core.yamlspan import load_text
from troubleshooter.logs import LogAnalyzer
from troubleshooter.logs.signatures import compile_signatures, validate_signature_file


def _report(rules, text: str) -> tuple[str | None, list[str]]:
    """(root cause id, ids shown as warning/error) for a log given as text."""
    facts = analyse(rules, text)
    return (facts.get("log.root_cause") or {}).get("id"), shown(rules, facts)


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


def test_the_teardown_of_killed_ranks_is_read_from_the_rules(rules):
    """Which summary lines are a rank's exit is rule data (a ``teardown`` context signature): without
    it the -9 torchrun sends a surviving rank reads as a second failure; with it, as the teardown echo."""
    text = ('Traceback (most recent call last):\n  File "/w/train.py", line 4, in <module>\n    main()\n'
            "ValueError: bad shape\n" + torchrun_summary(0, killed=((1, 9),)))
    compiled = compile_signatures(rules.signatures)
    assert any(s.teardown for s in compiled)
    with_rule = LogAnalyzer(signatures=compiled)
    without = LogAnalyzer(signatures=[s for s in compiled if not s.teardown])
    for analyzer in (with_rule, without):
        analyzer.feed_file(io.BytesIO(text.encode()), "job.log")
    assert "log.out-of-memory" not in with_rule.facts()
    assert {h["id"] for h in with_rule.facts()["log.suppressed"]} >= {"out-of-memory"}
    assert "log.out-of-memory" in without.facts()


def test_teardown_applies_only_to_context_signatures(rules):
    text = """group: g
signatures:
  - id: x
    finding: rank-crashed
    priority: 50
    teardown: true
    pattern: 'boom'
    note: n
"""
    problems = list(validate_signature_file(load_text(text), known_findings=rules.findings))
    assert any(p[0] == 6 and "'teardown' only applies to context signatures" in p[1] for p in problems), problems
