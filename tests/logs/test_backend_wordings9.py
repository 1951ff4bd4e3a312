"""A torch build without the backend it was asked for is one family across torch's generations: the
c10d wording ("Distributed package doesn't have NCCL built in") and torch 0.3/0.4's THD wording ("the
distributed NCCL backend is not available; try to recompile the THD package ..."), whole or cut at the
semicolon. Talk of a backend in other words (a hint to pick one, an availability check that printed
False) is none of it."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

BUILT_WITHOUT = [
    "RuntimeError: Distributed package doesn't have NCCL built in",
    "RuntimeError: the distributed NCCL backend is not available; try to recompile the THD package with CUDA and"
    " NCCL 2+ support at /home/user/pytorch/torch/lib/THD/process_group/General.cpp:17",
    "RuntimeError: the distributed MPI backend is not available; try to recompile the THD package with MPI support",
    "RuntimeError: the distributed NCCL backend is not available",
]


@pytest.mark.parametrize("text", BUILT_WITHOUT)
def test_a_build_without_the_backend_is_backend_unavailable_in_either_generation_of_wording(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "backend-unavailable"


NOT_IT = [
    "INFO: the distributed backend is chosen from the device type",
    "nccl available: False (this is expected on a CPU-only host)",
]


@pytest.mark.parametrize("text", NOT_IT)
def test_other_talk_of_backends_is_not_a_missing_build(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root != "backend-unavailable"
