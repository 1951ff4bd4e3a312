"""Collective timeouts recognised by family (session 5, logs-hang5b).

The NCCL watchdog's timeout in the wordings real reports carry (the WorkNCCL spec wrapped onto the next
line, fields reordered, "ran for N ms"), and the process abort that is the watchdog's own takedown
(std::terminate on its what(), the shell's or a launcher's SIGABRT report after it): the abort follows
the timeout, so the timeout stays the diagnosis. Near misses keep their own meaning."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

# The watchdog phrase whose WorkNCCL(...) spec is not on its line, or not in torch's own field order.
WATCHDOG_WORDINGS = [
    "[Rank 0] Watchdog caught collective operation timeout:\n"
    "  WorkNCCL(..., OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)\n"
    "  ran for 1800090 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:523] Watchdog caught collective operation timeout:\n"
    "WorkNCCL(OpType=ALLREDUCE, SeqNum=458) ran for 1800600 ms before timing out.",
    "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.",
]


TIMEOUT = ("[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 milliseconds before timing out.")

# What a launcher, the shell or a signal handler prints when the watchdog takes the process down.
TAKEDOWN_REPORTS = [
    "terminate called after throwing an instance of 'std::runtime_error'\n"
    "  what():  [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
    "Timeout(ms)=1800000) ran for 1800895 milliseconds before timing out.\nAborted (core dumped)",
    TIMEOUT + "\nsrun: error: node1: task 0: Aborted (core dumped)",
    TIMEOUT + "\n./train.sh: line 12: 4242 Aborted                 python train.py",
    TIMEOUT + "\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 "
    "(pid: 886321) of binary: /usr/bin/python",
    TIMEOUT + "\n[node1:01234] *** Process received signal ***\n[node1:01234] Signal: Aborted (6)",
]


@pytest.mark.parametrize("text", TAKEDOWN_REPORTS)
def test_the_abort_after_a_watchdog_timeout_is_its_takedown(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "collective-timeout"
    assert "native-crash" not in shown


CRASH_BEFORE_THE_TIMEOUT = (
    "[rank1]: Traceback (most recent call last):\n"
    "[rank1]:   File \"train.py\", line 88, in <module>\n"
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free.\n" + TIMEOUT + "\nAborted (core dumped)")
# a timeout far above the crash does not explain it
TIMEOUT_FAR_ABOVE = (TIMEOUT + "\n" + "\n".join(f"epoch 2 step {i} loss 1.0" for i in range(200))
                     + "\nSegmentation fault (core dumped)")
# a monitored barrier's peer errors name the crashed rank, in both directions
MONITORED_BARRIER = [
    "RuntimeError: Rank 0 successfully reached monitoredBarrier, but received errors while waiting for send/recv "
    "from rank 1. Please check rank 1 logs for faulty rank.",
    "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting to be unblocked "
    "by rank 0. Please check rank 0 logs for faulty rank.",
]


# The log says the training loop ended; a collective timing out after that is one only some ranks run.
RUN_FINISHED = [
    "`Trainer.fit` stopped: `max_epochs=20` reached.",
    "`Trainer.fit` stopped: `max_steps=1000` reached.",
    "Training completed. Do not forget to share your model on huggingface.co/models =)",
    "Training time 2:41:07",
    "300 epochs completed in 12.345 hours.",
    "2021-05-04 10:00:00 | INFO | fairseq_cli.train | done training in 5311.4 seconds",
]


@pytest.mark.parametrize("finished", RUN_FINISHED)
def test_a_finished_run_alone_is_clean(rules, finished):
    root, shown = root_and_shown(rules, "epoch 19 loss 0.12\n" + finished)
    assert root is None and shown == []


# a stop right after a phase that ran the default timeout (30 minutes) is the timeout
LONG_PHASE = "Preparing test set...:  46%|####6     | 31/67 [29:02<35:12, 58.67s/it]"
STOPS = [
    "srun: error: node001: task 0: Terminated",
    "[rank: 0] Received SIGTERM: 15",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -15) local_rank: 0 (pid: 4242) of binary: "
    "/usr/bin/python",
]


def _rows(name: str, texts: list, want: str) -> list:
    return [pytest.param(text, want, id=f"{name}-{i}") for i, text in enumerate(texts)]


# A log and the root cause it must be, shown first.
ROOT_SHOWN_FIRST = [
    *_rows("watchdog-wording", WATCHDOG_WORDINGS, "collective-timeout"),
    pytest.param(CRASH_BEFORE_THE_TIMEOUT, "out-of-memory", id="crash-before-the-timeout"),
    *_rows("monitored-barrier", MONITORED_BARRIER, "rank-crashed"),
    # the log says the training loop ended: a collective timing out after that is one only some ranks run
    *_rows("timeout-after-run-finished", [finished + "\n" + TIMEOUT + "\nAborted (core dumped)"
                                          for finished in RUN_FINISHED], "collective-mismatch"),
]


@pytest.mark.parametrize(("text", "want"), ROOT_SHOWN_FIRST)
def test_each_log_has_its_root_cause_shown_first(rules, text, want):
    root, shown = root_and_shown(rules, text)
    assert root == want
    assert shown[0] == want


# A log and the root cause it must be.
ROOT_CAUSE = [
    pytest.param("step 120 loss 2.31\nSegmentation fault (core dumped)", "native-crash", id="native-crash-alone"),
    pytest.param(TIMEOUT_FAR_ABOVE, "native-crash", id="timeout-far-above-the-crash"),
    pytest.param(TIMEOUT + "\n`Trainer.fit` stopped: `max_epochs=20` reached.", "collective-timeout",
                 id="timeout-before-the-end-of-training"),
    *_rows("stop-after-a-long-phase", [LONG_PHASE + "\n" + stop for stop in STOPS], "collective-timeout"),
]


@pytest.mark.parametrize(("text", "want"), ROOT_CAUSE)
def test_each_log_has_its_root_cause(rules, text, want):
    assert root_and_shown(rules, text)[0] == want


def test_a_stop_after_a_short_phase_is_not_a_timeout(rules):
    bar = "Preparing test set...:  46%|####6     | 31/67 [03:02<05:12, 5.86s/it]"
    root, _ = root_and_shown(rules, bar + "\nsrun: error: node001: task 0: Terminated")
    assert root != "collective-timeout"
