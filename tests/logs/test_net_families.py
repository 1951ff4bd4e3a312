"""NCCL and rendezvous families added from real logs (issue 11, session 3): an injected topology or graph
file that does not fit the machine, a rendezvous store that still holds another run's workers, and an
NCCL peer connection that fails while NCCL also uses a container bridge. Each family is pinned by
several wordings (NCCL 2.7 to 2.21, torch 1.x and 2.x), and the harmless lines of the same families by
healthy logs that must stay clean."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, analyse_lines, findings_of, root_and_shown



GRAPH_FILE = "node1:2748:2852 [1] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/hpc/graph.xml\n"

TOPOLOGY_FILE = [
    # the importer names the device the file has and the job does not (NCCL 2.18, Azure image files)
    "node1:16674:17023 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/hpc/topo.xml\n"
    + GRAPH_FILE + "node1:16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.\n"
    "node1:16674:17023 [0] NCCL INFO graph/search.cc:733 -> 2\n",
    # a static XML of a network plugin, GPU subset (NCCL 2.21) and NCCL 2.7's wording of the same check
    "node1:2196:2275 [1] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found\n"
    "node1:2196:2275 [1] NCCL INFO graph/topo.cc:493 -> 3\n",
    "graph/xml.h:77 NCCL WARN Attribute vendor of node cpu not found\nNCCL INFO init.cc:581 -> 3\n",
    # torch quoting NCCL's last error under the internal-error class
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
    "internal error - please report this issue to the NCCL developers, NCCL version 2.18.1\n"
    "ncclInternalError: Internal check failed.\nLast error:\nAttribute arch of node cpu not found\n",
    # no importer message: the bare failure after a graph file was injected (system error, internal error)
    GRAPH_FILE + "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n",
    GRAPH_FILE + "RuntimeError: NCCL Error 2: unhandled system error\n",
    GRAPH_FILE + "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal "
    "error, NCCL version 2.14.3\n",
    GRAPH_FILE + "node1: Test NCCL failure common.cu:961 'internal error - please report this issue to the NCCL "
    "developers / '\n",
]


@pytest.mark.parametrize("text", TOPOLOGY_FILE)
def test_injected_topology_or_graph_file_is_the_root_cause(rules, text):
    assert root_and_shown(rules, text, whole=False)[0] == "nccl-topology-file-mismatch"


def test_a_graph_file_does_not_outrank_a_stated_reason(rules):
    """A specific NCCL WARN reason (here /dev/shm) stays the diagnosis; the graph file only explains bare errors."""
    text = (GRAPH_FILE + "node1:1:2 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on "
            "device\nRuntimeError: NCCL Error 2: unhandled system error\n")
    assert root_and_shown(rules, text, whole=False)[0] == "shm-too-small"


HEALTHY_WITH_TOPOLOGY_FILES = [
    # network plugins set a topology file on every healthy p4d/p5 run
    "algo-1:17775:17847 [2] NCCL INFO NET/OFI Running on p4d.24xlarge platform, Setting NCCL_TOPO_FILE environment "
    "variable to /usr/local/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml\n"
    "algo-1:17775:17847 [2] NCCL INFO comm 0x55c6d68d7b20 rank 2 nranks 8 cudaDev 2 busId 4c000 - Init COMPLETE\n"
    "{'loss': 1.7157, 'learning_rate': 2e-05, 'epoch': 0.02}\n",
    # a graph file that fits the machine: nothing fails, nothing to say
    GRAPH_FILE + "node1:2748:2852 [1] NCCL INFO comm 0x5f4c3230 rank 1 nranks 2 cudaDev 1 busId 200000 - Init COMPLETE\n"
    "Epoch 1/3: 100%|##########| 500/500 [02:10<00:00, 3.83it/s, loss=0.412]\n",
]


@pytest.mark.parametrize("text", HEALTHY_WITH_TOPOLOGY_FILES)
def test_topology_or_graph_files_alone_stay_clean(rules, text):
    assert root_and_shown(rules, text, whole=False) == (None, [])


STALE_STORE = [
    # torch 1.x waiting message, and the timeout that follows it, with far more workers than the world
    "Added key: store_based_barrier_key:1 to store for rank: 0\n"
    "INFO Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
    "(world_size=6, worker_count=287, timeout=0:30:00)\n",
    "File already exists: output.tmp/dist_init\n"
    "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
    "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:02:00)\n",
]


@pytest.mark.parametrize("text", STALE_STORE)
def test_more_workers_than_the_world_is_a_stale_store(rules, text):
    root, ids = root_and_shown(rules, text, whole=False)
    assert ids[0] == "stale-init-file", ids


def test_fewer_workers_than_the_world_is_a_missing_rank(rules):
    text = ("RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
            "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:10:00)\n")
    assert "stale-init-file" not in root_and_shown(rules, text, whole=False)[1]
    assert root_and_shown(rules, text, whole=False)[0] == "ranks-missing-at-rendezvous"


BRIDGE = ("node1:14605:14673 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.137<0> "
          "[1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>\n")
CONNECT_FAILURES = [
    "node1:14605:14688 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
    "Software caused connection abort\n",
    "node1:101542:101934 [0] include/socket.h:403 NCCL WARN Connect to 172.18.40.42<36373> failed : Connection "
    "timed out\n",
    "node1:1234:1250 [0] include/socket.h:403 NCCL WARN Call to connect returned Connection refused\n",
]


@pytest.mark.parametrize("text", CONNECT_FAILURES)
def test_nccl_peer_connect_failure_with_a_bridge_interface_is_the_interface(rules, text):
    """NCCL also advertises a container bridge/veth address: its interface choice is the first suspect."""
    assert root_and_shown(rules, BRIDGE + text, whole=False)[0] == "wrong-network-interface"
    assert root_and_shown(rules, text, whole=False)[0] == "network-unreachable"


def test_real_file_read_whole_agrees_with_the_streaming_read(rules):
    text = TOPOLOGY_FILE[0]
    assert (analyse(rules, text).get("log.root_cause") or {}).get("id") == "nccl-topology-file-mismatch"


LONG_PHASE_BARS = [
    "Running tokenizer on dataset:  88%|########8 | 383700/433643 [29:55<03:25, 2432.70 examples/s]",
    "Preparing test set...:  46%|####6     | 31/67 [28:40<35:12, 58.67s/it]",
    "Map (num_proc=64):  57%|#####7    | 76602/135065 [30:00<21:21, 45.61 examples/s]",
]
STORE_WAIT_TIMEOUTS = [
    # torch 1.x: a bare store timeout, which alone reads as an unreachable store
    "RuntimeError: Socket Timeout",
    # torch 2.x: the key that never came, and c10d's socket-level line before it
    "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0",
    "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, "
    "addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms",
    # the NCCL unique-id wait
    "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
    "store by key '0', but store->get('0') got error: Socket Timeout",
]


@pytest.mark.parametrize("bar", LONG_PHASE_BARS)
@pytest.mark.parametrize("error", STORE_WAIT_TIMEOUTS)
def test_a_store_wait_timing_out_after_a_30_minute_phase_is_the_timeout(rules, bar, error):
    """One rank's own phase (tokenising, preparing data) ran as long as the default timeout: the others gave up."""
    text = bar + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n" + error + "\n"
    root, ids = root_and_shown(rules, text, whole=False)
    assert root == "collective-timeout" and ids[0] == "collective-timeout", ids
    assert "uneven-last-batch" not in ids  # a 30-minute preprocessing bar is not an epoch that stalled at its end


def test_a_bare_socket_timeout_without_a_long_phase_is_still_the_store_connection(rules):
    text = "Running tokenizer on dataset:  10%|#         | 1000/10000 [02:10<19:30, 7.69 examples/s]\nRuntimeError: Socket Timeout\n"
    assert root_and_shown(rules, text, whole=False)[0] == "network-unreachable"


def test_a_healthy_run_with_a_30_minute_progress_bar_stays_clean(rules):
    text = ("Running tokenizer on dataset: 100%|##########| 433643/433643 [30:12<00:00, 2392.10 examples/s]\n"
            "{'loss': 1.7157, 'learning_rate': 2e-05, 'epoch': 0.02}\n"
            "  5%|5         | 500/10000 [30:01<9:30:00, 3.60s/it]\n")
    assert root_and_shown(rules, text, whole=False) == (None, [])


def _nccl_setup(transport: str) -> str:
    """NCCL_DEBUG=INFO set-up lines of a 2-GPU communicator whose channels use ``transport``."""
    return (
        "node1:2001:2001 [0] NCCL INFO Bootstrap : Using eno1:10.0.0.5<0>\n"
        "NCCL version 2.18.1+cuda12.1\n"
        f"node1:2001:2101 [0] NCCL INFO Channel 00/0 : 0[1000] -> 1[2000] via {transport}\n"
        f"node1:2002:2102 [1] NCCL INFO Channel 00/0 : 1[2000] -> 0[1000] via {transport}\n"
        "node1:2001:2101 [0] NCCL INFO Connected all rings\n"
        "node1:2001:2101 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
        "node1:2002:2102 [1] NCCL INFO comm 0x56e0 rank 1 nranks 2 cudaDev 1 busId 2000 - Init COMPLETE\n")


def _watchdog(seq: int, op: str = "BROADCAST") -> str:
    return (f"[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=2112, NumelOut=2112, Timeout(ms)=1800000) ran for "
            f"1800356 milliseconds before timing out.\n")


@pytest.mark.parametrize("transport", ["P2P/IPC/read", "P2P/direct pointer", "P2P/CUMEM/read"])
@pytest.mark.parametrize("seq", [1, 2])
def test_first_collective_hang_over_p2p_on_one_node_is_the_p2p_transport(rules, transport, seq):
    root, ids = root_and_shown(rules, _nccl_setup(transport) + _watchdog(seq), whole=False)
    assert ids[0] == "nccl-p2p-hang", ids


@pytest.mark.parametrize("text", [
    _nccl_setup("SHM/direct/direct") + _watchdog(1),                      # P2P disabled: not the transport
    _nccl_setup("P2P/IPC/read") + _watchdog(4512, "ALLREDUCE"),             # mid-training, not the first collective
    _nccl_setup("P2P/IPC/read").replace("Connected all rings", "Channel 01/0 : 1[2000] -> 2[1000] [send] via "
                                        "NET/Socket/0") + _watchdog(1),    # a channel leaves the node
])
def test_other_timeouts_stay_collective_timeouts(rules, text):
    assert root_and_shown(rules, text, whole=False)[1][0] == "collective-timeout"


def test_a_rank_that_crashed_first_stays_the_root_cause(rules):
    text = (_nccl_setup("P2P/IPC/read")
            + "[rank0]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; "
              "23.65 GiB total capacity; 21.90 GiB already allocated)\n" + _watchdog(1))
    assert root_and_shown(rules, text, whole=False)[1][0] == "out-of-memory"


def test_p2p_channels_in_a_healthy_run_stay_clean(rules):
    text = _nccl_setup("P2P/IPC/read") + "Epoch 1: 100%|##########| 500/500 [02:10<00:00, 3.83it/s, loss=0.412]\n"
    assert root_and_shown(rules, text, whole=False) == (None, [])


def _title(rules, text: str, finding: str) -> str:
    return next(f.title for f in findings_of(rules, analyse_lines(rules, text)) if f.id == finding)


def test_titles_name_what_the_log_shows(rules):
    """An NCCL peer that cannot be reached is named (it is not the master); with no variable in the log the
    interface title does not claim that NCCL_SOCKET_IFNAME names a missing interface."""
    peer = "node1:1:2 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : No route to host\n"
    assert _title(rules, peer, "network-unreachable").startswith("10.0.0.2:45763 cannot be reached")
    store = "RuntimeError: connect() timed out. Original timeout was 1800000 ms.\n"
    assert _title(rules, store, "network-unreachable").startswith("MASTER_ADDR:MASTER_PORT cannot be reached")
    loopback = ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
                "no error\n")
    title = _title(rules, loopback, "wrong-network-interface")
    assert "names an interface" not in title and "GLOO_SOCKET_IFNAME" in title


@pytest.mark.parametrize("retry", [
    "[I socket.cpp:710] [c10d - trace] The server socket on [::ffff:127.0.0.1]:12355 is not yet listening "
    "(errno: 111 - Connection refused), will retry.",
    "tj1:941227:943077 [0] NCCL INFO Call to connect returned Connection refused, retrying",
])
def test_connection_retry_notices_of_a_healthy_run_stay_clean(rules, retry):
    text = (retry + "\nnode1:1:2 [0] NCCL INFO comm 0x7f rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
            "Epoch 1: 100%|##########| 500/500 [02:10<00:00, 3.83it/s, loss=0.412]\n")
    assert root_and_shown(rules, text, whole=False) == (None, [])


def test_a_refused_connection_that_fails_is_still_reported(rules):
    assert root_and_shown(rules, "ConnectionRefusedError: [Errno 111] Connection refused\n", whole=False)[0] == "network-unreachable"


REFUSED_RETRY = ("[W socket.cpp:436] [c10d] The client socket has failed to connect to [node-0]:29500 "
                 "(errno: 111 - Connection refused).\n")


def test_store_connect_retries_before_the_master_is_up_stay_clean(rules):
    text = (REFUSED_RETRY * 3 + "node1:1:2 [0] NCCL INFO comm 0x7f rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
            "Epoch 1: 100%|##########| 500/500 [02:10<00:00, 3.83it/s, loss=0.412]\n")
    assert root_and_shown(rules, text, whole=False) == (None, [])


@pytest.mark.parametrize("final", [
    "[E socket.cpp:469] [c10d] The client socket has failed to connect to any network address of (node-0, 29500).",
    "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to "
    "(node-0, 29500).",
    "[rank1]:[W1123 19:09:28.524127036 socket.cpp:752] [c10d] The client socket has failed to connect to "
    "[node-0]:29500 (errno: 113 - No route to host).",
])
def test_store_connect_that_never_succeeds_is_reported(rules, final):
    assert root_and_shown(rules, REFUSED_RETRY * 2 + final + "\n", whole=False)[0] == "network-unreachable"


def test_gloo_loopback_fallback_is_a_note_in_a_single_node_run(rules):
    text = ("[W ProcessGroupGloo.cpp:694] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
            "address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. "
            "(function operator())\n[Gloo] Rank 0 is connected to 1 peer ranks. Expected number of connected peer "
            "ranks is : 1\nEpoch 1: 100%|##########| 500/500 [02:10<00:00, 3.83it/s, loss=0.412]\n")
    assert root_and_shown(rules, text, whole=False)[1] == []  # a note at most, never a warning
    failing = text.replace("[Gloo] Rank 0 is connected", "RuntimeError: Gloo connectFullMesh failed with "
                           "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n[Gloo] Rank 0 is connected")
    assert root_and_shown(rules, failing, whole=False)[1][0] == "wrong-network-interface"


@pytest.mark.parametrize("event,failing", [
    ("port error", True), ("local catastrophic error", True),
    ("GID table change", False), ("port active", False), ("client reregistration", False),
])
def test_infiniband_async_events_error_or_informational(rules, event, failing):
    line = f"node1:2001:2101 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : {event}\n"
    text = line + "Epoch 1: 100%|##########| 500/500 [02:10<00:00, 3.83it/s, loss=0.412]\n"
    assert (root_and_shown(rules, text, whole=False)[1] != []) is failing


def test_a_30_minute_bar_long_before_the_timeout_does_not_explain_it(rules):
    """The phase that ran out the clock is the one right before the timeout, not an epoch bar far above it."""
    text = ("Epoch 1:  50%|#####     | 250/500 [30:02<30:00, 0.14it/s, loss=0.5]\n"
            + "".join(f"{{'loss': 0.{i:03d}, 'epoch': 1.{i:03d}}}\n" for i in range(60))
            + "RuntimeError: Socket Timeout\n")
    assert root_and_shown(rules, text, whole=False)[0] == "network-unreachable"

