"""torch <= 1.4's THC kernels said a cross-GPU mix of tensors in their own words ("arguments are located on
different GPUs at .../THC/...cu:N", raised as RuntimeError or, from old FFI extensions, torch.FatalError):
the same device-mismatch as today's "Expected all tensors to be on the same device"."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

LEGACY = [
    "RuntimeError: arguments are located on different GPUs at /pytorch/torch/lib/THC/generic/THCTensorMathBlas.cu:236",
    "RuntimeError: arguments are located on different GPUs at /py/conda-bld/pytorch_1490983232023/work/torch/lib/THC/"
    "generic/THCTensorIndex.cu:390",
    "torch.FatalError: arguments are located on different GPUs at aten/THC/THCGraclus.cu:31",
]


@pytest.mark.parametrize("text", LEGACY)
def test_thc_cross_gpu_arguments_are_device_mismatch(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "device-mismatch"
