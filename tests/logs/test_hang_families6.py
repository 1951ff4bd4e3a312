"""Hang and store families of session 6 (logs-hang6).

A timeout that ran out while one rank ran a phase alone.

When rank 0 validates, tokenizes or saves alone, the other ranks wait in their next collective; if
the phase outlasts the process-group timeout (60 s in YOLOv5's old DDP set-up, NCCL's 10 minutes, the
default 30 minutes, whatever the script set), the watchdog fires while rank 0's progress bar is still
drawing. The bar's running time then matches the timeout that ran out (the ``Timeout(ms)=`` of the
watchdog line, a store's "timed out after"), whatever that timeout is. Such a bar near the end of
its own loop is not an epoch that stalled at its end (uneven last batch), and a first collective
behind it is not a P2P hang. A bar whose running time has nothing to do with the timeout keeps the
epoch-end reading.

A store read that the store's host dropped. A rank setting up its NCCL communicator reads the unique id
from the TCPStore that rank 0 hosts; "Connection reset by peer", "Broken pipe" or an end of stream there
means rank 0 exited first (a crash of its own), not a network fault and not a timeout.

A log that ends while c10d still retries its connection to the store. Each attempt prints a warning (a
refusal, errno 111, while the master starts; Windows' "system error: 10049 - The requested address is not
valid in its context"); training after them means the retries were harmless, but a log whose last
start-up line is such a retry hung at the rendezvous.

NCCL lines cut where a terminal or a pasted report wrapped them: the InfiniBand completion error, the
socket-family warning and ProcessGroupNCCL's "NCCL error in:" keep their meaning without their tail.

Open MPI's TCP transport between hosts with several NICs: its help text for a failed connection to a peer
process, and an interface setting that names an interface or subnet a host lacks, are the interface; its
warning about InfiniBand ports sharing the default GID prefix is no failure."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, root_and_shown

# A bar that was still moving when the wait ran out: eval on rank 0 past a 60 s timeout (YOLOv5's old
# DDP set-up), tokenizing past NCCL's 10 minutes, a test-set pass past a 2-hour timeout, a gloo wait.
SINGLE_RANK_PHASE = [
    "     0/299     6.43G    0.0625   0.02412   0.01394        33       832: 100%|####| 89/89 [01:31<00:00,  1.03s/it]\n"
    "               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95:  96%|###  | 85/89 "
    "[01:07<00:05,  1.42s/it][E ProcessGroupNCCL.cpp:567] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(OpType=BROADCAST, Timeout(ms)=60000) ran for 69479 milliseconds before timing out.",
    "Running tokenizer on dataset:  97%|#########7| 291000/300000 [09:55<00:09, 489.57 examples/s]"
    "[rank2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600328 milliseconds "
    "before timing out.",
    "Evaluating: 92%|#########2| 4600/5000 [1:58:41<10:19,  1.55s/it]\n"
    "[rank1]:[E1121 10:02:11.123 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=9001, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=7200000) ran for 7200099 "
    "milliseconds before timing out.",
    "Validation DataLoader 0:  95%|#########5| 190/200 [29:40<00:31,  3.12s/it]\n"
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
    "for recv operation to complete",
]


@pytest.mark.parametrize("text", SINGLE_RANK_PHASE)
def test_a_bar_that_ran_as_long_as_the_timeout_is_not_an_epoch_end(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "collective-timeout"
    assert shown[0] == "collective-timeout"
    assert "uneven-last-batch" not in shown


@pytest.mark.parametrize("text, ratio", [
    (SINGLE_RANK_PHASE[0], 1.117),   # 67 s of a 60 s timeout
    (SINGLE_RANK_PHASE[1], 0.992),   # 9:55 of 10 minutes
    (SINGLE_RANK_PHASE[2], 0.989),   # 1:58:41 of 2 hours
    (SINGLE_RANK_PHASE[3], 0.989),   # 29:40 of 1800000 ms
])
def test_the_bar_running_time_is_read_against_the_timeout_that_ran_out(rules, text, ratio):
    assert analyse(rules, text)["log.progress_elapsed_over_timeout"] == ratio


# Training bars that stalled just short of the end of the epoch, long after their epoch started or
# long before the timeout could have run out on them: the last batch the other ranks never ran.
EPOCH_END_STALLS = [
    "Epoch 3: 96%|#########6| 4260/4435 [1:12:09<02:57, 1.02s/it, loss=0.312]\n"
    "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=35412, OpType=ALLREDUCE, NumelIn=25557032, NumelOut=25557032, Timeout(ms)=600000) ran for "
    "600011 milliseconds before timing out.",
    "Epoch 1: 98%|#########8| 980/1000 [03:10<00:04, 5.1it/s, loss=1.27]\n"
    "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=2061, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.",
]


@pytest.mark.parametrize("text", EPOCH_END_STALLS)
def test_a_stall_at_the_epoch_end_keeps_its_reading(rules, text):
    _, shown = root_and_shown(rules, text)
    assert shown[0] == "uneven-last-batch"
    assert "collective-timeout" in shown


# No timeout value on the failing line, or no bar before it: nothing is read.
NOT_READ = [
    "Epoch 1: 98%|#########8| 980/1000 [03:10<00:04, 5.1it/s, loss=1.27]\n"
    "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
    "store by key '0', but store->get('0') got error: Socket Timeout",
    "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=2061, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.\n"
    "Epoch 1: 98%|#########8| 980/1000 [29:10<00:04, 5.1it/s, loss=1.27]",
    # the options c10d prints at start-up name the timeout but nothing ran out
    "TIMEOUT(ms): 5000\nEpoch 1: 100%|##########| 1000/1000 [00:05<00:00, 190.1it/s, loss=1.27]",
]


@pytest.mark.parametrize("text", NOT_READ)
def test_without_a_timed_out_wait_after_a_bar_nothing_is_read(rules, text):
    assert "log.progress_elapsed_over_timeout" not in analyse(rules, text)


def test_a_healthy_run_with_bars_and_a_timeout_setting_stays_clean(rules):
    text = ("[I ProcessGroupNCCL.cpp:666] [Rank 0] ProcessGroupNCCL initialized with following options:\n"
            "TIMEOUT(ms): 1800000\n"
            "Epoch 0: 100%|##########| 391/391 [01:02<00:00, 6.3it/s, loss=1.91]\n"
            "Validation: 100%|##########| 79/79 [00:06<00:00, 12.9it/s]\n"
            "Epoch 1: 100%|##########| 391/391 [01:01<00:00, 6.4it/s, loss=1.52]\n")
    root, shown = root_and_shown(rules, text)
    assert root is None and shown == []


# The store's host went away while a rank read the NCCL unique id from it.
STORE_HOST_GONE = [
    "[rank3]: torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId "
    "from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
    "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
    "via c10d key-value store by key '0:1', but store->get('0:1') got error: Broken pipe",
    "RuntimeError: [2] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store "
    "by key '0', but store->get('0') got error: Connection closed by peer",
]


@pytest.mark.parametrize("text", STORE_HOST_GONE)
def test_a_store_read_the_host_dropped_is_the_host_rank_dying(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "rank-crashed"
    assert shown == ["rank-crashed"]


def test_the_store_host_own_error_comes_before_the_dropped_reads(rules):
    text = ("[rank0]: Traceback (most recent call last):\n"
            "[rank0]:   File \"/tmp/train.py\", line 40, in main\n"
            "[rank0]:     with open(output_file_path, \"w\") as f:\n"
            "[rank0]: OSError: [Errno 95] Operation not supported\n" + STORE_HOST_GONE[0])
    facts = analyse(rules, text)
    assert facts["log.root_cause"]["rank"] == 0
    assert "OSError" in facts["log.root_cause"]["traceback"]
    assert root_and_shown(rules, text)[1] == ["unrecognized-failure"]


# A store that did not answer in time is still a wait that ran out.
STORE_SLOW = [
    "torch.distributed.DistBackendError: [4] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
    "via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
    "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store "
    "by key '0', but store->get('0') got error: Timeout waiting for key: default_pg/0/0 after 1800000 ms",
]


@pytest.mark.parametrize("text", STORE_SLOW)
def test_a_store_read_that_ran_out_of_time_stays_a_timeout(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "collective-timeout"


WIN_RETRY = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [kubernetes.docker.internal]:54941 "
             "(system error: 10049 - The requested address is not valid in its context.).")
LINUX_RETRY = ("[W socket.cpp:558] [c10d] The client socket has failed to connect to [node0]:29500 "
               "(errno: 111 - Connection refused).")


@pytest.mark.parametrize("retry", [WIN_RETRY, LINUX_RETRY])
def test_a_log_that_ends_retrying_the_store_hung_at_the_rendezvous(rules, retry):
    _, shown = root_and_shown(rules, "\n".join([retry] * 4))
    assert shown == ["ranks-missing-at-rendezvous"]


@pytest.mark.parametrize("retry", [WIN_RETRY, LINUX_RETRY])
def test_retries_followed_by_training_stay_quiet(rules, retry):
    text = "\n".join([retry] * 3 + [
        "load StableDiffusion checkpoint",
        "steps:   1%|▏         | 12/1600 [00:21<47:10,  1.78s/it, loss=0.123]",
        "steps:   2%|▏         | 24/1600 [00:42<46:10,  1.76s/it, loss=0.118]"])
    assert root_and_shown(rules, text) == (None, [])


# Real NCCL lines wrapped the way a 100-column terminal or a re-flowed paste cuts them.
WRAPPED_NCCL = [
    ("host1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1,\n"
     "len 0, vendor err 129", "nccl-error"),
    ("host1:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported\n"
     "by protocol\nNCCL failure common.cu:874 'unhandled system error'", "wrong-network-interface"),
    ("torch.distributed.DistBackendError: NCCL error in:\n"
     "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, internal error - please report this issue\n"
     "to the NCCL developers, NCCL version 2.18.1", "nccl-error"),
]


@pytest.mark.parametrize("text, expected", WRAPPED_NCCL)
def test_wrapped_nccl_lines_keep_their_meaning(rules, text, expected):
    root, shown = root_and_shown(rules, text)
    assert root == expected
    assert shown[0] == expected


def test_nccl_info_about_the_ib_device_stays_quiet(rules):
    text = ("node1:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
            "node1:100:100 [0] NCCL INFO Using network IB\n"
            "node1:100:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
            "Epoch 0: 100%|##########| 391/391 [01:02<00:00, 6.3it/s, loss=1.91]\n")
    assert root_and_shown(rules, text) == (None, [])


OMPI_PEER_CONNECT = """--------------------------------------------------------------------------
WARNING: Open MPI failed to TCP connect to a peer MPI process.  This
should not happen.

Your Open MPI job may now hang or fail.

  Local host: node1
  PID:        13325
  Message:    connect() to 10.10.10.2:1024 failed
  Error:      Operation now in progress (115)
--------------------------------------------------------------------------"""
OMPI_IF_INVALID = """--------------------------------------------------------------------------
WARNING: An invalid value was given for oob_tcp_if_include.  This
value will be ignored.

  Local host: node1
  Value:      10.0.2.0/24
  Message:    Did not find interface matching this subnet
--------------------------------------------------------------------------
[node2:08003] [[32552,0],2] tcp_peer_send_blocking: send() to socket 9 failed: Broken pipe (32)"""


@pytest.mark.parametrize("text", [OMPI_PEER_CONNECT, OMPI_IF_INVALID])
def test_open_mpi_interface_trouble_is_the_interface(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "wrong-network-interface"
    assert shown[0] == "wrong-network-interface"


def test_open_mpi_gid_prefix_warning_before_training_stays_quiet(rules):
    text = """--------------------------------------------------------------------------
WARNING: There are more than one active ports on host 'node1', but the
default subnet GID prefix was detected on more than one of these
ports.  If these ports are connected to different physical IB
networks, this configuration will fail in Open MPI.
--------------------------------------------------------------------------
Epoch 1/10 loss: 0.52
Epoch 2/10 loss: 0.41"""
    assert root_and_shown(rules, text) == (None, [])
