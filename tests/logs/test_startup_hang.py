"""Logs that END in start-up (no progress, no error after the last start-up line): hangs at init."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse_files, findings_of, shown
from troubleshooter.logs.symptoms import MAX_AFTER_STAGE


BANNER = ("I1028 12:13:38.405081 632355 ProcessGroupNCCL.cpp:843] [Rank 0] NCCL watchdog thread started!\n"
          "I1028 12:13:38.405865 632324 ProcessGroupNCCL.cpp:666] [Rank 0] ProcessGroupNCCL initialized with following options:\n"
          "NCCL_ASYNC_ERROR_HANDLING: 1\nNCCL_DESYNC_DEBUG: 0\nNCCL_BLOCKING_WAIT: 0\nTIMEOUT(ms): 1800000\n")


@pytest.mark.parametrize("setup", [
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4\n",
    "GPU available: True, used: True\nInitializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n",
    "| distributed init (rank 1): env://, gpu 1\n",
    "[2023-05-02 10:11:12,345] [INFO] [comm.py:594:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl\n",
    "Added key: store_based_barrier_key:1 to store for rank: 1\n",
    "[I socket.cpp:787] [c10d] The client socket has connected to [node-a.example]:29500 on [node-b.example]:46672.\n",
])
def test_a_log_ending_at_the_rendezvous_is_a_rank_missing_there(rules, setup):
    for whole in (True, False):
        facts = analyse_files(rules, {"job.log": "Namespace(epochs=10, batch_size=32)\n" + setup}, whole)
        assert facts["log.ended_in_stage"] == "rendezvous"
        assert shown(rules, facts) == ["ranks-missing-at-rendezvous"]


@pytest.mark.parametrize("after", [
    "Epoch 0:  12%|#2        | 12/100 [00:03<00:22,  3.9it/s, loss=2.31]\n",
    "epoch 1 step 20 loss 0.4312\n",
    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nRuntimeError: boom\n",
    "".join(f"model layer {i}\n" for i in range(MAX_AFTER_STAGE + 1)),
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4321) of binary: python\n",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4322 closing signal SIGTERM\n",
])
def test_progress_an_error_or_much_output_after_start_up_is_not_a_start_up_hang(rules, after):
    facts = analyse_files(rules, {"job.log": "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n" + after})
    assert "log.ended_in_stage" not in facts
    assert "ranks-missing-at-rendezvous" not in shown(rules, facts)


def test_lightning_1x_and_2x_registered_wordings_are_the_communicator_stage(rules):
    for line in ("All DDP processes registered. Starting ddp with 2 processes\n",
                 "All distributed processes registered. Starting with 2 processes\n"):
        facts = analyse_files(rules, {"job.log": "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n" + line + "-" * 100 + "\n"})
        assert facts["log.ended_in_stage"] == "communicator"


def test_the_last_start_up_line_decides_the_stage(rules):
    facts = analyse_files(rules, {"job.log": "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n" + BANNER})
    assert facts["log.ended_in_stage"] == "communicator"
    assert shown(rules, facts) == ["collective-timeout"]


def test_the_one_line_banner_of_torch_2(rules):
    banner = ("I0527 15:16:51.665375 58626 ProcessGroupNCCL.cpp:869] [PG 0 Rank 2] ProcessGroupNCCL initialization options: "
              "size: 8, global rank: 2, TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0\n")
    facts = analyse_files(rules, {"job.log": banner})
    assert (facts["log.ended_in_stage"], facts["log.pg_timeout_ms"]) == ("communicator", 600000)
    assert shown(rules, facts) == ["collective-timeout"]


def test_the_communicator_stage_needs_the_configured_timeout(rules):
    nccl_info = ("node1:1234:1300 [0] NCCL INFO comm 0x7f0a2c002f70 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
                 "node1:1234:1234 [0] NCCL INFO Launch mode Parallel\n")
    facts = analyse_files(rules, {"job.log": nccl_info})
    assert facts["log.ended_in_stage"] == "communicator"
    assert shown(rules, facts) == []


def test_a_rank_file_that_went_on_means_no_start_up_hang(rules):
    files = {"rank0.log": "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\nepoch 0 step 5 loss 1.25\n",
             "rank1.log": "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n"}
    assert "log.ended_in_stage" not in analyse_files(rules, files)
    files["rank0.log"] = BANNER
    assert analyse_files(rules, files)["log.ended_in_stage"] == "rendezvous"   # the earliest stage a file ends in


def test_a_store_barrier_counting_more_workers_than_its_world_size(rules):
    line = ("2022-05-09 22:30:27,597 INFO Waiting in store based barrier to initialize process group for rank: 0, "
            "key: store_based_barrier_key:1 (world_size={}, worker_count={}, timeout=0:30:00)\n")
    facts = analyse_files(rules, {"job.log": line.format(6, 287)})
    assert (facts["log.store_barrier_world_size"], facts["log.store_barrier_worker_count"]) == (6, 287)
    assert any("287 workers for a world size of 6" in d for d in _details(rules, facts, "stale-init-file"))
    details = _details(rules, analyse_files(rules, {"job.log": line.format(6, 3)}))
    assert details and not any("workers for a world size" in d for d in details)  # still a hang at the rendezvous


def _details(rules, facts: dict, finding: str = "ranks-missing-at-rendezvous") -> list[str]:
    findings = findings_of(rules, facts)
    return [ev.detail for f in findings if f.id == finding for ev in f.evidence]
