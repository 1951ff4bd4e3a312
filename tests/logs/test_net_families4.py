"""NCCL transport failures and watchdog status lines recognised by family (issue 11, session 4).

- InfiniBand verbs, the AWS OFI/EFA plugin, NCCL's proxy thread and a peer that closed its socket are
  NCCL communicator errors in every NCCL generation's wording, with or without the reason NCCL appends;
- ProcessGroupNCCL's summary of the work its watchdog gave up on (torch 2.2, 2.3 and 2.4+ wordings) is the
  collective timeout even when the "caught collective operation timeout" line was cut from the log.

Near misses stay quiet: NCCL's informational IB events, the OFI plugin falling back to another transport,
connection retries, libibverbs being absent, and healthy runs' NCCL INFO set-up lines.
"""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

TRANSPORT_FAILURES = [
    # verbs without a reason (NCCL 2.1-2.8, TF/Horovod builds) and with one (NCCL 2.10+)
    "hai-a100-3:3778851:3779883 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed",
    "spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed",
    "machine [0] misc/ibvwrap.cu:269 WARN Call to ibv_create_qp failed",
    "dgx-4:460770:460842 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable",
    # the AWS libfabric plugin: old and new wordings, under mpirun's rank prefix
    "[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. "
    "RC: -22, ERROR: Invalid argument",
    "algo-1:462:500 [0] NCCL WARN NET/OFI Request completed with error. RC: 21. Error: unknown error",
    "ip-10-0-0-1:79:79 [0] nccl_net_ofi_domain_get_ep:969 NCCL WARN NET/OFI Creating new endpoint for domain "
    "0x7f9befa99380 failed: Invalid argument",
    # NCCL's proxy thread and a peer that went away (NCCL 2.2 and 2.18 wordings)
    "ubuntu:39964:40075 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, "
    "retcode 2",
    "server1:6601:6625 [0] include/socket.h:385 NCCL WARN Net : Connection closed by remote peer",
    "ubuntu:39964:40044 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node1<57557>",
]


@pytest.mark.parametrize("line", TRANSPORT_FAILURES)
def test_nccl_transport_failures_are_nccl_errors(rules, line):
    assert root_and_shown(rules, line + "\n", whole=False)[0] == "nccl-error"
    assert root_and_shown(rules, line + "\n")[0] == "nccl-error"


def test_a_transport_failure_before_the_system_error_keeps_the_nccl_error(rules):
    """The WARN line says which call failed: the bare system error after it is no longer read as /dev/shm."""
    text = ("hai-a100-3:1:2 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed\n"
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:825, "
            "unhandled system error, NCCL version 2.7.8\n")
    root, shown = root_and_shown(rules, text, whole=False)
    assert root == "nccl-error" and "shm-too-small" not in shown


def test_a_peer_that_closed_its_socket_yields_to_the_rank_that_failed(rules):
    """'Connection closed by remote peer' is the echo of another rank's failure: that failure comes first."""
    text = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
            "capacity of 23.69 GiB of which 1.10 GiB is free.\n"
            "node0:6601:6625 [0] include/socket.h:385 NCCL WARN Net : Connection closed by remote peer\n")
    assert root_and_shown(rules, text, whole=False)[0] == "out-of-memory"


WATCHDOG_STATUS = [
    # torch 2.2
    "[rank14]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 14] Timeout at NCCL work: 15734, last enqueued NCCL work: 15735, "
    "last completed NCCL work: 15733.",
    # torch 2.3
    "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Exception (either an error or timeout) detected by watchdog at "
    "work: 5, last enqueued NCCL work: 7, last completed NCCL work: 4.",
    # torch 2.4+, under Ray's actor prefix
    "(WorkerDict pid=97397, ip=10.0.0.9) [rank3]:[E1023 02:44:30.942078991 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID "
    "0(default_pg) Rank 3]  failure detected by watchdog at work sequence id: 26 PG status: last enqueued work: 26, "
    "last completed work: 126",
]


@pytest.mark.parametrize("line", WATCHDOG_STATUS)
def test_watchdog_work_status_is_the_collective_timeout(rules, line):
    assert root_and_shown(rules, line + "\n", whole=False)[0] == "collective-timeout"


def test_an_nccl_error_of_its_own_outranks_the_watchdog_status(rules):
    text = ("node1:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.3<49577> with "
            "status=12 opcode=1 len=0 vendor err 129 (Send)\n" + WATCHDOG_STATUS[2] + "\n")
    assert root_and_shown(rules, text, whole=False)[0] == "nccl-error"


QUIET = [
    # the OFI plugin not finding a provider makes NCCL fall back to IB or sockets
    "ip-172-31-1-1:5:5 [0] get_ofi_provider:312 NCCL WARN NET/OFI Could not find any optimal provider",
    # informational IB port events and an absent libibverbs (NCCL then uses sockets)
    "node1:2001:2101 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port active",
    "node1:15833:15833 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    # a connection retry that later succeeds
    "node1:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) after "
    "sleep for 2600 msec",
    # NET/OFI set-up lines of a healthy EFA run
    "[1,6]<stdout>:worker-0:27:575 [6] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws\n"
    "[1,6]<stdout>:worker-0:27:575 [6] NCCL INFO NET/OFI Setting provider_filter to efa\n"
    "[1,6]<stdout>:worker-0:27:575 [6] NCCL INFO NET/OFI Using transport protocol SENDRECV",
    # a healthy socket-transport set-up (NCCL 2.4)
    "node1:41449:41449 [6] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
    "node1:41449:41449 [6] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.4<0>\n"
    "node1:41449:43711 [6] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/Socket/0",
]


@pytest.mark.parametrize("text", QUIET)
def test_harmless_transport_lines_stay_clean(rules, text):
    assert root_and_shown(rules, text + "\n", whole=False) == (None, [])
    assert root_and_shown(rules, text + "\n") == (None, [])


def test_nccl_kernels_missing_for_the_gpu_is_the_architecture(rules):
    """NCCL's 'invalid device function' (nvidia/nccl#444: NCCL not built for sm_35) outranks torch's echo of it."""
    text = ("[0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
            "NCCL version 2.7.8+cuda11.0\n"
            "[3] enqueue.cc:215 NCCL WARN Cuda failure 'invalid device function'\n"
            "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:31, unhandled cuda error, "
            "NCCL version 2.7.8\n")
    assert root_and_shown(rules, text, whole=False)[0] == "gpu-arch-unsupported"
    assert root_and_shown(rules, text)[0] == "gpu-arch-unsupported"


@pytest.mark.parametrize("line", [
    "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= "
    "op.nbytes. 8 vs 4",
    "  what():  [enforce fail at /opt/gloo/gloo/transport/tcp/pair.cc:510] op.preamble.length <= op.nbytes. 40960 vs 32768",
])
def test_gloo_receiving_more_than_its_buffer_is_a_collective_mismatch(rules, line):
    """Ranks passed different sizes to the same gloo collective: the receiver's buffer is too small."""
    assert root_and_shown(rules, line + "\n", whole=False)[0] == "collective-mismatch"


def test_torch2_last_error_naming_the_proxy_is_not_the_shm_default(rules):
    """torch 2.x quotes NCCL's last error under the bare system error: a proxy call that failed is a
    transport failure, not the /dev/shm default a bare system error would suggest."""
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
            "Last error:\nProxy Call to rank 0 failed (Connect)\n")
    assert root_and_shown(rules, text, whole=False)[0] == "nccl-error"
    bare = text.replace("Last error:\nProxy Call to rank 0 failed (Connect)\n", "")
    assert root_and_shown(rules, bare, whole=False)[0] == "shm-too-small"


DUMP_AND_HEARTBEAT = [
    # the flight-recorder dump a timeout triggers (torch 2.2-2.5), on the rank that timed out and on the others
    "[rank1]:[E ProcessGroupNCCL.cpp:1332] [PG 0 Rank 1] Received a timeout signal from this local rank and will start "
    "to dump the debug info. Last enqueued NCCL work: 2, last completed NCCL work: 1.",
    "[rank0]:[E ProcessGroupNCCL.cpp:1370] [PG 0 Rank 0] Received a global timeout from another rank and will start to "
    "dump the debug info. Last enqueued NCCL work: 3, last completed NCCL work: 3.",
    "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal "
    "from another rank via TCPStore.",
    # the heartbeat monitor's view of a stuck watchdog
    "[rank3]:[E ProcessGroupNCCL.cpp:1421] [PG ID 0 PG GUID 0(default_pg) Rank 3] First PG on this rank that detected no "
    "heartbeat of its watchdog.",
    "[rank1]:[F ProcessGroupNCCL.cpp:1308] [PG ID 0 PG GUID 0(default_pg) Rank 1] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
    "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
]


@pytest.mark.parametrize("line", DUMP_AND_HEARTBEAT)
def test_dump_and_heartbeat_notices_are_the_collective_timeout(rules, line):
    assert root_and_shown(rules, line + "\n", whole=False)[0] == "collective-timeout"


@pytest.mark.parametrize("line", DUMP_AND_HEARTBEAT[:3])
def test_dump_notices_yield_to_the_rank_that_failed(rules, line):
    """The dump is the echo of a timeout: a rank's own error elsewhere in the log comes first."""
    text = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
            "capacity of 23.69 GiB of which 1.10 GiB is free.\n" + line + "\n")
    assert root_and_shown(rules, text, whole=False)[0] == "out-of-memory"


def test_a_healthy_run_with_flight_recorder_settings_stays_clean(rules):
    """The settings banner names TORCH_NCCL_DUMP_ON_TIMEOUT and the timeout without any timeout happening."""
    text = ("[rank0]:[I ProcessGroupNCCL.cpp:861] [PG 0 Rank 0] ProcessGroupNCCL environments: NCCL version: 2.20.5, "
            "TORCH_NCCL_ASYNC_ERROR_HANDLING: 1, TORCH_NCCL_DUMP_ON_TIMEOUT: 1, TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC: "
            "60000, TORCH_NCCL_DESYNC_DEBUG: 0, TORCH_NCCL_ENABLE_MONITORING: 1, TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: 480, "
            "TORCH_NCCL_TRACE_BUFFER_SIZE: 2000\n"
            "Epoch 1/3: 100%|##########| 500/500 [01:10<00:00, 7.10it/s, loss=0.412]\n")
    assert root_and_shown(rules, text, whole=False) == (None, [])


@pytest.mark.parametrize("error", [
    # vLLM on Windows (SystemPanic/vllm-windows#19), RVC WebUI on Windows (RVC-Project/...#2674)
    "RuntimeError: makeDeviceForHostname(): unsupported gloo device",
    # the libuv factory of torch's Windows builds (IAHispano/Applio#137)
    "RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty",
])
def test_gloo_failing_to_build_its_device_from_the_hostname_is_the_interface(rules, error):
    text = ("Traceback (most recent call last):\n"
            "  File \"C:\\\\app\\\\train.py\", line 129, in run\n    dist.init_process_group(\n"
            "  File \"C:\\\\app\\\\Lib\\\\site-packages\\\\torch\\\\distributed\\\\distributed_c10d.py\", line 994, in "
            "_new_process_group_helper\n"
            "    backend_class = ProcessGroupGloo(backend_prefix_store, group_rank, group_size, timeout=timeout)\n"
            + error + "\n")
    assert root_and_shown(rules, text, whole=False)[0] == "wrong-network-interface"


@pytest.mark.parametrize("line", [
    # NVLS (NVLink SHARP multicast) set-up failing in a CUDA call (NCCL 2.26, NVIDIA/nccl#1788 and #1672)
    "[2025-07-21 19:05:29] node004:27907:27907 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation "
    "cannot be performed in the present state'",
    "node1:1:2 [0] transport/nvls.cc:598 NCCL WARN Cuda failure 1 'invalid argument'",
    # nodes that disagree on the transport (one fell back from IB to sockets: nccl-tests#188, LlamaFactory#3641)
    "user:16902:16954 [3] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
])
def test_nvls_and_transport_disagreement_are_nccl_errors(rules, line):
    assert root_and_shown(rules, line + "\n", whole=False)[0] == "nccl-error"


def test_nvls_availability_notes_stay_clean(rules):
    text = ("node1:1:9 [0] NCCL INFO NVLS multicast support is not available on dev 0 (NVLS_NCHANNELS 0)\n"
            "node1:1:9 [1] NCCL INFO NVLS multicast support is available on dev 1\n"
            "node1:1234:1250 [0] NCCL WARN NVLS multicast support is not available on dev 0\n")
    assert root_and_shown(rules, text, whole=False) == (None, [])


MPI_TCP = [
    # Open MPI's help text: a TCP connection between hosts of the job that could not be opened (firewall)
    ("A process or daemon was unable to complete a TCP connection\nto another process:\n  Local host:    node2\n"
     "  Remote host:   node25\nThis is usually caused by a firewall on the remote host. Please\ncheck that any "
     "firewall (e.g., iptables) has been disabled and\ntry again.", "network-unreachable"),
    # the TCP BTL reaching another host through a bridge that has the same address everywhere
    ("[node1][[12345,1],0][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process "
     "identifier [[12345,1],2]", "wrong-network-interface"),
    ("WARNING: Open MPI accepted a TCP connection from what appears to be a\nanother Open MPI process but cannot find a "
     "corresponding process\nentry for that peer.", "wrong-network-interface"),
]


@pytest.mark.parametrize("text,root", MPI_TCP)
def test_open_mpi_tcp_transport_failures(rules, text, root):
    assert root_and_shown(rules, text + "\n", whole=False)[0] == root
    assert root_and_shown(rules, "".join(f"[1,0]<stderr>:{line}\n" for line in text.splitlines()))[0] == root
