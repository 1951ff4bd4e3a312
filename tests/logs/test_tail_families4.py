"""Three precision gaps at the tail of a run (issue 11, session 4), each recognised by meaning.

- The elastic agent's teardown after its workers succeeded (exit barrier, rendezvous shutdown) talks to a
  store the first agent to finish may already have closed: "failed to shutdown the rendezvous ...
  RendezvousConnectionError", "Connection reset by peer", "failed to recv, got 0 bytes" are harmless there,
  and stay errors when nothing succeeded before them.
- A TCPStore client reading end-of-stream ("failed to recv, got 0 bytes") is an echo of the store host that
  died: when the log shows that rank's own exception, it comes first.
- A Ctrl-C (KeyboardInterrupt) raised inside a collective, a store wait or a wait() on a distributed handle is
  a hang at that call (collective-timeout); anywhere else it is no evidence (the signature is ``alone: false``)
  and the report names the interrupt and where it happened.
"""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, root_and_shown
from troubleshooter.core.yamlspan import load_text
from troubleshooter.logs.signatures import validate_signature_file

# ---- 1. rendezvous shutdown after a successful run -------------------------------------------------------

SUCCEEDED = [
    # torch 2.0-2.3 bracketed logger, torch 1.9-1.13 "INFO:logger:", torch 2.4+ glog-style prefix
    "[2024-05-01 10:00:00,000] torch.distributed.elastic.agent.server.api: [INFO] [default] worker group "
    "successfully finished. Waiting 300 seconds for other agents to finish.\n"
    "[2024-05-01 10:00:00,001] torch.distributed.elastic.agent.server.api: [INFO] Local worker group finished "
    "(WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish\n",
    "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 "
    "seconds for other agents to finish.\n"
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 "
    "seconds for other agents to finish\n",
    "I0514 18:33:36.000000 4711 torch/distributed/elastic/agent/server/api.py:879] [default] worker group "
    "successfully finished. Waiting 300 seconds for other agents to finish.\n",
]

SHUTDOWN_FAILED = ("WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node1_3140_0' has "
                   "failed to shutdown the rendezvous 'job-7' due to an error of type RendezvousConnectionError.\n")


def exit_barrier_error(reason: str) -> str:
    """The agent's logged exit-barrier failure (torch 1.x-2.x), its traceback ending in ``reason``."""
    return ("ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 0.1 seconds\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", '
            "line 906, in _exit_barrier\n"
            "    store_util.barrier(\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/utils/store.py", line 31, '
            "in get_all\n"
            '    data = store.get(f"{prefix}{idx}")\n'
            f"{reason}\n")


TEARDOWN_REASONS = [
    "RuntimeError: Connection reset by peer",
    "torch.distributed.DistNetworkError: failed to recv, got 0 bytes",
    "torch.distributed.DistNetworkError: Broken pipe",
]


@pytest.mark.parametrize("success", SUCCEEDED)
def test_rendezvous_shutdown_failure_after_success_is_clean(rules, success):
    for whole in (True, False):
        root, shown = root_and_shown(rules, success + SHUTDOWN_FAILED, whole)
        assert (root, shown) == (None, [])


@pytest.mark.parametrize("reason", TEARDOWN_REASONS)
def test_exit_barrier_error_after_success_is_clean(rules, reason):
    text = SUCCEEDED[1] + exit_barrier_error(reason) + SHUTDOWN_FAILED
    assert root_and_shown(rules, text) == (None, [])


def test_shutdown_failure_stays_an_error_without_success(rules):
    """Nothing succeeded before it (the group failed or the log starts there): the error is kept."""
    failed = ("INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 0/3 attempts left; "
              "will restart worker group\n")
    for text in (SHUTDOWN_FAILED, failed + SHUTDOWN_FAILED):
        assert "network-unreachable" in root_and_shown(rules, text)[1]


def test_rendezvous_connection_error_at_start_stays_the_root(rules):
    text = ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store "
            "has failed. See inner exception for details.\n")
    assert root_and_shown(rules, text)[0] == "network-unreachable"


def test_a_real_failure_before_success_markers_elsewhere_is_kept(rules):
    """A worker's own error is reported even when the agent later printed its teardown noise."""
    text = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
            + SHUTDOWN_FAILED)
    assert root_and_shown(rules, text)[0] == "out-of-memory"


# ---- 2. the store host died: its own failure first ---------------------------------------------------------

STORE_CLOSED = [
    "torch.distributed.DistNetworkError: failed to recv, got 0 bytes",
    "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote "
    "server shutdown or crash?",
    "RuntimeError: Connection reset by peer",
]


def _rank0_died_then(echo: str, own: str) -> str:
    return ("[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "train.py", line 40, in <module>\n'
            "[rank0]:     images, labels = batch\n"
            f"[rank0]: {own}\n"
            "[rank1]: Traceback (most recent call last):\n"
            '[rank1]:   File "train.py", line 44, in <module>\n'
            "[rank1]:     dist.barrier()\n"
            f"[rank1]: {echo}\n")


@pytest.mark.parametrize("echo", STORE_CLOSED)
def test_store_host_own_unknown_error_comes_first(rules, echo):
    facts = analyse(rules, _rank0_died_then(echo, "ValueError: too many values to unpack (expected 2)"))
    root = facts["log.root_cause"]
    assert root["id"] is None and root["rank"] == 0 and "ValueError" in root["traceback"]
    assert facts["log.unrecognized-failure"][0]["vars"]["rank"] == 0
    assert root_and_shown(rules, _rank0_died_then(echo, "ValueError: bad batch"))[1] == ["unrecognized-failure"]
    assert {s["rank"] for s in facts["log.suppressed"]} == {1}  # rank 1's echoes are reported as such


@pytest.mark.parametrize("echo", STORE_CLOSED)
def test_store_host_known_error_comes_first(rules, echo):
    own = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert root_and_shown(rules, _rank0_died_then(echo, own))[0] == "out-of-memory"


@pytest.mark.parametrize("echo", STORE_CLOSED[:2])
def test_store_closed_alone_says_a_peer_died(rules, echo):
    """Without the dead rank's log, end-of-stream from the store is a crashed peer, not an unreachable host."""
    assert root_and_shown(rules, f"[rank1]: {echo}\n")[0] == "rank-crashed"


def test_connect_failures_stay_network_unreachable(rules):
    for line in ("torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying "
                 "to connect to (172.17.0.9, 46229).",
                 "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address "
                 "of (10.0.0.1, 29500)."):
        assert root_and_shown(rules, f"[rank1]: {line}\n")[0] == "network-unreachable"


def test_echo_on_the_same_rank_as_its_exception_keeps_the_echo(rules):
    """The only exception is the echo's own: nothing else failed first."""
    text = ("[rank1]: Traceback (most recent call last):\n"
            '[rank1]:   File "train.py", line 44, in <module>\n'
            "[rank1]:     dist.barrier()\n"
            "[rank1]: torch.distributed.DistNetworkError: failed to recv, got 0 bytes\n")
    assert root_and_shown(rules, text)[0] == "rank-crashed"


# ---- 3. Ctrl-C during a hang ----------------------------------------------------------------------------

INTERRUPTED_WAITS = [
    # torch 2.x barrier through the c10d_logger wrapper (Python 3.10)
    "^CTraceback (most recent call last):\n"
    '  File "train.py", line 61, in main\n'
    "    dist.barrier()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 75, in wrapper\n'
    "    return func(*args, **kwargs)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 3439, in barrier\n'
    "    work.wait()\n"
    "KeyboardInterrupt\n",
    # torch 1.x all_reduce under a rank prefix, Python 3.11 carets
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "train.py", line 90, in <module>\n'
    "[rank1]:     dist.all_reduce(loss)\n"
    '[rank1]:   File "/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 1700, '
    "in all_reduce\n"
    "[rank1]:     work.wait()\n"
    "[rank1]:     ^^^^^^^^^^^\n"
    "[rank1]: KeyboardInterrupt\n",
    # the store-based barrier of init_process_group (torch 1.x)
    "Traceback (most recent call last):\n"
    '  File "main.py", line 12, in <module>\n'
    '    dist.init_process_group("nccl")\n'
    '  File "/usr/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 246, in _store_based_barrier\n'
    "    time.sleep(0.01)\n"
    "KeyboardInterrupt\n",
    # a store key waited for in the script itself (pybind call: no torch frame)
    "Traceback (most recent call last):\n"
    '  File "worker.py", line 33, in <module>\n'
    '    store.wait(["weights_ready"])\n'
    "KeyboardInterrupt\n",
]


@pytest.mark.parametrize("text", INTERRUPTED_WAITS)
def test_ctrl_c_inside_a_distributed_wait_is_a_hang(rules, text):
    for whole in (True, False):
        assert root_and_shown(rules, text, whole)[0] == "collective-timeout"


INTERRUPTED_ELSEWHERE = [
    "Traceback (most recent call last):\n"
    '  File "train.py", line 70, in train\n'
    "    loss.backward()\n"
    '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 487, in backward\n'
    "    torch.autograd.backward(\n"
    "KeyboardInterrupt\n",
    "Traceback (most recent call last):\n"
    '  File "train.py", line 55, in <module>\n'
    "    for batch in loader:\n"
    '  File "/usr/lib/python3.10/threading.py", line 320, in wait\n'
    "    waiter.acquire()\n"
    "KeyboardInterrupt\n",
]


@pytest.mark.parametrize("text", INTERRUPTED_ELSEWHERE)
def test_ctrl_c_elsewhere_is_no_hang(rules, text):
    assert "collective-timeout" not in root_and_shown(rules, text)[1]


def test_a_frame_far_above_the_interrupt_is_not_its_location(rules):
    """The distributed call finished long before: the interrupt happened in later, unrelated code."""
    text = ('  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3439, in barrier\n'
            + "".join(f"step {i} loss 0.5\n" for i in range(10))
            + "KeyboardInterrupt\n")
    assert "collective-timeout" not in root_and_shown(rules, text)[1]


def test_ctrl_c_elsewhere_names_the_interrupt(rules):
    """Not a hang, but a stopped run is not clean either: the interrupt is named with its location."""
    facts = analyse(rules, INTERRUPTED_ELSEWHERE[0])
    root = facts["log.root_cause"]
    assert root["id"] is None and root["traceback"] == "KeyboardInterrupt"
    assert root["where"].endswith("torch/_tensor.py:487")


def test_alone_false_needs_a_refinement(rules):
    """``alone: false`` without a refine could never produce a hit: the library refuses it."""
    text = ("group: g\nsignatures:\n  - id: a\n    pattern: 'KeyboardInterrupt'\n    note: n\n"
            "    finding: collective-timeout\n    priority: 40\n    alone: false\n")
    problems = list(validate_signature_file(load_text(text), known_findings=rules.findings))
    assert any(p[0] == 8 and "needs a refine" in p[1] for p in problems), problems
