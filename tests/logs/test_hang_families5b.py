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


@pytest.mark.parametrize("text", WATCHDOG_WORDINGS)
def test_watchdog_timeout_wordings_are_a_collective_timeout(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "collective-timeout"
    assert shown[0] == "collective-timeout"


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


def test_a_native_crash_with_no_timeout_before_it_stays_a_native_crash(rules):
    root, _ = root_and_shown(rules, "step 120 loss 2.31\nSegmentation fault (core dumped)")
    assert root == "native-crash"


def test_a_crash_before_the_timeout_is_still_the_cause(rules):
    text = ("[rank1]: Traceback (most recent call last):\n"
            "[rank1]:   File \"train.py\", line 88, in <module>\n"
            "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
            "capacity of 79.15 GiB of which 1.02 GiB is free.\n" + TIMEOUT + "\nAborted (core dumped)")
    root, shown = root_and_shown(rules, text)
    assert root == "out-of-memory"
    assert shown[0] == "out-of-memory"


def test_a_timeout_far_above_the_crash_does_not_explain_it(rules):
    filler = "\n".join(f"epoch 2 step {i} loss 1.0" for i in range(200))
    root, _ = root_and_shown(rules, TIMEOUT + "\n" + filler + "\nSegmentation fault (core dumped)")
    assert root == "native-crash"


@pytest.mark.parametrize("line", [
    "RuntimeError: Rank 0 successfully reached monitoredBarrier, but received errors while waiting for send/recv "
    "from rank 1. Please check rank 1 logs for faulty rank.",
    "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting to be unblocked "
    "by rank 0. Please check rank 0 logs for faulty rank.",
])
def test_monitored_barrier_peer_errors_name_the_crashed_rank_in_both_directions(rules, line):
    root, shown = root_and_shown(rules, line)
    assert root == "rank-crashed"
    assert shown[0] == "rank-crashed"


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
def test_a_timeout_after_the_run_finished_is_a_collective_only_some_ranks_run(rules, finished):
    root, shown = root_and_shown(rules, finished + "\n" + TIMEOUT + "\nAborted (core dumped)")
    assert root == "collective-mismatch"
    assert shown[0] == "collective-mismatch"


@pytest.mark.parametrize("finished", RUN_FINISHED)
def test_a_finished_run_alone_is_clean(rules, finished):
    root, shown = root_and_shown(rules, "epoch 19 loss 0.12\n" + finished)
    assert root is None and shown == []


def test_a_timeout_before_the_end_of_training_stays_a_timeout(rules):
    root, _ = root_and_shown(rules, TIMEOUT + "\n`Trainer.fit` stopped: `max_epochs=20` reached.")
    assert root == "collective-timeout"


@pytest.mark.parametrize("stop", [
    "srun: error: node001: task 0: Terminated",
    "[rank: 0] Received SIGTERM: 15",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -15) local_rank: 0 (pid: 4242) of binary: /usr/bin/python",
])
def test_a_stop_right_after_a_phase_that_ran_the_default_timeout_is_the_timeout(rules, stop):
    bar = "Preparing test set...:  46%|####6     | 31/67 [29:02<35:12, 58.67s/it]"
    root, _ = root_and_shown(rules, bar + "\n" + stop)
    assert root == "collective-timeout"


def test_a_stop_after_a_short_phase_is_not_a_timeout(rules):
    bar = "Preparing test set...:  46%|####6     | 31/67 [03:02<05:12, 5.86s/it]"
    root, _ = root_and_shown(rules, bar + "\nsrun: error: node001: task 0: Terminated")
    assert root != "collective-timeout"
