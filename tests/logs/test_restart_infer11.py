"""torchelastic worker-group restarts (issue 11, session 11): after the agent restarted its workers
(``restart_count=N`` with N >= 1, ``will restart worker group``), the restarted workers are counted by the
store-based barrier in the store the first attempt's workers left (pytorch/pytorch#55967, #135712): a count
above the world size then tells no other run (stale-init-file stays quiet) and the first attempt's own
failure comes first."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, shown

FIRST_ATTEMPT = """\
[INFO] [default] Rendezvous complete for workers. Result:
  restart_count=0
  master_addr=node-a
  master_port=29500
[INFO] [default] Starting worker group
epoch 0 step 10 loss 2.31
Traceback (most recent call last):
  File "train.py", line 61, in main
    loss = model(batch).sum()
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total capacity)
[ERROR] failed (exitcode: 1) local_rank: 1 (pid: 4242) of binary: /usr/bin/python
"""
RESTARTS = {
    "torch 2.x rendezvous result": "[INFO] [default] Rendezvous complete for workers. Result:\n  restart_count=1\n",
    "failure restart": "[INFO] [default] Worker group FAILED. 3/3 attempts left; will restart worker group\n",
    "membership change": "INFO:torch.distributed.elastic.agent.server.api:[default] Detected 1 new nodes from "
                         "group_rank=0; will restart worker group\n",
}
BARRIER = """\
Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)
RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)
"""


@pytest.mark.parametrize("restart", RESTARTS.values(), ids=RESTARTS.keys())
def test_the_barrier_after_a_restart_is_no_stale_store(rules, restart):
    ids = shown(rules, analyse(rules, FIRST_ATTEMPT + restart + BARRIER))
    assert ids[0] == "out-of-memory" and "stale-init-file" not in ids


def test_the_same_count_without_a_restart_is_a_stale_store(rules):
    assert "stale-init-file" in shown(rules, analyse(rules, FIRST_ATTEMPT + BARRIER))
