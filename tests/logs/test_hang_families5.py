"""Network, NCCL-interface and MPI-launch failures recognised by family (session 5, logs-hang5).

Each family is several public wordings of one meaning; near misses (the same words in a context that
does not carry the meaning) and harmless lines stay quiet."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

# NCCL dialled an address the kernel has no route to: the interface a peer advertised, not the store.
NO_ROUTE = [
    "socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host",
    "NCCL WARN Net : Connect to 10.1.1.2<37547> failed : No route to host",
    "node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned "
    "113(No route to host) errno 115(Operation now in progress)",
    "host1:77:90 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.2.0.5<41000> failed : "
    "Network is unreachable",
]

# NCCL dialled a peer address that is never routable between hosts, whatever the socket error says.
UNROUTABLE_ADDRESS = [
    "node-a:12251:12400 [5] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to "
    "fe80::966d:ae03:a2:8cf0%ib1<17943> failed : Software caused connection abort",
    "socketPollConnect: connect to 169.254.20.10<52597> returned Connection refused",
    "host1:51:60 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 127.0.1.1<35001> failed : "
    "Connection refused",
]


@pytest.mark.parametrize("line", NO_ROUTE + UNROUTABLE_ADDRESS)
def test_nccl_peer_connections_the_interface_cannot_carry_are_the_interface(rules, line):
    root, shown = root_and_shown(rules, line)
    assert root == "wrong-network-interface"
    assert shown[0] == "wrong-network-interface"


# Near miss: a refused/aborted connection to an ordinary address is a firewall or a dead peer.
ROUTABLE_PEER_REFUSED = [
    "socketStartConnect: Connect to 10.0.0.2<43651> failed : Software caused connection abort",
    "host2:4153:4209 [1] include/socket.h:361 NCCL WARN Call to connect timeout : Connection refused",
]


PINNED = [
    "$ mpirun -np 2 -pernode -hostfile host.txt -x NCCL_SOCKET_IFNAME=enp6s0 ./build/all_reduce_perf -b 8 -e 128M",
    "host3:63755:63755 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eno1",
    "node-1:32726:33054 [0] NCCL INFO NCCL_SOCKET_IFNAME set to ib0",
    "export NCCL_SOCKET_IFNAME==enp90s0np0",
]
GENERIC_INIT_ERRORS = [
    "node-b: Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL developers / '",
    "torch.distributed.DistBackendError: NCCL error in: /opt/conda/conda-bld/pytorch_1682343995622/work/torch/"
    "csrc/distributed/c10d/ProcessGroupNCCL.cpp:1207, internal error, NCCL version 2.14.3\n"
    "ncclInternalError: Internal check failed.",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error "
    "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
]


@pytest.mark.parametrize("pinned", PINNED)
@pytest.mark.parametrize("error", GENERIC_INIT_ERRORS)
def test_a_generic_nccl_setup_error_under_a_pinned_interface_names_the_interface(rules, pinned, error):
    root, shown = root_and_shown(rules, pinned + "\n" + error)
    assert root == "wrong-network-interface"

EXCLUDED = [  # an exclusion list is not a pinned interface
    "host1:55:55 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ^docker0,lo",
    "export NCCL_SOCKET_IFNAME=^lo,docker",
]
# An IB completion error says what failed; the pinned name is then no longer the first suspect.
PINNED_WITH_A_REASON = ("export NCCL_SOCKET_IFNAME=ib0\n"
                        "host1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, "
                        "opcode 1, len 0, vendor err 129\n"
                        "ncclInternalError: Internal check failed.")
PINNED_HEALTHY = ("host1:10:10 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
                  "host1:10:10 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                  "Epoch 1: 100%|##########| 50/50 [00:10<00:00, 5.00it/s, loss=0.31]")


# mpirun could not start its daemons on the other hosts: the launch never reached them.
ORTE = ("--------------------------------------------------------------------------\n"
        "ORTE was unable to reliably start one or more daemons.\n"
        "This usually is caused by:\n")

DAEMONS_LOST = [
    ORTE,
    "ORTE has lost communication with a remote daemon.\n",
    "An ORTE daemon has unexpectedly failed after launch and before\ncommunicating back to mpirun.\n",
]


@pytest.mark.parametrize("ssh", [
    "ssh: Could not resolve hostname localhost:4: Name or service not known",
    "ssh: Could not resolve hostname localhost:1: Temporary failure in name resolution",
    "ssh: Could not resolve hostname sleepy: nodename nor servname provided, or not known",
])
def test_a_host_list_entry_ssh_cannot_resolve_is_the_host_list(rules, ssh):
    root, shown = root_and_shown(rules, ssh + "\n" + ORTE)
    assert root == "hostfile-invalid"
    assert shown == ["hostfile-invalid"]  # the generic daemon-start failure is explained by it

SSH_UNREACHABLE = [
    "ssh: connect to host 192.168.11.1 port 50000: Connection refused",
    "ssh: connect to host node2 port 22: No route to host",
]
SSH_HEALTHY = ("Warning: Permanently added 'node2,10.0.0.2' (ECDSA) to the list of known hosts.\n"
               "[1,0]<stdout>:epoch 0 loss 2.31\n[1,1]<stdout>:epoch 0 loss 2.29\n")


TAKEDOWN = ("[E ProcessGroupNCCL.cpp:488] Some NCCL operations have failed or timed out. Due to the asynchronous "
            "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
            "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process down.\n")


def test_the_watchdog_takedown_yields_to_the_error_it_follows(rules):
    text = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
            "capacity; 76.20 GiB already allocated)\n" + TAKEDOWN)
    root, shown = root_and_shown(rules, text)
    assert root == "out-of-memory"
    assert "collective-timeout" not in shown


STORE_WAIT_RAN_OUT = [
    "waitForInput: poll for socket SocketImpl(fd=66, addr=[::ffff:10.164.0.78]:50434, "
    "remote=[::ffff:10.164.0.78]:29500) returned 0, likely a timeout",
    "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, "
    "addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms",
]


# Several copies that each run with no distributed world: the launcher's variables never reached them.
SOLO = [
    "Not using distributed mode",
    "[2024-03-01 10:00:01] Distributed environment: NO",
    "Distributed environment: DistributedType.NO",
    "Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: False, 16-bits training: True",
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/1",
]
TRAINING = "Epoch: [0]  [  10/5005]  eta: 1:20:01  lr: 0.1  loss: 6.9122 (6.9138)  time: 0.9613  data: 0.5098"


@pytest.mark.parametrize("announce", SOLO)
def test_copies_that_each_run_alone_miss_the_launcher_variables(rules, announce):
    text = f"{announce}\nNamespace(batch_size=64, epochs=300)\n{announce}\n{TRAINING}\n{TRAINING}\n"
    assert root_and_shown(rules, text)[1] == ["launcher-env-missing"]  # a check on symptoms: no root-cause line


def test_copies_under_mpirun_labels_count_too(rules):
    text = ("[1,0]<stdout>:Not using distributed mode\n[1,1]<stdout>:Not using distributed mode\n"
            f"[1,0]<stdout>:{TRAINING}\n[1,1]<stdout>:{TRAINING}\n")
    assert "launcher-env-missing" in root_and_shown(rules, text)[1]

SECOND_RUN = f"Not using distributed mode\n{TRAINING}\nEpoch: [0] Total time: 1:10:00\nNot using distributed mode\n{TRAINING}\n"
RESTART = ("Not using distributed mode\nTraceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n"
           "FileNotFoundError: [Errno 2] No such file or directory: 'data/train'\nNot using distributed mode\n")


# Open MPI's TCP transport (BTL) between the hosts of an mpirun job.
BTL = "[node1][[63694,1],2][btl_tcp_endpoint.c:800:mca_btl_tcp_endpoint_complete_connect] connect() to {addr} failed: {why}"

OPENFABRICS_UNUSED = ("WARNING: There was an error initializing an OpenFabrics device.\n\n  Local host:   node1\n"
                      "  Local device: mlx5_0\n[1,0]<stdout>:Epoch 1 loss 0.52\n[1,1]<stdout>:Epoch 1 loss 0.51\n")


def _rows(name: str, texts: list, *values: str) -> list:
    return [pytest.param(text, *values, id=f"{name}-{i}") for i, text in enumerate(texts)]


# A wording and the root cause it must be.
ROOT_CAUSE = [
    *_rows("routable-peer-refused", ROUTABLE_PEER_REFUSED, "network-unreachable"),
    pytest.param(PINNED_WITH_A_REASON, "nccl-error", id="pinned-with-a-reason"),
    *_rows("mpi-daemons-lost", DAEMONS_LOST, "network-unreachable"),
    *_rows("ssh-unreachable", [ssh + "\n" + ORTE for ssh in SSH_UNREACHABLE], "network-unreachable"),
    # all that reached the paste is NCCL taking the process down: a collective failed or timed out
    pytest.param(TAKEDOWN, "collective-timeout", id="watchdog-takedown-alone"),
    *_rows("store-wait-ran-out", STORE_WAIT_RAN_OUT, "collective-timeout"),
    # Open MPI's TCP transport: a peer refusing or dropping is reachability
    *_rows("btl-peer-refuses", [BTL.format(addr="10.1.2.3", why="Connection timed out (110)"),
                                BTL.format(addr="10.1.2.3", why="Connection refused (111)")], "network-unreachable"),
    # an address of the peer this host cannot route to, docker0's own address (present on every host), libvirt's
    # virbr0 likewise: the wrong interface
    *_rows("btl-wrong-interface", [BTL.format(addr="172.16.128.11", why="No route to host (113)"),
                                   BTL.format(addr="172.17.0.1", why="Connection refused (111)"),
                                   BTL.format(addr="192.168.122.1", why="Connection timed out (110)")],
           "wrong-network-interface"),
]


@pytest.mark.parametrize(("text", "want"), ROOT_CAUSE)
def test_each_wording_has_its_root_cause(rules, text, want):
    assert root_and_shown(rules, text)[0] == want


# Near misses: what they must not be shown as.
NOT_SHOWN = [
    # no interface was named, so the interface is no suspect
    *_rows("generic-error-unpinned", GENERIC_INIT_ERRORS, "wrong-network-interface"),
    *_rows("exclusion-list", [pinned + "\n" + GENERIC_INIT_ERRORS[0] for pinned in EXCLUDED],
           "wrong-network-interface"),
    pytest.param(RESTART, "launcher-env-missing", id="restart-after-failure"),
]


@pytest.mark.parametrize(("text", "absent"), NOT_SHOWN)
def test_near_misses_are_not_shown_as_that(rules, text, absent):
    assert absent not in root_and_shown(rules, text)[1]


# Healthy runs carrying the alarming-looking lines: no root cause, nothing shown.
QUIET = [
    pytest.param(PINNED_HEALTHY, id="pinned-interface-healthy"),
    pytest.param(SSH_HEALTHY, id="ssh-warnings-healthy"),
    *_rows("one-process-alone", [f"{announce}\n{TRAINING}\n{TRAINING}\n" for announce in SOLO]),
    pytest.param(SECOND_RUN, id="second-run-later"),
    pytest.param(OPENFABRICS_UNUSED, id="openfabrics-unused"),
]


@pytest.mark.parametrize("text", QUIET)
def test_healthy_runs_stay_quiet(rules, text):
    assert root_and_shown(rules, text) == (None, [])
