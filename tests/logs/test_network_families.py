"""Network, rendezvous and NCCL failures are recognised by family (torch 1.x and 2.x, several NCCL
versions and launchers), and the harmless lines of those families never raise a warning."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown



FAILING = [
    # c10d store, several torch generations
    ("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234",
     "network-unreachable"),
    ("torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
     "(10.0.0.2, 1040). The client socket has failed to connect to 10.0.0.2:1040 (errno: 113 - No route to host).",
     "network-unreachable"),
    ("RuntimeError: Connection timed out", "network-unreachable"),
    ("torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.",
     "ranks-missing-at-rendezvous"),
    ("RuntimeError: Timed out initializing process group in store based barrier on rank 3, for key: "
     "store_based_barrier_key:1 (world_size=16, num_workers_joined=8, timeout=0:30:00)", "ranks-missing-at-rendezvous"),
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/device.cc:124] getaddrinfo: Name or service not known",
     "master-addr-unresolvable"),
    # gloo picking the loopback address the hostname resolves to
    ("RuntimeError: [/opt/conda/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:769] connect [127.0.1.1]:45747: "
     "Connection refused", "wrong-network-interface"),
    # NCCL socket wordings across versions
    # no route to the address a peer's NCCL advertised: that peer's interface choice (test_hang_families5)
    ("node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned "
     "113(No route to host) errno 115(Operation now in progress)", "wrong-network-interface"),
    ("gpu1:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out",
     "network-unreachable"),
    ("host3:4153:4209 [1] include/socket.h:361 NCCL WARN Call to connect timeout : Connection refused",
     "network-unreachable"),
    ("host1:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol",
     "wrong-network-interface"),
    # a bare system error points at /dev/shm; WARN lines or bridge interfaces change the reading
    ("RuntimeError: NCCL Error 2: unhandled system error", "shm-too-small"),
    ("ncclSystemError: System call (socket, malloc, munmap, etc) failed.", "shm-too-small"),
    ("host1:2:2 [0] NCCL INFO NET/Socket : Using [0]bond0:192.168.1.161<0> [1]br-05ab815fa14e:172.19.0.1<0>\n"
     "ncclSystemError: System call (socket, malloc, munmap, etc) failed.", "wrong-network-interface"),
    ("host1:2:2 [0] transport/net_ib.cc:90 NCCL WARN NET/IB : some unknown failure\n"
     "RuntimeError: NCCL Error 2: unhandled system error", "nccl-error"),
    ("NCCL WARN Error: failed to extend /dev/shm/nccl-03v824 to 4194660 bytes", "shm-too-small"),
    # timeouts in older and newer wordings
    ("[E ProcessGroupNCCL.cpp:566] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
     "Timeout(ms)=1800000) ran for 1806034 milliseconds before timing out.", "collective-timeout"),
    ("[Rank 1] Work WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) timed out in "
     "blocking wait.", "collective-timeout"),
    ("torch.distributed.DistBackendError: [4] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
     "c10d key-value store by key '0', but store->get('0') got error: Socket Timeout", "collective-timeout"),
    ("#8  0x000055e5186123ee in testStreamSynchronize (ngpus=<optimized out>, streams=0x7ffde5e81cf0) at common.cu:479",
     "collective-timeout"),
    # launchers
    ("ssh: Could not resolve hostname node-0: Name or service not known", "hostfile-invalid"),
    ("ConnectionError: Tried to launch distributed communication on port `29144`, but another process is utilizing it.",
     "master-port-in-use"),
]


@pytest.mark.parametrize("text,want", FAILING, ids=[w + "-" + str(i) for i, (_, w) in enumerate(FAILING)])
def test_failure_families_name_their_cause(rules, text, want):
    root, shown = root_and_shown(rules, text, whole=False)
    assert root == want
    assert shown and shown[0] == want


HARMLESS = [
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 "
    "(errno: 99 - Cannot assign requested address).",
    "[W socket.cpp:558] [c10d] The client socket cannot be initialized to connect to [localhost]:29500 "
    "(errno: 97 - Address family not supported by protocol).",
    "[W506 00:43:56.240378877 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=3, addr=[host1]:47466, "
    "remote=[host1]:29500): Connection reset by peer",
    "[rank2]:[W810 23:02:42.715262216 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank 2] Failed to check the "
    "\"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer",
    "host1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "[rank0]:[W825 13:09:39.967659278 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not "
    "called before program exit, which can leak resources.",
]


@pytest.mark.parametrize("text", HARMLESS, ids=range(len(HARMLESS)))
def test_harmless_lines_stay_clean(rules, text):
    assert root_and_shown(rules, text, whole=False)[1] == []
