"""Crash, device, build and launch-argument failures are recognised by family: several torch/CUDA/ROCm
generations and launchers say the same thing in different words, and each wording reaches one finding."""

from __future__ import annotations

import io

import pytest

from tests.logs.helpers import analyse, root_and_shown, shown, torchrun_summary
from troubleshooter.core.yamlspan import load_text
from troubleshooter.logs import LogAnalyzer
from troubleshooter.logs.signatures import compile_signatures, validate_signature_file



# A build without kernels for the GPU: torch's start-up warning, the CUDA runtime and driver-API errors,
# and ROCm's start-up abort and first-kernel error.
GPU_ARCH = [
    "NVIDIA GeForce RTX 3060 with CUDA capability sm_86 is not compatible with the current PyTorch installation.",
    "GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
    "    Found GPU0 Tesla K40m which is of cuda capability 3.5.\n    PyTorch no longer supports this GPU because it is "
    "too old.\n    The minimum cuda capability supported by this library is 3.7.",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMath.cu line=244 error=48 : "
    "no kernel image is available for execution on the device",
    "CUDA_ERROR_NO_BINARY_FOR_GPU",
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
    'ERROR："hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
    "RuntimeError: HIP error: invalid device function",
    # an extension built for this GPU by a toolkit that cannot target it
    "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
    "nvrtc: error: invalid value for --gpu-architecture (-arch)",
]


@pytest.mark.parametrize("line", GPU_ARCH)
def test_missing_kernels_for_the_gpu_are_one_family(rules, line):
    root, shown = root_and_shown(rules, line)
    assert root == "gpu-arch-unsupported"
    assert shown[0] == "gpu-arch-unsupported"


def test_the_teardown_of_killed_ranks_is_read_from_the_rules(rules):
    """Which summary lines are a rank's exit is rule data (a ``teardown`` context signature): without
    it the -9 torchrun sends a surviving rank reads as a second failure; with it, as the teardown echo."""
    text = ('Traceback (most recent call last):\n  File "/w/train.py", line 4, in <module>\n    main()\n'
            "ValueError: bad shape\n" + torchrun_summary(0, killed=((1, 9),)))
    compiled = compile_signatures(rules.signatures)
    assert any(s.teardown for s in compiled)
    with_rule = LogAnalyzer(signatures=compiled)
    without = LogAnalyzer(signatures=[s for s in compiled if not s.teardown])
    for analyzer in (with_rule, without):
        analyzer.feed_file(io.BytesIO(text.encode()), "job.log")
    assert "log.out-of-memory" not in with_rule.facts()
    assert {h["id"] for h in with_rule.facts()["log.suppressed"]} >= {"out-of-memory"}
    assert "log.out-of-memory" in without.facts()


def test_teardown_applies_only_to_context_signatures(rules):
    text = """group: g
signatures:
  - id: x
    finding: rank-crashed
    priority: 50
    teardown: true
    pattern: 'boom'
    note: n
"""
    problems = list(validate_signature_file(load_text(text), known_findings=rules.findings))
    assert any(p[0] == 6 and "'teardown' only applies to context signatures" in p[1] for p in problems), problems


# A native crash as each layer reports it: faulthandler, the shell (plain and job-control padded),
# glog's failure handler, Paddle, Open MPI's signal handler, launchers decoding -11.
NATIVE_CRASH = [
    "Fatal Python error: Segmentation fault",
    "Segmentation fault (core dumped)",
    "./run.sh: line 5: 1234 Segmentation fault      (core dumped) python train.py",
    "train.sh: line 184: 2324239 Aborted                 (core dumped) litgpt pretrain --data FineWebDataset",
    "*** SIGSEGV (@0x0) received by PID 3390 (TID 0x7f887441e740) from PID 0; stack trace: ***",
    "[SignalInfo: *** SIGSEGV (@0x0) received by PID 1 ***]",
    "FatalError: `Segmentation fault` is detected by the operating system.",
    "[dsw-541920-m25b4:02519] Signal: Segmentation fault (11)",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 2815) of binary: /usr/bin/python",
    "[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = -11",
    "段错误 (核心已转储)",
    "段错误（核心已转储）",
    "已放弃 (核心已转储)",
    # without a core dump: bash's job line, the bare words (macOS adds ": 11"), zsh
    "./run_gui.sh: line 39: 332245 Segmentation fault      python3 \"$PROJECT_DIR/app/main.py\"",
    "Segmentation fault",
    "Segmentation fault: 11",
    "zsh: segmentation fault  python train.py",
    "mpirun noticed that process rank 1 with PID 0 on node n1 exited on signal 11 (Segmentation fault).",
    "Process finished with exit code -1073741819 (0xC0000005)",
    "double free or corruption (!prev)",
    "free(): invalid pointer",
    "munmap_chunk(): invalid pointer",
]

# GPU memory exhausted, CUDA and ROCm builds, old and new torch wordings.
GPU_OOM = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 1.25 MiB is free.",
    "RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 3; 31.75 GiB total capacity; 29.12 GiB already allocated)",
    "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of 15.98 GiB of which 630.00 MiB is free.",
    "torch.cuda.OutOfMemoryError: HIP out of memory. Tried to allocate 39.41 GiB",
    "RuntimeError: CUDA error: out of memory",
]

# The process sees no usable GPU: hidden by CUDA_VISIBLE_DEVICES / the scheduler / the container, no
# driver, a CPU-only build, a GPU checkpoint loaded without map_location on such a host.
NO_GPU = [
    "RuntimeError: No CUDA GPUs are available",
    "RuntimeError: CUDA error: no CUDA-capable device is detected",
    "torch.AcceleratorError: CUDA error: no CUDA-capable device is detected",
    "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu').",
    "AssertionError: Torch not compiled with CUDA enabled",
    "OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0]\n But your machine only has: []",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.",
    "lightning_fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not run on your system "
    "since the accelerator is not available.",
]

# torch, its CUDA libraries, the driver and compiled extensions that do not belong together.
LIBRARY_MISMATCH = [
    "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory",
    "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory",
    "ImportError: /usr/local/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclAlltoAll",
    "RuntimeError: CUDA driver version is insufficient for CUDA runtime version",
    "OSError: /usr/local/lib/python3.10/dist-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: "
    "_ZNK5torch8autograd4Node4nameEv",
    "AttributeError: module 'torch.distributed' has no attribute '_all_gather_base'",
    "AttributeError: module 'torch.distributed' has no attribute 'device_mesh'",
    "TypeError: init_process_group() got an unexpected keyword argument 'device_id'",
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW",
]

# A rank killed by SIGKILL with nothing else said: the host's OOM killer, in every launcher's words.
HOST_KILL = [
    "zsh: killed     python netmf.py --input data/flickr.mat --output embeddings/flickr.npy",
    "Killed",
    "[2023-10-26 17:54:48,155] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'trainer.py', "
    "'--local_rank=3'] exits with return code = -9",
    "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
    "mpirun noticed that process rank 0 with PID 0 on node gpu1 exited on signal 9 (Killed).",
    "  1%|█▏ | 21/1423 [00:02<02:09, 10.81it/s]已杀死",
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.",
    'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
    '"C:\\Users\\u\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
    "MemoryError",
    "RuntimeError: DataLoader worker (pid 8102) is killed by signal: Terminated.",
    "srun: error: ramses16304: task 0: Killed",
    # the scheduler's own memory enforcement: SLURM (old and new), PBS, LSF
    "slurmstepd: error: Job 8430179 exceeded memory limit (10442128 > 10240000), being killed",
    "slurmstepd: error: Exceeded job memory limit",
    "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1234.0. Some of your processes may have been killed by the cgroup out-of-memory handler.",
    "=>> PBS: job killed: mem 2097152kb exceeded limit 1048576kb",
    "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
]


@pytest.mark.parametrize(("line", "finding"), [(line, "native-crash") for line in NATIVE_CRASH]
                         + [(line, "out-of-memory") for line in GPU_OOM + HOST_KILL]
                         + [(line, "cuda-invalid-device") for line in NO_GPU]
                         + [(line, "library-version-incompatible") for line in LIBRARY_MISMATCH])
def test_each_wording_reaches_its_family(rules, line, finding):
    root, shown_ids = root_and_shown(rules, line)
    assert root == finding
    assert shown_ids[0] == finding


def test_an_abort_after_an_uncaught_cxx_exception_yields_to_its_reason(rules):
    root, _ = root_and_shown(rules, """
terminate called after throwing an instance of 'c10::Error'
  what():  CUDA error: out of memory
[node1:12345] *** Process received signal ***
[node1:12345] Signal: Aborted (6)
""")
    assert root == "out-of-memory"


def test_a_worker_terminated_during_teardown_yields_to_the_failure_that_caused_it(rules):
    root, _ = root_and_shown(rules, """
[rank1]: RuntimeError: CUDA error: device-side assert triggered
RuntimeError: DataLoader worker (pid 8102) is killed by signal: Terminated.
""")
    assert root == "cuda-device-assert"


def test_more_gpus_requested_than_visible_is_not_no_gpu_at_all(rules):
    root, _ = root_and_shown(rules, "lightning.fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1]\n"
                             " But your machine only has: [0]")
    assert root == "local-rank-exceeds-devices"


# An op mixing devices, torch 1.x to 2.x wordings.
DEVICE_MISMATCH = [
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    "RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, different from other "
    "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
    "RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'weight' in call to "
    "_thnn_nll_loss_forward",
    "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
    "RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cpu and parameter "
    "tensor at cuda:0",
    "RuntimeError: No backend type associated with device type cpu",
    "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'",
]

# The scheduler's wall-time limit, in SLURM's, PBS's and LSF's words.
TIME_LIMIT = [
    "slurmstepd: error: *** STEP 32233190.0 ON host1 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***",
    "=>> PBS: job killed: walltime 3611 exceeded limit 3600",
    "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
]


@pytest.mark.parametrize(("line", "finding"), [(line, "device-mismatch") for line in DEVICE_MISMATCH]
                         + [(line, "scheduler-time-limit") for line in TIME_LIMIT])
def test_device_and_time_limit_wordings(rules, line, finding):
    root, shown_ids = root_and_shown(rules, line)
    assert (root, shown_ids[0]) == (finding, finding)


def test_the_kill_after_a_time_limit_is_the_time_limit_whichever_line_comes_first(rules):
    for text in ("srun: error: n1: task 0: Killed\n"
                 "slurmstepd: error: *** JOB 14 ON n1 CANCELLED AT 2015-06-30T04:08:07 DUE TO TIME LIMIT ***",
                 "=>> PBS: job killed: walltime 117 exceeded limit 90\nmpirun noticed that process rank 0 with PID 0 "
                 "on node n1 exited on signal 9 (Killed)."):
        root, _ = root_and_shown(rules, text)
        assert root == "scheduler-time-limit"


def test_an_extension_build_that_cannot_target_the_gpu_is_not_a_missing_tool(rules):
    facts = analyse(rules, """
[1/3] /usr/local/cuda/bin/nvcc -DTORCH_EXTENSION_NAME=fused_adam -c multi_tensor_adam.cu -o multi_tensor_adam.cuda.o
FAILED: multi_tensor_adam.cuda.o
nvcc fatal   : Unsupported gpu architecture 'compute_120a'
ninja: build stopped: subcommand failed.
RuntimeError: Error building extension 'fused_adam'
""")
    assert shown(rules, facts) == ["gpu-arch-unsupported"]
    # without the architecture line the same failure stays a build-tool problem
    facts = analyse(rules, "RuntimeError: Error building extension 'fused_adam'\n")
    assert shown(rules, facts) == ["tool-missing"]


@pytest.mark.parametrize("line", ["Bus error (core dumped)", "Bus error", "srun: error: node7: task 2: Bus error",
                                  "torch.multiprocessing.spawn.ProcessExitedException: process 2 terminated with signal SIGBUS"])
def test_sigbus_in_any_words_is_shared_memory(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "shm-too-small"


@pytest.mark.parametrize("line", ["Segmentation faults are reported below", "the job was Aborted by the user at step 5",
                                  "INFO: Illegal instruction counters: 0"])
def test_the_words_inside_prose_are_not_a_crash(rules, line):
    root, shown_ids = root_and_shown(rules, line)
    assert root != "native-crash" and "native-crash" not in shown_ids


@pytest.mark.parametrize("name", ["init_process_group", "is_initialized", "ReduceOp", "get_rank"])
def test_a_torch_without_distributed_lacks_even_its_oldest_names(rules, name):
    root, _ = root_and_shown(rules, f"AttributeError: module 'torch.distributed' has no attribute '{name}'")
    assert root == "backend-unavailable"


def test_gpu_memory_running_out_inside_the_process_group_set_up_is_the_device_not_set(rules):
    facts = analyse(rules, """
Traceback (most recent call last):
  File "/w/trainer_ddp.py", line 160, in initialize
    distributed.barrier()
  File "/usr/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 2420, in barrier
    work = default_pg.barrier(opts=opts)
RuntimeError: CUDA error: out of memory
""")
    assert facts["log.root_cause"]["id"] == "missing-set-device"
    # the same error in a training step is memory
    facts = analyse(rules, """
Traceback (most recent call last):
  File "/w/train.py", line 88, in train_step
    loss = model(batch).sum()
RuntimeError: CUDA error: out of memory
""")
    assert facts["log.root_cause"]["id"] == "out-of-memory"


def test_a_cpu_run_carrying_the_no_driver_warning_stays_clean(rules):
    warning = ("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: Found no "
               "NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
               "http://www.nvidia.com/Download/index.aspx (Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)")
    facts = analyse(rules, warning + "\nepoch 1 step 100 loss 0.51\nepoch 2 step 200 loss 0.42\n")
    assert shown(rules, facts) == []
    # a run that needed the GPU fails with its own error, which is the diagnosis
    facts = analyse(rules, warning + "\nRuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n")
    assert facts["log.root_cause"]["id"] == "backend-unavailable"
    facts = analyse(rules, warning + "\nAssertionError: Torch not compiled with CUDA enabled\n")
    assert facts["log.root_cause"]["id"] == "cuda-invalid-device"


def test_an_nccl_plugin_that_fails_to_load_is_not_a_library_mismatch(rules):
    root, shown_ids = root_and_shown(rules, "host:1:2 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : "
                                     "libnccl-net.so: undefined symbol: ncclNetPlugin_v6")
    assert "library-version-incompatible" not in shown_ids


@pytest.mark.parametrize(("line", "finding"), [
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
     "indicates that your module has parameters that were not used in producing loss.", "unused-parameters-error"),
    ("RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned "
     "by training_step. If this is intentional, you must enable the detection of unused parameters in DDP",
     "unused-parameters-error"),
    ("RuntimeError: DDP expects same model across all ranks, but Rank 1 has 42 params, while rank 2 has inconsistent 0 "
     "params.", "collective-mismatch"),
    ("RuntimeError: [1]: params[0] in this process with sizes [96, 32] appears not to match sizes of the same param in "
     "process 0.", "collective-mismatch"),
])
def test_ddp_usage_errors_in_torch_and_lightning_words(rules, line, finding):
    root, _ = root_and_shown(rules, line)
    assert root == finding


def test_a_module_missing_on_the_nodes_the_launcher_reaches(rules):
    root, _ = root_and_shown(rules, "node2: /usr/bin/python3: No module named deepspeed")
    assert root == "launcher-python-mismatch"


def test_slurm_noting_a_past_memory_peak_of_a_finished_step_is_not_a_kill(rules):
    facts = analyse(rules, "epoch 9 done, saving\nslurmstepd: error: Exceeded step memory limit at some point.\n")
    assert "out-of-memory" not in shown(rules, facts)


@pytest.mark.parametrize("warning", [
    "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
    "calling NumCudaDevices() that might have already set an error? Error 100: no CUDA-capable device is detected "
    "(Triggered internally at /opt/pytorch/c10/cuda/CUDAFunctions.cpp:108.)",
    "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
    "calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
    "supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)",
])
def test_cuda_start_up_warnings_in_a_run_that_finished_stay_clean(rules, warning):
    facts = analyse(rules, warning + "\nepoch 1 step 100 loss 0.51\ntraining finished\n")
    assert shown(rules, facts) == []


SWALLOWED = [
    # the DataLoader's __del__ at interpreter shutdown, seen in countless finished runs
    """Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f3a2c1d8ee0>
Traceback (most recent call last):
  File "/usr/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1328, in __del__
    self._shutdown_workers()
  File "/usr/lib/python3.8/multiprocessing/process.py", line 160, in is_alive
    assert self._parent_pid == os.getpid(), 'can only test a child process'
AssertionError: can only test a child process""",
    """Error in atexit._run_exitfuncs:
Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/wandb/sdk/wandb_manager.py", line 21, in _teardown
    self._proc.wait()
OSError: [Errno 9] Bad file descriptor""",
]


@pytest.mark.parametrize("report", SWALLOWED)
def test_an_exception_python_reports_as_ignored_is_not_a_failure(rules, report):
    facts = analyse(rules, "epoch 10 loss 0.1\ntraining done\n" + report + "\n")
    assert shown(rules, facts) == []
    # the same exception raised for real is still a failure
    raised = report.split("\n", 1)[1]
    facts = analyse(rules, "epoch 10 loss 0.1\n" + raised + "\n")
    assert shown(rules, facts) != []


def test_a_driver_too_old_for_the_build_is_noted_in_a_cpu_run_and_the_cause_when_no_gpu_is_then_found(rules):
    warning = ("/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: "
               "The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver")
    assert shown(rules, analyse(rules, warning + "\nepoch 1 loss 0.3\ndone\n")) == []
    for error in ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
                  "RuntimeError: No CUDA GPUs are available"):
        facts = analyse(rules, warning + "\n" + error + "\n")
        assert facts["log.root_cause"]["id"] == "library-version-incompatible"
    # raised as an error (torch.cuda.init(), .cuda()) it is the diagnosis at once
    root, _ = root_and_shown(rules, "RuntimeError: The NVIDIA driver on your system is too old (found version 10020).")
    assert root == "library-version-incompatible"


@pytest.mark.parametrize("line", ['RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\'',
                                  "ValueError: fp16 mixed precision requires a GPU (not 'mps').",
                                  'RuntimeError: "addmm_cuda" not implemented for \'BFloat16\'',
                                  "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU "
                                  "with cuda>=11.0"])
def test_half_precision_where_the_device_has_no_kernels_for_it(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "precision-unsupported"


def test_cuda_that_cannot_initialise_in_a_forked_child(rules):
    for text in ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
                 "you must use the 'spawn' start method",
                 "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback (most recent "
                 "call last):\n  File \"/w/data.py\", line 17, in _fast_collate\n    x = x.pin_memory()\n"
                 "RuntimeError: CUDA error: initialization error"):
        root, _ = root_and_shown(rules, text)
        assert root == "cuda-init-before-fork"


@pytest.mark.parametrize("tail", ["Process finished with exit code 1", "Command exited with non-zero status 2"])
def test_an_ide_or_time_reporting_a_non_zero_exit_is_a_failure(rules, tail):
    facts = analyse(rules, "epoch 1 loss 0.4\n" + tail + "\n")
    assert shown(rules, facts) == ["unrecognized-failure"]
    assert shown(rules, analyse(rules, "epoch 1 loss 0.4\nProcess finished with exit code 0\n")) == []


def test_a_ray_worker_that_died_is_a_crash_and_yields_to_a_stated_cause(rules):
    died = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
            "the problem, check the logs for the dead worker.")
    root, _ = root_and_shown(rules, died)
    assert root == "rank-crashed"
    root, _ = root_and_shown(rules, died + "\nray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.")
    assert root == "out-of-memory"


@pytest.mark.parametrize("line", [
    "RuntimeError: Distributed package doesn't have NCCL built in",
    "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv support, run with "
    "USE_LIBUV=0 to disable it.",
    "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
])
def test_a_torch_build_without_a_distributed_component(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "backend-unavailable"
