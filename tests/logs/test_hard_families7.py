"""Hard log families (logs-hard7): failures whose only evidence is a platform error, an exit code, or a
line that names its cause elsewhere.

- CUDA error 802 (cudaErrorSystemNotReady, "system not yet initialized") is one family whoever asked
  CUDA first: torch 1.x's THC error, torch 2.x's start-up warning (after which torch sees no GPU),
  the CUDA samples, other runtimes. On NVSwitch machines it means the fabric manager is not running;
  the generic "CUDA is unusable" reading (an invalid device) hides that. Other CUDA initialisation
  errors (no device, a driver too old for the build) keep their own diagnoses.
- Ray's memory monitor words a host-memory kill two ways: the OutOfMemoryError a task raises, and the
  raylet's periodic summary "N Workers (tasks / actors) killed due to memory pressure (OOM)". The
  summary counts OOM kills only when N > 0; a worker that died for another reason stays a crash.
- A rank killed by a signal is worded by every launcher and wrapper, and decoding the signal is the
  diagnosis when nothing else is printed: MPICH/Intel MPI's hydra ("KILLED BY SIGNAL: 9 (Killed)", or the
  signal number as "EXIT CODE: 9" in its banner), kubectl describe's padded "Exit Code:    137" (128 + N),
  Python's multiprocessing repr ("exitcode=-SIGKILL"), and any wrapper that reports a subprocess's
  negative return code ("failed with exit code -9": Ray's job status). An error printed before the kill
  (a CUDA fault whose rank the launcher then killed) stays the cause; exit codes 0/1 never decode.
- An orchestrator that only says the job failed (Kubernetes' BackoffLimitExceeded, Kubeflow's "PyTorchJob x
  is failed because 1 Worker replica(s) failed") makes a failing log, never a clean one; a cause printed
  with it (an OOMKilled pod) still comes first.
- The shell's own report of a job stopped by SIGTERM ("line 4: 12345 Terminated  torchrun ...", a bare
  "Terminated", bash's "[1]+ Terminated") is a failure, never clean; after the scheduler's time limit it is that limit.
- A pool that lost a worker without an exception (concurrent.futures' BrokenProcessPool, HF datasets' map
  "One of the subprocesses has abruptly died") is a failure, never clean; a kill printed with it wins.
- Symptom-only logs: the steps of an epoch are read from tqdm's ascii bar too ("|##########| 1563/1563 [")
  and Lightning's "Starting with N processes" declares a world size, so a log comparing 1 and 2 processes
  whose epochs did not shrink says the data is not sharded; epochs that halved stay quiet.
- NCCL's "WARN Cuda failure [code] '<CUDA error>'" (round s9): a reason that names a cause keeps it (out of
  memory, no kernel for this GPU); any other reason is an NCCL error, never an unrecognized failure; NCCL's
  INFO lines about CUDA stay quiet. A driver older than the build ("API call is not supported in the
  installed CUDA driver", cudaErrorCallRequiresNewerDriver) is a version mismatch in every wording.
- A debugger's or Open MPI's signal report ("received signal SIGBUS, Bus error.", "Program terminated with
  signal SIGKILL", "[host:pid] Signal: Bus error (7)") decodes like the launchers' exit codes.
- Horovod's "has been shut down. This was caused by an exception on one of the ranks" is the other ranks'
  echo: a rank's own failure printed before it comes first; alone it says a rank crashed.
- The store client's connection failures (client socket timed out / failed to connect) in the elastic
  agent's teardown after its workers succeeded are harmless, like the other teardown echoes.
"""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

SYSTEM_NOT_READY = [
    "RuntimeError: cuda runtime error (802) : system not yet initialized at /pytorch/aten/src/THC/THCGeneral.cpp:47",
    "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
    "functions before calling NumCudaDevices() that might have already set an error? Error 802: system not "
    "yet initialized (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:112.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\ngpu count: 0",
    "[rank3]: RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
    "calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
    "cudaGetDeviceProperties returned 802\n-> system not yet initialized\n"
    'CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"',
    "RuntimeError: jaxlib/cuda/versions_helpers.cc:113: operation cuInit(0) failed: CUDA_ERROR_SYSTEM_NOT_READY",
]


@pytest.mark.parametrize("text", SYSTEM_NOT_READY)
def test_cuda_error_802_in_any_wording_is_the_fabric_manager(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "fabric-manager-not-running"


OTHER_CUDA_INIT_FAILURES = [
    # no GPU at all, or a driver that cannot run this build: not the fabric manager
    "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
    "functions before calling NumCudaDevices() that might have already set an error? Error 100: no "
    "CUDA-capable device is detected (Triggered internally at /opt/pytorch/c10/cuda/CUDAFunctions.cpp:108.)",
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted "
    "on non supported HW",
    "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.",
]


@pytest.mark.parametrize("text", OTHER_CUDA_INIT_FAILURES)
def test_other_initialisation_failures_are_not_the_fabric_manager(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "fabric-manager-not-running" not in shown


RAY_MEMORY_KILLS = [
    "(raylet) [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: 10 Workers (tasks / actors) "
    "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: e5d9, IP: "
    "10.0.62.231) over the last time period.",
    "(TorchTrainer pid=89392) Worker 0 has failed.\n(raylet) node_manager.cc:3040: 1 Workers (tasks / actors) "
    "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 2c82, IP: "
    "172.31.183.172) over the last time period.",
    # the summary after Ray's own crash report: the memory kill is the reason the worker died
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
    "troubleshoot the problem, check the logs for the dead worker.\n(raylet) node_manager.cc:3040: 2 Workers "
    "(tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node.",
]


@pytest.mark.parametrize("text", RAY_MEMORY_KILLS)
def test_rays_memory_monitor_summary_is_host_out_of_memory(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"


def test_a_ray_summary_without_memory_kills_is_not_out_of_memory(rules):
    text = (
        "(raylet) node_manager.cc:3040: 0 Workers (tasks / actors) killed due to memory pressure (OOM), "
        "1 Workers crashed due to other reasons at node (ID: 2c82, IP: 172.31.183.172) over the last time period."
    )
    _root, shown = root_and_shown(rules, text)
    assert "out-of-memory" not in shown


SIGNAL_EXITS = [
    # (log, decoded diagnosis): hydra (MPICH >= 3.3 / Intel MPI), older hydra, kubectl, multiprocessing, wrappers
    ("===================================================================================\n"
     "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 3 PID 20066 RUNNING AT node01\n"
     "=   KILLED BY SIGNAL: 9 (Killed)\n"
     "===================================================================================", "out-of-memory"),
    ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 92248 RUNNING AT host\n=   EXIT CODE: 9\n"
     "=   CLEANING UP REMAINING PROCESSES\n=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES", "out-of-memory"),
    ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 1 PID 7 RUNNING AT host\n"
     "=   KILLED BY SIGNAL: 11 (Segmentation fault)", "native-crash"),
    ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 7 RUNNING AT host\n=   EXIT CODE: 11", "native-crash"),
    ("=   KILLED BY SIGNAL: 7 (Bus error)", "shm-too-small"),
    ("=   KILLED BY SIGNAL: 6 (Aborted)", "native-crash"),
    ("    State:          Terminated\n      Reason:       Error\n      Exit Code:    137", "out-of-memory"),
    ("    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    139", "native-crash"),
    ("      Exit Code:    135", "shm-too-small"),
    ("AssertionError: <Process name='Process-2' pid=4411 parent=4400 stopped exitcode=-SIGKILL>", "out-of-memory"),
    ("<SpawnProcess name='SpawnProcess-1' pid=77 parent=70 stopped exitcode=-SIGSEGV>", "native-crash"),
    ("Job 'raysubmit_7wNNGHdVi92R8wt2' failed\nStatus message: Job entrypoint command failed with exit code -9, "
     "last available logs (truncated to 20,000 chars):", "out-of-memory"),
    ("CompletedProcess(args=['torchrun', 'train.py'], returncode=-11)", "native-crash"),
    ("AzureMLCompute job failed.\nUserError: Process 'worker 0' exited with code -9", "out-of-memory"),
    # joblib/loky names the signal of the workers it lost
    ("joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was "
     "unexpectedly terminated.\n\nThe exit codes of the workers are {SIGKILL(-9)}", "out-of-memory"),
    ("The exit codes of the workers are {SIGSEGV(-11), SIGSEGV(-11)}", "native-crash"),
    # Windows: the NTSTATUS of a native crash, signed, unsigned or in hex
    ("subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 3221225477.",
     "native-crash"),
    ("Process finished with exit code -1073740791 (0xC0000409)", "native-crash"),
    ("[process exited with code 3221225477 (0xc0000005)]", "native-crash"),
    ("进程已结束，退出代码为 -1073741819 (0xC0000005)", "native-crash"),
]


@pytest.mark.parametrize(("text", "want"), SIGNAL_EXITS)
def test_a_signal_exit_decodes_in_every_launchers_wording(rules, text, want):
    root, _shown = root_and_shown(rules, text)
    assert root == want


def test_an_error_printed_before_the_kill_stays_the_cause(rules):
    text = (
        "    Error text: an illegal memory access was encountered\n\n"
        "===================================================================================\n"
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 0 PID 5490 RUNNING AT gn59\n"
        "=   KILLED BY SIGNAL: 9 (Killed)\n"
        "==================================================================================="
    )
    root, shown = root_and_shown(rules, text)
    assert root == "cuda-kernel-fault" and shown[0] == "cuda-kernel-fault"


NOT_A_SIGNAL = [
    # exit 0 and plain non-zero exits never decode as a signal (a plain failure stays unrecognized)
    "    State:          Terminated\n      Reason:       Completed\n      Exit Code:    0",
    "Status message: Job entrypoint command failed with exit code 1, last available logs:",
    "<Process name='Process-1' pid=12 parent=1 stopped exitcode=1>",
    "CompletedProcess(args=['python', 'eval.py'], returncode=0)",
    "Epoch 9: exit code -90 reported by the metric hook",
    "ERROR CODE: 9 (retrying the download)",
    "Loaded 3221225 samples from shard 0xC00000",
]


@pytest.mark.parametrize("text", NOT_A_SIGNAL)
def test_plain_exit_codes_are_not_signals(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert not {"out-of-memory", "native-crash", "shm-too-small"} & set(shown)


ORCHESTRATOR_FAILURES = [
    "  Warning  BackoffLimitExceeded  2m  job-controller  Job has reached the specified backoff limit\n"
    "pytorch-dist-mnist-master-0   0/1     Error       3          10m",
    "  Warning  PyTorchJobRestarting  7m59s  pytorchjob-controller  PyTorchJob pt-job-1 is restarting because 1 "
    "Master replica(s) failed.",
    "Status:\n  Conditions:\n    Message:  TFJob dist-mnist is failed because 1 Worker replica(s) failed.",
]


@pytest.mark.parametrize("text", ORCHESTRATOR_FAILURES)
def test_an_orchestrator_that_gave_up_is_a_failure_not_a_clean_run(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert shown == ["unrecognized-failure"]


def test_a_cause_printed_with_the_orchestrators_verdict_comes_first(rules):
    text = (
        "pytorch-dist-mnist-worker-0   0/1     OOMKilled   2          5m\n"
        "  Warning  BackoffLimitExceeded  1m  job-controller  Job has reached the specified backoff limit"
    )
    _root, shown = root_and_shown(rules, text)
    assert shown[0] == "out-of-memory"


def test_a_succeeded_kubeflow_job_stays_clean(rules):
    text = (
        "  Normal  PyTorchJobSucceeded  1m  pytorchjob-controller  PyTorchJob default/pytorch-simple successfully "
        "completed.\npytorch-simple-master-0   0/1     Completed   0          12m"
    )
    _root, shown = root_and_shown(rules, text)
    assert shown == []


UNSHARDED_EPOCHS = [
    "world_size: 1\nEpoch 1/10: 100%|##########| 1563/1563 [01:10<00:00, 22.1it/s]\n"
    "world_size: 2\nEpoch 1/10: 100%|##########| 1563/1563 [01:12<00:00, 21.6it/s]\n"
    "Epoch 1/10: 100%|##########| 1563/1563 [01:12<00:00, 21.6it/s]",
    "World size: 1\nEpoch 0: 100%|██████████| 938/938 [00:21<00:00, 43.2it/s, v_num=0]\n"
    "All distributed processes registered. Starting with 2 processes\n"
    "Epoch 0: 100%|██████████| 938/938 [00:25<00:00, 37.5it/s, v_num=1]",
]


@pytest.mark.parametrize("text", UNSHARDED_EPOCHS)
def test_epochs_that_did_not_shrink_with_more_ranks_are_unsharded_data(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert shown == ["missing-distributed-sampler"]


def test_epochs_that_halved_with_twice_the_ranks_stay_quiet(rules):
    text = (
        "world_size: 1\nEpoch 1/10: 100%|##########| 1563/1563 [01:10<00:00, 22.1it/s]\n"
        "world_size: 2\nEpoch 1/10: 100%|##########| 782/782 [00:36<00:00, 21.6it/s]"
    )
    _root, shown = root_and_shown(rules, text)
    assert shown == []


POOL_WORKER_DIED = [
    "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the "
    "future was running or pending.",
    "Map (num_proc=32):  45%|████▌     | 45000/100000 [01:10<01:30, 610 examples/s]\nmultiprocess.pool.RemoteTraceback: "
    "One of the subprocesses has abruptly died during map operation.To debug the error, disable multiprocessing.",
]


@pytest.mark.parametrize("text", POOL_WORKER_DIED)
def test_a_pool_that_lost_a_worker_is_a_failure(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert shown == ["unrecognized-failure"]


def test_the_kill_that_broke_the_pool_comes_first(rules):
    text = (
        "[Mon Mar  4 10:00:00 2024] Out of memory: Killed process 4242 (python) total-vm:80000000kB\n"
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while "
        "the future was running or pending."
    )
    _root, shown = root_and_shown(rules, text)
    assert shown[0] == "out-of-memory"


SHELL_TERMINATED = [
    "Epoch 3: 45%|####5     | 450/1000 [10:00<12:13,  1.33s/it]\nTerminated",
    "train.sh: line 4: 12345 Terminated              torchrun --nproc_per_node=8 train.py",
    "[1]+  Terminated              nohup python -m torch.distributed.launch --nproc_per_node=4 train.py",
]


@pytest.mark.parametrize("text", SHELL_TERMINATED)
def test_a_job_the_shell_reports_terminated_failed(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert shown == ["unrecognized-failure"]


def test_terminated_after_the_time_limit_is_the_time_limit(rules):
    text = (
        "slurmstepd: error: *** STEP 4242.0 ON node7 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***\n"
        "Terminated"
    )
    _root, shown = root_and_shown(rules, text)
    assert shown[0] == "scheduler-time-limit"


def test_a_terminated_container_state_that_completed_stays_quiet(rules):
    text = "    State:          Terminated\n      Reason:       Completed\n      Exit Code:    0"
    _root, shown = root_and_shown(rules, text)
    assert shown == []


# Round s9: NCCL's "WARN Cuda failure [code] '<CUDA error string>'" is one family. A reason that names a
# cause keeps its own diagnosis; any other reason is at least an NCCL error (never an unrecognized
# failure or a clean run); the driver-too-old reason is a version mismatch.
NCCL_CUDA_CALL_FAILED = [
    "host:2532579:2532579 [0] enqueue.cc:336 NCCL WARN Cuda failure 'invalid resource handle'\n"
    "host:2532579:2532579 [0] NCCL INFO enqueue.cc:1382 -> 1\n"
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/home/user/dist.py", line 18, in dist_allreduce\n'
    "[rank1]:     dist.barrier()",
    "2025-04-04T16:57:57.7153695Z [2025-04-04 16:57:39] ip-10-0-9-191:95209:95228 [0] init.cc:416 NCCL WARN "
    "Cuda failure 'operation not supported'\n"
    "2025-04-04T16:57:57.7153889Z ip-10-0-9-191:95209:95228 [0] NCCL INFO init.cc:1397 -> 1",
    "(train_rft pid=2657296) 2024-05-11 14:10:52.227 n176:2657296:2658232 [0] include/alloc.h:102 NCCL WARN "
    "Cuda failure 1 'invalid argument'",
    "node1:12:40 [2] misc/strongstream.cc:53 WARN Cuda failure 'operation not permitted when stream is capturing'",
]


@pytest.mark.parametrize("text", NCCL_CUDA_CALL_FAILED)
def test_a_cuda_call_that_failed_inside_nccl_is_an_nccl_error(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "nccl-error"


NCCL_CUDA_FAILURE_WITH_A_NAMED_CAUSE = [
    ("node1:7:30 [0] enqueue.cc:802 NCCL WARN Cuda failure 'API call is not supported in the installed CUDA driver'",
     "library-version-incompatible"),
    ("host:1:2 [0] init.cc:1234 NCCL WARN Cuda failure 36 'API call is not supported in the installed CUDA driver'",
     "library-version-incompatible"),
    ("node1:7:30 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'", "out-of-memory"),
    ("node1:1:1 [0] enqueue.cc:215 NCCL WARN Cuda failure 'invalid device function'", "gpu-arch-unsupported"),
    ("host:1:2 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 1 'invalid argument'", "nccl-error"),
]


@pytest.mark.parametrize(("text", "want"), NCCL_CUDA_FAILURE_WITH_A_NAMED_CAUSE)
def test_a_cuda_failure_reason_that_names_a_cause_keeps_it(rules, text, want):
    root, _shown = root_and_shown(rules, text)
    assert root == want


def test_a_specific_failure_after_the_cuda_warning_still_comes_first(rules):
    text = (
        "host:1:9 [0] enqueue.cc:336 NCCL WARN Cuda failure 'invalid resource handle'\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
        "capacity; 75.10 GiB already allocated; 1.20 GiB free; 76.00 GiB reserved in total by PyTorch)"
    )
    _root, shown = root_and_shown(rules, text)
    assert shown[0] == "out-of-memory"


NCCL_CUDA_LINES_THAT_ARE_NOT_FAILURES = [
    "host:1:2 [0] NCCL INFO cudaDriverVersion 12020",
    "host:1:2 [0] NCCL INFO Cuda Host Alloc Size 4 pointer 0x7f2b32600200",
    "host:1:2 [0] NCCL INFO init.cc:327 Cuda Host Alloc Size 4 pointer 0x7f2b32600200 seconds: cudaHostAlloc=6.2e-05",
]


@pytest.mark.parametrize("text", NCCL_CUDA_LINES_THAT_ARE_NOT_FAILURES)
def test_nccl_cuda_info_lines_stay_quiet(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert shown == []


# A signal report in the wording of a debugger or of Open MPI's handler decodes like the launchers' exit
# codes: SIGBUS is shared memory, SIGSEGV a native crash, SIGKILL (no other cause) host memory.
DEBUGGER_AND_MPI_SIGNAL_REPORTS = [
    ("[host:03983] *** Process received signal ***\n[host:03983] Signal: Bus error (7)\n"
     "[host:03983] Signal code: Non-existant physical address (2)", "shm-too-small"),
    ('Thread 787 "imagenet_fake_d" received signal SIGBUS, Bus error.\n'
     "0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from "
     "/usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so", "shm-too-small"),
    ("Program received signal SIGSEGV, Segmentation fault.\n0x00007ffff56bdbba in ?? () from "
     "/lib/x86_64-linux-gnu/libc.so.6", "native-crash"),
    ("Program terminated with signal SIGSEGV, Segmentation fault.", "native-crash"),
    ("Program terminated with signal SIGKILL, Killed.", "out-of-memory"),
]


@pytest.mark.parametrize(("text", "want"), DEBUGGER_AND_MPI_SIGNAL_REPORTS)
def test_a_debugger_or_mpi_signal_report_decodes_the_signal(rules, text, want):
    root, _shown = root_and_shown(rules, text)
    assert root == want


def test_a_debugger_that_handled_a_signal_and_went_on_is_not_a_signal_exit(rules):
    # gdb's "Program received signal SIGINT" (the user pressed Ctrl-C in the debugger) is not a crash
    _root, shown = root_and_shown(rules, "Program received signal SIGINT, Interrupt.")
    assert "shm-too-small" not in shown and "native-crash" not in shown and "out-of-memory" not in shown


# Horovod's shutdown message is the other ranks' echo of one rank's failure: that failure comes first,
# and alone the message says a rank crashed (never an unrecognized failure with no diagnosis).
HOROVOD_SHUTDOWN = (
    "[1,0]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the "
    "ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished "
    "execution. If the shutdown was caused by an exception, you should see the exception in the log before "
    "the first shutdown message."
)


def test_horovods_shutdown_alone_says_a_rank_crashed(rules):
    root, _shown = root_and_shown(rules, HOROVOD_SHUTDOWN)
    assert root == "rank-crashed"


def test_the_rank_failure_before_horovods_shutdown_comes_first(rules):
    text = (
        "[1,1]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 10.76 GiB total "
        "capacity; 9.80 GiB already allocated; 5.56 MiB free; 9.95 GiB reserved in total by PyTorch)\n"
        + HOROVOD_SHUTDOWN
    )
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"


# The store client's connection failures in the elastic agent's teardown, after its workers succeeded (the
# rendezvous shutdown reaches a store whose host already exited), are harmless; the same lines before any
# success are a store the workers cannot reach.
AGENT_SUCCEEDED = (
    "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 "
    "seconds for other agents to finish.\n"
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds "
    "for other agents to finish\n"
)
STORE_GONE_AT_TEARDOWN = [
    "[E socket.cpp:957] [c10d] The client socket has timed out after 60s while trying to connect to (node0, 29400).",
    "[W socket.cpp:697] [c10d] The client socket has failed to connect to [node0]:29400 (errno: 113 - No route to host).",
    "[E socket.cpp:793] [c10d] The client socket has failed to connect to any network address of (node0, 29400).",
]


@pytest.mark.parametrize("line", STORE_GONE_AT_TEARDOWN)
def test_the_store_gone_in_the_agents_teardown_after_success_is_clean(rules, line):
    text = AGENT_SUCCEEDED + line + (
        "\nWARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node1_3140_0' has failed to "
        "shutdown the rendezvous '3045048' due to an error of type RendezvousConnectionError."
    )
    _root, shown = root_and_shown(rules, text)
    assert shown == []


@pytest.mark.parametrize("line", STORE_GONE_AT_TEARDOWN)
def test_the_same_store_failure_before_any_success_is_unreachable(rules, line):
    root, _shown = root_and_shown(rules, line)
    assert root == "network-unreachable"


# A driver older than the CUDA a program was built with (cudaErrorCallRequiresNewerDriver) is one family
# whoever words it: torch's CUDA error, NCCL's WARN line, another runtime's message.
DRIVER_OLDER_THAN_BUILD = [
    "RuntimeError: CUDA error: API call is not supported in the installed CUDA driver\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "RuntimeError: [TM][ERROR] CUDA runtime error: API call is not supported in the installed CUDA driver "
    "/lmdeploy/src/turbomind/utils/allocator.h:169",
    "node1:7:30 [0] enqueue.cc:802 NCCL WARN Cuda failure 'API call is not supported in the installed CUDA driver'",
    "CUDA error at bandwidthTest.cu:256 code=36(cudaErrorCallRequiresNewerDriver) \"cudaSetDevice(currentDevice)\"",
]


@pytest.mark.parametrize("text", DRIVER_OLDER_THAN_BUILD)
def test_a_driver_older_than_the_build_is_a_version_mismatch_in_any_wording(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "library-version-incompatible"
