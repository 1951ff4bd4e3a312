"""Crash families of the fourth pass: a rank killed by SIGILL/SIGFPE is a native crash in every
launcher's and shell's wording, and Open MPI's SIGKILL/SIGBUS report is read under mpirun, mpiexec
and prterun with the PID and host masked; look-alike lines stay quiet."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

# SIGILL (an instruction the CPU lacks: AVX/SSE4.1 wheels on old CPUs) and SIGFPE, as each layer says it.
NATIVE_SIGNALS = [
    "mpirun noticed that process rank 0 with PID 0 on node exited on signal 4 (Illegal instruction).",
    "mpiexec noticed that process rank 0 with PID 0 on node matrix exited on signal 4 (Illegal instruction: 4).",
    "mpirun noticed that process rank 1 with PID 0 on node tw-mbp-gbai exited on signal 4 (Illegal instruction: 4).",
    "Process finished with exit code 132 (interrupted by signal 4:SIGILL)",
    "进程已结束，退出代码为 132 (interrupted by signal 4:SIGILL)",
    "fish: Job 1, 'python train.py' terminated by signal SIGILL (Illegal instruction)",
    "[2023-10-24 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
    "'train.py', '--local_rank=0'] exits with return code = -8",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -4) local_rank: 0 (pid: 4242) "
    "of binary: /usr/bin/python3",
    "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGILL",
    "subprocess.CalledProcessError: Command '[...]' died with <Signals.SIGILL: 4>.",
    "srun: error: node7: task 0: Illegal instruction",
    "APPLICATION TERMINATED WITH THE EXIT STRING: Illegal instruction (signal 4)",
    "Termination Signal:    Illegal instruction: 4",
]


@pytest.mark.parametrize("line", NATIVE_SIGNALS)
def test_sigill_and_sigfpe_exits_are_native_crashes(rules, line):
    root, shown = root_and_shown(rules, line)
    assert root == "native-crash"
    assert shown[:1] == ["native-crash"]


# Open MPI's report of a rank killed by the OOM killer / by SIGBUS, whichever MPI front end printed it.
MPI_KILLED = [
    ("mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 (Killed).",
     "out-of-memory"),
    ("mpiexec noticed that process rank 3 with PID 4242 on node worker-1 exited on signal 9 (Killed).",
     "out-of-memory"),
    ("prterun noticed that process rank 0 with PID 77 on node n1 exited on signal 7 (Bus error).",
     "shm-too-small"),
]


@pytest.mark.parametrize(("line", "want"), MPI_KILLED)
def test_open_mpi_signal_reports_under_every_front_end(rules, line, want):
    root, _ = root_and_shown(rules, line)
    assert root == want


# Lines that name the same numbers or instruction sets without any crash.
QUIET = [
    "Adam Optimizer #0 is created with AVX2 arithmetic capability.",
    "  - CPU capability usage: AVX2",
    "Epoch 4 finished with exit code 1320 samples skipped",
    "exits with return code = 0",
    "Your CPU supports instructions that this TensorFlow binary was not compiled to use: AVX2 FMA",
]


@pytest.mark.parametrize("line", QUIET)
def test_lookalike_lines_stay_quiet(rules, line):
    root, shown = root_and_shown(rules, line)
    assert root is None and shown == []


def test_cuda_illegal_instruction_stays_a_kernel_fault(rules):
    """The GPU's own "illegal instruction" is a kernel fault, not a CPU SIGILL."""
    root, _ = root_and_shown(rules, "RuntimeError: CUDA error: an illegal instruction was encountered")
    assert root == "cuda-kernel-fault"


# GPU memory exhaustion in torch 0.x/1.x THC's words and in extensions printing the runtime's error 2.
LEGACY_OOM = [
    "RuntimeError: cuda runtime error (2) : out of memory at /py/conda-bld/pytorch_1493676237139/work/torch/lib/"
    "THC/generic/THCStorage.cu:66",
    "THCudaCheck FAIL file=/py/conda-bld/pytorch_1493676237139/work/torch/lib/THC/generic/THCStorage.cu line=66 "
    "error=2 : out of memory",
    "RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\n"
    "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.",
]


@pytest.mark.parametrize("text", LEGACY_OOM)
def test_legacy_cuda_out_of_memory_wordings(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "out-of-memory"


def test_other_thc_errors_keep_their_own_meaning(rules):
    text = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMath.cu line=244 error=48 : "
            "no kernel image is available for execution on the device")
    assert root_and_shown(rules, text)[0] == "gpu-arch-unsupported"


# Horovod's runners (gloo and mpirun) report a rank's exit status rather than its signal.
HOROVOD_EXITS = [
    ("Process 0 exit with status code 137.", "out-of-memory"),
    ("RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the "
     "job to be terminated. The first process to do so was:\nProcess name: elastic-test-worker-1[0]\n"
     "Exit code: 137", "out-of-memory"),
    ("RuntimeError: mpirun failed with exit code 139", "native-crash"),
]


@pytest.mark.parametrize(("text", "want"), HOROVOD_EXITS)
def test_horovod_exit_statuses_are_decoded(rules, text, want):
    assert root_and_shown(rules, text)[0] == want


def test_plain_nonzero_exit_code_is_not_a_signal(rules):
    """Open MPI's "Exit code: 1" block says a rank failed, not how; it must not read as a kill."""
    text = ("mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n\n"
            "  Process name: [[50371,1],0]\n  Exit code:    1")
    root, shown = root_and_shown(rules, text)
    assert root not in ("out-of-memory", "native-crash")


# bf16 refused on pre-Ampere GPUs, in the trainers' and the vLLM engines' words (vLLM backs RLHF rollouts).
BF16_REFUSED = [
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla "
    "V100-SXM2-32GB GPU has compute capability 7.0.",
    "ValueError: [address=0.0.0.0:34479, pid=610] Bfloat16 is only supported on GPUs with compute capability of "
    "at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly "
    "setting the `dtype` flag in CLI, for example: --dtype=half.",
    "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
]


@pytest.mark.parametrize("line", BF16_REFUSED)
def test_bf16_refused_on_old_gpus(rules, line):
    assert root_and_shown(rules, line)[0] == "precision-unsupported"


def test_a_bf16_engine_config_line_stays_quiet(rules):
    line = ("INFO 11-04 10:12:51 llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with config: "
            "model='Qwen/Qwen2.5-0.5B', dtype=torch.bfloat16, max_seq_len=32768")
    assert root_and_shown(rules, line) == (None, [])


# The shell's report of a SIGKILLed job, glued to the progress bar the kill cut short.
SHELL_KILLED_AFTER_BAR = [
    "Loading checkpoint shards:   0%|          | 0/3 [00:00<?, ?it/s][1]    26478 killed     python test.py",
    "Epoch 15 (validation) validation/acc/qa=1.000000:   2%|#4          | 20/1094 [00:41<11:04,  1.62it/s]"
    "/home/USER/nscl/Jacinle/bin/jac-crun: line 6:  3305 Killed                  $JACROOT/bin/jac-run \"$@\"",
    "Epoch 0:  12%|█▏        | 120/1000 [01:00<07:20,  2.00it/s, loss=2.31]Killed",
]


@pytest.mark.parametrize("line", SHELL_KILLED_AFTER_BAR)
def test_shell_kill_reports_after_a_cut_progress_bar(rules, line):
    assert root_and_shown(rules, line)[0] == "out-of-memory"


@pytest.mark.parametrize("line", [
    "Epoch 0: 100%|█| 209/209 [06:12<00:00,  1.78s/it, loss=0.0685, v_num=0]",
    "[1]+  Done                    python train.py",
    "Step 12: the model Killed it with loss 0.1",
])
def test_finished_bars_and_jobs_stay_quiet(rules, line):
    assert root_and_shown(rules, line) == (None, [])


# A wrapper around the DeepSpeed launcher sees the rank's signal as an unsigned exit status (256 - N).
@pytest.mark.parametrize(("line", "want"), [
    ("RuntimeError: Step 1 exited with non-zero status 249", "shm-too-small"),
    ("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', '-m', 'deepspeed.launcher.launch', "
     "'train.py']' returned non-zero exit status 245.", "native-crash"),
    ("subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit status 247.",
     "out-of-memory"),
])
def test_unsigned_exit_statuses_of_launcher_wrappers(rules, line, want):
    assert root_and_shown(rules, line)[0] == want


def test_ordinary_exit_statuses_are_not_signals(rules):
    line = "subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit status 2470."
    assert root_and_shown(rules, line)[0] not in ("out-of-memory", "native-crash", "shm-too-small")


# A launcher tearing the job down is a failed run even when the failing rank's own output is missing:
# never "No issues found!", and any specific cause printed elsewhere still comes first.
TEARDOWN_ONLY = [
    "[2024-03-20 20:31:29,210] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3353707\n"
    "[2024-03-20 20:31:29,240] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3353708",
    "[ID: 1/1 GPU: 0] Error executing job with overrides:",
]


@pytest.mark.parametrize("text", TEARDOWN_ONLY)
def test_launcher_teardown_alone_is_a_failure(rules, text):
    root, shown = root_and_shown(rules, text)
    assert shown and shown[0] == "unrecognized-failure"


def test_launcher_teardown_yields_to_the_stated_cause(rules):
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
            "RuntimeError: CUDA error: out of memory\n"
            "[2024-03-20 20:31:29,210] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3353707")
    root, shown = root_and_shown(rules, text)
    assert root == "out-of-memory" and "unrecognized-failure" not in shown


def test_ray_actor_death_is_a_crashed_rank(rules):
    text = ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit "
            "detail: Worker unexpectedly exits with a connection error code 2. End of file.")
    assert root_and_shown(rules, text)[0] == "rank-crashed"


def test_open_mpi_record_still_names_the_crashed_rank(rules):
    """Open MPI's teardown banner is followed by its record of the failed process: that record, not a
    generic teardown notice, decides what is reported."""
    text = ("[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the "
            "ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished "
            "execution.\n"
            "Primary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n"
            "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n\n"
            "  Process name: [[50371,1],0]\n  Exit code:    1")
    root, shown = root_and_shown(rules, text)
    assert "unrecognized-failure" not in shown[:1]


def test_cudnn_without_algorithm_is_gpu_memory(rules):
    assert root_and_shown(rules, "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution")[0] \
        == "out-of-memory"


def test_a_stated_build_mismatch_outranks_cudnn_without_algorithm(rules):
    text = ("NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch "
            "installation.\nRuntimeError: Unable to find a valid cuDNN algorithm to run convolution")
    assert root_and_shown(rules, text)[0] == "gpu-arch-unsupported"


@pytest.mark.parametrize("line", [
    "  what():  [FT][ERROR] CUDA runtime error: CUBLAS_STATUS_ARCH_MISMATCH /root/FasterTransformer/v1/"
    "fastertransformer/cuda/open_attention.h:171 ",
    "CUDA error at /data/fastmoe/cuda/moe_compute_kernel.cu:132 code=8(CUBLAS_STATUS_ARCH_MISMATCH) "
    "\"cublasXgemm( smgr->handle(i) )\"",
])
def test_cublas_arch_mismatch_is_a_gpu_too_old(rules, line):
    assert root_and_shown(rules, line)[0] == "gpu-arch-unsupported"


def test_torch1_launch_killing_subprocess_alone_is_a_failure(rules):
    text = "Killing subprocess 6040\nKilling subprocess 6041\nKilling subprocess 6042"
    assert root_and_shown(rules, text)[1][:1] == ["unrecognized-failure"]


@pytest.mark.parametrize(("line", "want"), [
    ("RuntimeError: MPS backend out of memory (MPS allocated: 5.50 GB, other allocations: 14.76 GB, max allowed: "
     "20.40 GB). Tried to allocate 147.24 MB on private pool.", "out-of-memory"),
    ("RuntimeError: No HIP GPUs are available", "cuda-invalid-device"),
])
def test_other_accelerators_word_the_same_failures(rules, line, want):
    assert root_and_shown(rules, line)[0] == want


def test_a_start_up_warning_about_no_hip_gpus_stays_quiet(rules):
    assert root_and_shown(rules, "UserWarning: CUDA initialization: No HIP GPUs are available") == (None, [])


# DDP refusing device_ids for a module not on one GPU, in torch 1.x's and 2.x's words: still (partly) on
# the CPU is a wrap before .to(device); spread over several GPUs is a device_map/model-parallel module.
DDP_DEVICE_IDS = [
    ("AssertionError: DistributedDataParallel device_ids and output_device arguments only work with single-device "
     "CUDA modules, but got device_ids [1], output_device 1, and module parameters {device(type='cpu')}.",
     "ddp-before-to-device"),
    ("AssertionError: DistributedDataParallel device_ids and output_device arguments only work with single-device "
     "CUDA modules, but got device_ids [3], output_device None, and module parameters {device(type='cuda', "
     "index=3), device(type='cpu')}.", "ddp-before-to-device"),
    ("ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
     "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device None, and "
     "module parameters {device(type='cpu')}.", "ddp-before-to-device"),
    ("ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
     "single-device/multiple-device GPU modules or CPU modules, but got device_ids [1], output_device 1, and "
     "module parameters {device(type='cuda', index=0), device(type='cuda', index=1)}.", "device-map-with-ddp"),
    ("ValueError: DistributedDataParallel device_ids and output_device arguments only work with single-device GPU "
     "modules, but got device_ids [0], output_device 0, and module parameters {device(type='cuda', index=0), "
     "device(type='cuda', index=1)}.", "device-map-with-ddp"),
]


@pytest.mark.parametrize(("line", "want"), DDP_DEVICE_IDS)
def test_ddp_device_ids_refusal_across_torch_versions(rules, line, want):
    root, shown = root_and_shown(rules, line)
    assert root == want and shown == [want]


def test_deepspeed_accepting_a_compatible_cuda_toolkit_stays_quiet(rules):
    line = ("Installed CUDA version 11.3 does not match the version torch was compiled with 11.8 but since the APIs "
            "are compatible, accepting this combination")
    assert root_and_shown(rules, line) == (None, [])


def test_deepspeed_refusing_a_cuda_toolkit_is_a_version_mismatch(rules):
    line = ("deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version "
            "12.2 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions "
            "without a matching cuda version.")
    assert root_and_shown(rules, line)[0] == "library-version-incompatible"
