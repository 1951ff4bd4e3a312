"""A torch build without kernels for the GPU, however the paste kept torch's warning.

torch >= 1.8 warns in three lines (the GPU "with CUDA capability sm_NN is not compatible with the current
PyTorch installation", the capabilities the build supports, "If you want to use the <GPU> GPU with
PyTorch ..."), and Python echoes the warnings.warn source line under them. Issue threads keep any one of
them, or re-wrap them at another width so that "with CUDA capability" and "sm_NN" land on different lines
(guoqincode/Open-AnimateAnyone#114); torch <= 1.7 said it as "Found GPU0 ... which requires CUDA_VERSION >=
N", wrapped over four lines. Each is the same diagnosis."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

ARCH_WARNINGS = [
    # torch 2.x's warning re-wrapped by the paste: the capability and "is not compatible" on separate lines
    """NVIDIA H100 PCIe with CUDA capability
sm_90 is not compatible with the current PyTorch installation.
The current PyTorch
install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.
""",
    # only the third line and Python's echo of the source kept
    """/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:104: UserWarning:
If you want to use the GeForce RTX 3090 GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/

  warnings.warn(incompatible_device_warn.format(device_name, capability, " ".join(arch_list), device_name))
""",
    # torch <= 1.7's wording, wrapped over four lines by warnings.warn itself
    """/home/user/env/lib/python3.5/site-packages/torch/cuda/__init__.py:89: UserWarning:
    Found GPU0 Tesla V100-SXM2-16GB which requires CUDA_VERSION >= 9000 for
     optimal performance and fast startup time, but your PyTorch was compiled
     with CUDA_VERSION 8000. Please install the correct PyTorch binary
     using instructions from http://pytorch.org
""",
    # the whole warning on one line each, under torchrun's rank prefix
    """[rank1]: UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
[rank1]: The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
""",
]


@pytest.mark.parametrize("text", ARCH_WARNINGS)
def test_every_wording_of_the_arch_warning_is_an_unsupported_gpu(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("gpu-arch-unsupported", ["gpu-arch-unsupported"])


def test_the_capability_alone_on_its_line_says_nothing(rules):
    root, _shown = root_and_shown(rules, "Device 0: NVIDIA H100 PCIe with CUDA capability 9.0\n")
    assert root != "gpu-arch-unsupported"
