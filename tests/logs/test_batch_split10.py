"""A global batch that the number of processes does not divide is batch-size-mismatch in Accelerate's
words too, in each of its releases' spellings (DataLoader, BatchSamplerShard, the older split_batches=True
message). A batch size merely printed next to the process count is not a failure."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

NOT_DIVISIBLE = [
    "ValueError: To use a `DataLoader` in `split_batches` mode, the batch size (8) needs to be a round multiple of"
    " the number of processes (3).",
    "ValueError: To use `BatchSamplerShard` in `split_batches` mode, the batch size (10) needs to be a round"
    " multiple of the number of processes (4).",
    "ValueError: Using `split_batches=True` requires that the batch size (8) to be a round multiple of the number of"
    " processes (3).",
]


@pytest.mark.parametrize("text", NOT_DIVISIBLE)
def test_a_batch_the_processes_do_not_divide_is_batch_size_mismatch(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "batch-size-mismatch"


def test_a_batch_size_printed_with_the_process_count_is_not_a_failure(rules):
    root, shown = root_and_shown(rules, "INFO - Distributed environment: MULTI_GPU  Num processes: 3  batch size (24)\n")
    assert root is None and shown == []
