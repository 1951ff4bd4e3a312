"""Log families no finding covered before (issue 11, session 3): a CUDA kernel fault or a GPU hardware
fault, reported asynchronously at a later call. Each family is pinned by several real wordings (torch 1.x
THC, torch 2.x c10, NCCL's WARN lines, ROCm, the driver's Xid lines), with near misses and healthy lines
that must stay quiet."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, findings_of, root_and_shown, torchrun_summary



ASYNC_NOTE = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
              "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
              "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")

TRACEBACK = ('Traceback (most recent call last):\n  File "/w/train.py", line 88, in <module>\n    main()\n'
             '  File "/w/train.py", line 61, in main\n    loss.backward()\n')

KERNEL_FAULTS = [
    TRACEBACK + "RuntimeError: CUDA error: an illegal memory access was encountered\n" + ASYNC_NOTE,
    "[rank0]:[E504 22:44:08.389636235 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process "
    "group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered\n"
    + ASYNC_NOTE + "terminate called after throwing an instance of 'c10::DistBackendError'\n",
    "node1:10225:10549 [0] enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n"
    "node1:10225:10549 [0] NCCL INFO group.cc:231 -> 1\n",
    "RuntimeError: cuda runtime error (700) : an illegal memory access was encountered at "
    "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:278\n",
    TRACEBACK + "RuntimeError: CUDA error: unspecified launch failure\n" + ASYNC_NOTE,
    TRACEBACK + "RuntimeError: CUDA error: misaligned address\n" + ASYNC_NOTE,
    TRACEBACK + "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, "
    "opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n",
    TRACEBACK + "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n",
    "Memory access fault by GPU node-2 (Agent handle: 0x55d1c2f0) on address 0x7f3a00000000. Reason: Page not "
    "present or supervisor privilege.\n",
    "[ 812.112233] NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS\n",
]


@pytest.mark.parametrize("text", KERNEL_FAULTS)
def test_kernel_faults_are_one_family(rules, text):
    root, ids = root_and_shown(rules, text)
    assert root == "cuda-kernel-fault"
    assert ids[0] == "cuda-kernel-fault"


HARDWARE_FAULTS = [
    TRACEBACK + "RuntimeError: CUDA error: uncorrectable ECC error encountered\n" + ASYNC_NOTE,
    "RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
    "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265\nterminate called without an active exception\n",
    "[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: CUDA error: "
    "uncorrectable ECC error encountered\n" + ASYNC_NOTE,
    "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, GPU has fallen off the bus.\n",
    "NVRM: Xid (PCI:0000:18:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been "
    "detected on GPU in the framebuffer at partition 6, subpartition 0.\n",
]


@pytest.mark.parametrize("text", HARDWARE_FAULTS)
def test_gpu_hardware_faults_are_named_as_hardware(rules, text):
    facts = analyse(rules, text)
    assert (facts.get("log.root_cause") or {}).get("id") == "cuda-kernel-fault"
    first = findings_of(rules, facts)[0]
    assert first.id == "cuda-kernel-fault"
    assert "hardware" in first.title


def test_a_kernel_fault_outranks_the_collective_timeouts_and_teardown_it_causes(rules):
    failing = TRACEBACK + "RuntimeError: CUDA error: an illegal memory access was encountered\n" + ASYNC_NOTE
    text = ("".join(f"[rank1]:{line}\n" for line in failing.splitlines())
            + "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600091 "
            "milliseconds before timing out.\n" + torchrun_summary(1, killed=((0, 15),)))
    root, ids = root_and_shown(rules, text)
    assert root == "cuda-kernel-fault"
    assert ids[0] == "cuda-kernel-fault"


def test_a_kernel_assertion_still_names_the_cause_before_the_illegal_access_echo(rules):
    text = ("/w/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [194,0,0], thread: "
            "[96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n" + TRACEBACK
            + "RuntimeError: CUDA error: device-side assert triggered\n" + ASYNC_NOTE
            + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    root, _ = root_and_shown(rules, text)
    assert root == "cuda-device-assert"


QUIET = [
    # nvidia-smi's table and query output name ECC and Xid without any fault
    "| N/A   34C    P0    56W / 400W |      0MiB / 81920MiB |      0%      Default |\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n",
    "    ECC Errors\n        Volatile\n            DRAM Uncorrectable      : 0\n",
    # the advice lines torch prints, alone, and users' own settings
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nexport CUDA_LAUNCH_BLOCKING=1\n",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
    # prose near misses: no CUDA error framing around the words
    "note: the struct uses a misaligned address for packing\n",
    "Epoch 3 | step 400 | loss 0.412 | checked for illegal memory accesses: none\n",
]


@pytest.mark.parametrize("text", QUIET)
def test_healthy_lines_about_ecc_and_cuda_errors_stay_quiet(rules, text):
    root, ids = root_and_shown(rules, text)
    assert root is None
    assert "cuda-kernel-fault" not in ids


IPV6_GAI = ("[W1008 23:40:22.781961348 socket.cpp:767] [c10d] The IPv6 network addresses of (job-host1.internal, "
            "50745) cannot be retrieved (gai error: -2 - Name or service not known).\n")
STORE_FAILURES = [
    "[W1008 23:40:22.836678340 socket.cpp:767] [c10d] The client socket has failed to connect to "
    "[job-host1.internal]:50745 (errno: 22 - Invalid argument).\n",
    "torch.distributed.DistNetworkError: The client socket has timed out after 900000ms while trying to connect to "
    "(job-host1.internal, 50745).\n",
    "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
    "(job-host1.internal, 50745).\n",
]


@pytest.mark.parametrize("failure", STORE_FAILURES)
@pytest.mark.parametrize("ipv6_first", [True, False])
def test_an_unresolvable_name_explains_the_store_failure_in_either_order(rules, failure, ipv6_first):
    text = IPV6_GAI * 3 + failure if ipv6_first else failure + IPV6_GAI * 3
    _, ids = root_and_shown(rules, text)
    assert ids[0] == "master-addr-unresolvable"


def test_ipv6_lookup_warnings_alone_stay_quiet_in_a_run_that_trains(rules):
    text = IPV6_GAI * 4 + "".join(f"[rank0]: epoch 0 step {step} loss 0.{step}\n" for step in range(1, 6))
    root, ids = root_and_shown(rules, text)
    assert root is None
    assert ids == []


def test_a_kernel_fault_without_rank_prefixes_still_precedes_the_crash_it_explains(rules):
    text = (TRACEBACK + "RuntimeError: CUDA error: an illegal memory access was encountered\n" + ASYNC_NOTE
            + torchrun_summary(1, killed=((0, 15),)))
    _, ids = root_and_shown(rules, text)
    assert ids[0] == "cuda-kernel-fault"


SAVE_TRACEBACK = ('Traceback (most recent call last):\n  File "/env/lib/python3.10/site-packages/torch/serialization.py", '
                  'line 652, in save\n    _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n')
DISK_WRITES = [
    SAVE_TRACEBACK + "RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file "
    "data/3: file write failed\n",
    "[rank0]: RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file data.pkl: "
    "file write failed\n",
    "RuntimeError: [enforce fail at ..\\caffe2\\serialize\\inline_container.cc:337] . unexpected pos 190007680 vs "
    "190007572\n",
    "OSError: [Errno 28] No space left on device: '/ckpt/run1/checkpoint-2000/optimizer.pt'\n",
    "OSError: [Errno 122] Disk quota exceeded: '/home/USER/.cache/huggingface/datasets/tmp1234'\n",
    "PermissionError: [Errno 30] Read-only file system: '/models/output'\n",
]


@pytest.mark.parametrize("text", DISK_WRITES)
def test_failed_disk_writes_are_one_family(rules, text):
    root, ids = root_and_shown(rules, text)
    assert root == "disk-write-failed"
    assert ids[0] == "disk-write-failed"


def test_a_torn_save_announced_by_every_rank_is_the_unguarded_save(rules):
    text = ("[rank0]: Saving model checkpoint to out/checkpoint-10\n[rank1]: Saving model checkpoint to out/checkpoint-10\n"
            "[rank1]: RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file "
            "data/3: file write failed\n")
    root, _ = root_and_shown(rules, text)
    assert root == "logging-from-all-ranks"


@pytest.mark.parametrize("text", [
    "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device\n",
    "RuntimeError: unable to write to file </torch_18_1474829281_0>: No space left on device (28)\n",
    "OSError: [Errno 28] No space left on device: '/dev/shm/psm_1234'\n",
])
def test_shared_memory_that_fills_up_stays_shm(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "shm-too-small"


@pytest.mark.parametrize("text", [
    "No space left for more buckets in histogram (harmless)\n",
    "INFO: mounting /datasets as a read-only file system for the loaders\n",
])
def test_words_about_space_and_read_only_mounts_stay_quiet(rules, text):
    root, ids = root_and_shown(rules, text)
    assert root is None and ids == []


AGENT_SIGTERM = ("W0501 12:00:00.123000 140 torch/distributed/elastic/agent/server/api.py:704] Received 15 death signal, "
                 "shutting down workers\nW0501 12:00:00.124000 140 torch/distributed/elastic/multiprocessing/api.py:897] "
                 "Sending process 141 closing signal SIGTERM\nTraceback (most recent call last):\n"
                 '  File "/env/bin/torchrun", line 8, in <module>\n    sys.exit(main())\n'
                 "torch.distributed.elastic.multiprocessing.api.SignalException: Process 140 got signal: 15\n")
PROGRESS = "".join(f"[rank0]: epoch 3 step {step} loss 0.41\n" for step in range(1200, 1203))


@pytest.mark.parametrize("text", [
    PROGRESS + AGENT_SIGTERM,
    "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n"
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 165 closing signal SIGTERM\n",
    PROGRESS + "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1359 got signal: 15\n",
])
def test_a_sigterm_to_the_launcher_with_no_earlier_failure_is_an_outside_stop(rules, text):
    facts = analyse(rules, text)
    first = findings_of(rules, facts)[0]
    assert first.id == "terminated-externally"
    assert "from outside" in first.title


@pytest.mark.parametrize(("banner", "word"), [
    # a bare cancellation banner is also printed when srun ends a step after one task failed: not evidence
    ("slurmstepd: error: *** STEP 1234.0 ON gpu-node-1 CANCELLED AT 2024-05-01T10:00:00 ***", "from outside"),
    ("slurmstepd: error: *** JOB 5678 ON gpu-node-3 CANCELLED AT 2024-05-01T10:00:00 DUE TO PREEMPTION ***", "preempted"),
])
def test_the_scheduler_banner_names_who_stopped_the_job(rules, banner, word):
    facts = analyse(rules, PROGRESS + banner + "\n" + AGENT_SIGTERM)
    first = findings_of(rules, facts)[0]
    assert first.id == "terminated-externally"
    assert word in first.title


@pytest.mark.parametrize(("before", "cause"), [
    ("slurmstepd: error: *** STEP 32233190.0 ON host1 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***\n",
     "scheduler-time-limit"),
    ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
     "79.15 GiB of which 1.25 MiB is free.\n", "out-of-memory"),
    ("[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Watchdog caught collective operation timeout: WorkNCCL("
     "SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600091 milliseconds before "
     "timing out.\n", "collective-timeout"),
])
def test_an_earlier_failure_is_the_cause_of_the_sigterm(rules, before, cause):
    _, ids = root_and_shown(rules, PROGRESS + before + AGENT_SIGTERM)
    assert ids[0] == cause


def test_torchruns_own_teardown_after_a_worker_failed_is_not_an_outside_stop(rules):
    text = ('[rank1]: Traceback (most recent call last):\n[rank1]:   File "/w/train.py", line 4, in <module>\n'
            "[rank1]: ValueError: bad shape\nW0501 12:00:00.124000 140 torch/distributed/elastic/multiprocessing/"
            "api.py:897] Sending process 141 closing signal SIGTERM\n" + torchrun_summary(1, killed=((0, 15),)))
    _, ids = root_and_shown(rules, text)
    assert "terminated-externally" not in ids
