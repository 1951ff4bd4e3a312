"""ProcessGroupNCCL's fatal abort line (torch 2.5+), alone or after the failure it follows.

Since torch 2.5 a rank whose watchdog saw a collective timeout or an NCCL error, or whose watchdog itself
hung, ends on a fatal line: "Terminating the process after attempting to dump debug info, due to
collective timeout or exception." / "... due to ProcessGroupNCCL watchdog hang.". A log cut to that line
still shows a collective that failed or timed out, never a clean run; any failure stated before it (the
timeout itself, another rank's OOM) stays the cause."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

PREFIX = "[rank1]:[F1023 02:54:30.942078991 ProcessGroupNCCL.cpp:1557] [PG ID 0 PG GUID 0(default_pg) Rank 1] " \
         "[PG ID 0 PG GUID 0(default_pg) Rank 1] Terminating the process after attempting to dump debug info, due to "

ABORTS = [
    PREFIX + "collective timeout or exception.",
    PREFIX + "ProcessGroupNCCL watchdog hang.",
    "[rank1]:[E1023 02:44:30.942078991 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013"
    " milliseconds before timing out.\n" + PREFIX + "collective timeout or exception.",
]


@pytest.mark.parametrize("text", ABORTS)
def test_the_fatal_abort_line_is_a_collective_that_failed_or_timed_out(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("collective-timeout", ["collective-timeout"])


def test_a_failure_before_the_abort_stays_the_cause(rules):
    text = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
            + PREFIX + "collective timeout or exception.")
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"
