"""Horovod says the things torch says in its own words: an NCCL call that failed ("ncclAllReduce failed:
unhandled cuda error", where torch writes "NCCL error in: ..."), a collective used before initialisation
("Horovod has not been initialized; use hvd.init()"), and ranks waiting on a collective the others never
submitted (the stall inspector). Under horovodrun/mpirun every line carries OpenMPI's "[1,r]<stderr>:"
prefix. The stall inspector's warning is advisory: healthy runs print it while one rank is slow to start,
so alone it raises no warning, and a crash on the missing rank is the root cause."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

STALL = (
    "[1,0]<stderr>:[2019-04-13 13:54:31.854655: W horovod/common/operations.cc:588] One or more tensors were"
    " submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks"
    " for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or"
    " that only subset of ranks is submitting tensors, which will cause deadlock.\n"
    "[1,0]<stderr>:Missing ranks:\n"
    "[1,0]<stderr>:1: [allreduce.fc.weight]\n"
)

WORDINGS = [
    ("horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error", "nccl-error"),
    ("[1,1]<stderr>:RuntimeError: ncclCommInitRank failed: invalid usage", "nccl-error"),
    ("[1]<stderr>:RuntimeError: ncclCommInitRank failed: internal error (run with NCCL_DEBUG=INFO for details)",
     "nccl-error"),
    ("[1,0]<stderr>:ValueError: Horovod has not been initialized; use hvd.init().", "process-group-not-initialized"),
    ("AssertionError: Process group is not initialized", "process-group-not-initialized"),
]


@pytest.mark.parametrize(("text", "expected"), WORDINGS)
def test_horovods_wordings_name_the_same_failures_as_torchs(rules, text, expected):
    root, _shown = root_and_shown(rules, text)
    assert root == expected


def test_a_stall_warning_alone_raises_no_warning(rules):
    root, shown = root_and_shown(rules, STALL)
    assert root is None and shown == []


def test_a_crash_on_the_missing_rank_outranks_the_stall_warning(rules):
    crash = "[1,1]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total capacity)\n"
    root, _shown = root_and_shown(rules, crash + STALL)
    assert root == "out-of-memory"


def test_a_finished_nccl_call_is_not_a_failure(rules):
    root, shown = root_and_shown(rules, "[1,0]<stdout>:ncclAllReduce done: 24 tensors, 96 MB\n")
    assert root is None and shown == []
