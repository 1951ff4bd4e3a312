"""Framework families of the fifth pass: a distributed framework refusing an option another release
of it takes is a version mismatch (Lightning's accelerator/strategy renames, removed Trainer
arguments, transformers' renamed TrainingArguments), and ranks started with torch.multiprocessing
.spawn from a notebook cell are the notebook limitation; look-alike lines stay quiet."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

# One meaning, several layers and releases: the installed framework is not the one the script targets.
OPTION_RENAMED = [
    "ValueError: You selected an invalid accelerator name: `accelerator='ddp'`. Available names are: "
    "cpu, cuda, hpu, ipu, mps, tpu.",
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: You selected an invalid accelerator "
    "name: `accelerator='ddp_spawn'`. Available names are: cpu, cuda, hpu, ipu, mps, tpu.",
    "ValueError: You selected an invalid strategy name: `strategy='dp'`. It must be either a string or an "
    "instance of `lightning.pytorch.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, deepspeed, "
    "... Find a complete list of options in our documentation at https://lightning.ai",
    "ValueError: You selected an invalid strategy name: `strategy='ddp_find_unused_parameters_false'`.",
    "TypeError: __init__() got an unexpected keyword argument 'strategy'",
    "TypeError: __init__() got an unexpected keyword argument 'gpus'",
    "TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'",
    "TypeError: Trainer.__init__() got an unexpected keyword argument 'distributed_backend'",
    "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
    "TypeError: Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument 'save_safetensors'",
    "[rank1]: TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'",
]


@pytest.mark.parametrize("line", OPTION_RENAMED)
def test_framework_option_of_another_release_is_a_version_mismatch(rules, line):
    root, shown = root_and_shown(rules, line)
    assert root == "library-version-incompatible"
    assert shown[:1] == ["library-version-incompatible"]


# The same words about values or classes no release accepted: a typo or a user bug, not a version.
NOT_A_RELEASE_OPTION = [
    "ValueError: You selected an invalid strategy name: strategy=None. It must be either a string or an "
    "instance of pytorch_lightning.strategies.Strategy. Example choices: auto, ddp, ddp_spawn, deepspeed,",
    "ValueError: You selected an invalid accelerator name: `accelerator='cuad'`. Available names are: "
    "cpu, cuda, hpu, ipu, mps, tpu.",
    "TypeError: MyModel.__init__() got an unexpected keyword argument 'gpus'",
    "TypeError: __init__() got an unexpected keyword argument 'hidden_dim'",
]


@pytest.mark.parametrize("line", NOT_A_RELEASE_OPTION)
def test_values_no_release_took_are_not_version_mismatches(rules, line):
    root, shown = root_and_shown(rules, line)
    assert "library-version-incompatible" not in shown


NOTEBOOK_SPAWN_IPYTHON = """\
Exception                                 Traceback (most recent call last)
<ipython-input-8-3a22b74b1d8d> in <module>
---> 71 trainer.fit(model)

/opt/conda/lib/python3.6/site-packages/pytorch_lightning/models/trainer.py in fit(self, model)
--> 427                 mp.spawn(self.ddp_train, nprocs=len(self.data_parallel_device_ids), args=(model, ))

/opt/conda/lib/python3.6/site-packages/torch/multiprocessing/spawn.py in spawn(fn, args, nprocs, join, daemon)
--> 167     while not spawn_context.join():

/opt/conda/lib/python3.6/site-packages/torch/multiprocessing/spawn.py in join(self, timeout)
"""

NOTEBOOK_SPAWN_CELL = """\
---------------------------------------------------------------------------
ProcessRaisedException                    Traceback (most recent call last)
Cell In[5], line 3
      1 world_size = torch.cuda.device_count()
----> 3 mp.spawn(train, args=(world_size,), nprocs=world_size)

File /usr/lib/python3/site-packages/torch/multiprocessing/spawn.py:241, in spawn(fn, args, nprocs, join, daemon, start_method)
    239 msg = "This method only supports start_method=spawn"
--> 241 return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
"""


@pytest.mark.parametrize("text", [NOTEBOOK_SPAWN_IPYTHON, NOTEBOOK_SPAWN_CELL], ids=["ipython", "cell"])
def test_spawn_from_a_notebook_cell_is_ddp_in_notebook(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "ddp-in-notebook"


SCRIPT_SPAWN = """\
Traceback (most recent call last):
  File "/home/user/train.py", line 178, in <module>
    mp.spawn(main, args=(world_size, num_epochs), nprocs=world_size)
  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 241, in spawn
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
"""

# A fork-based notebook launcher (Accelerate's notebook_launcher) is made for notebooks.
NOTEBOOK_FORK = """\
ProcessRaisedException                    Traceback (most recent call last)
Cell In[8], line 2
----> 2 notebook_launcher(training_loop, args, num_processes=2)

File ~/accelerate/src/accelerate/launchers.py:138, in notebook_launcher(function, args, num_processes)
--> 138     start_processes(launcher, args=args, nprocs=num_processes, start_method="fork")
"""

# A notebook whose child rank says why it failed: the stated reason wins over the framing.
NOTEBOOK_SPAWN_OOM = NOTEBOOK_SPAWN_CELL + (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.77 GiB total "
    "capacity; 13.20 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by PyTorch)\n"
)


@pytest.mark.parametrize("text", [SCRIPT_SPAWN, NOTEBOOK_FORK], ids=["script", "fork-launcher"])
def test_spawn_from_a_script_or_fork_from_a_notebook_is_not_the_notebook_limit(rules, text):
    _, shown = root_and_shown(rules, text)
    assert "ddp-in-notebook" not in shown


def test_a_stated_reason_of_the_ranks_wins_over_the_notebook_framing(rules):
    root, _ = root_and_shown(rules, NOTEBOOK_SPAWN_OOM)
    assert root == "out-of-memory"


# torch >= 2.4 picks a backend from the accelerator and refuses one it has no backend for (mps, xpu, ...).
@pytest.mark.parametrize("line", [
    "ValueError: We detected accelerator mps on your machine. But we don't know which communication backend "
    "to use for this accelerator. Please specify the `backend` argument in the `init_process_group` call.",
    "[rank0]: ValueError: We detected accelerator xpu on your machine. But we don't know which communication "
    "backend to use for this accelerator. Please specify the `backend` argument in the `init_process_group` call.",
])
def test_an_accelerator_without_a_backend_is_backend_unavailable(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "backend-unavailable"


# ROCm with HSA_OVERRIDE_GFX_VERSION naming an ISA the card cannot run: no kernels for this GPU.
def test_rocm_invalid_isa_is_an_unsupported_gpu_architecture(rules):
    line = (":0:rocdevice.cpp            :3018: 128688649210d us:  Callback: Queue 0x7f7f4d000000 aborting "
            "with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f")
    root, _ = root_and_shown(rules, line)
    assert root == "gpu-arch-unsupported"


# Containers and managed services report SIGKILL as 128 + 9 in their own spelling.
@pytest.mark.parametrize("text", [
    "AlgorithmError: ExecuteUserScriptError:\nExitCode 137\nErrorMessage \"\"\n",
    "Pod trainer-worker-0 was terminated with exitCode 137 in namespace default.",
])
def test_exit_code_137_in_container_spellings_is_a_sigkill(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "out-of-memory"


@pytest.mark.parametrize("line", [
    "ExitCode 1370 records written",
    "exitCode 13",
])
def test_other_exit_numbers_are_not_sigkill(rules, line):
    _, shown = root_and_shown(rules, line)
    assert "out-of-memory" not in shown


# The open-file limit, as the DataLoader queue, torch, Python and NCCL each word it.
@pytest.mark.parametrize("line", [
    "RuntimeError: received 0 items of ancdata",
    "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase "
    "the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
    "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code",
    "OSError: [Errno 24] Too many open files: '/data/train/shard-00017.tar'",
    "node1:1234:1300 [0] misc/socket.cc:480 NCCL WARN socketAccept: Call to accept failed : Too many open files",
])
def test_the_open_file_limit_in_every_wording(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "open-files-limit"


@pytest.mark.parametrize("line", [
    "open files                      (-n) 1024",
    "+ ulimit -n 65535",
])
def test_a_limit_printed_or_raised_is_quiet(rules, line):
    _, shown = root_and_shown(rules, line)
    assert "open-files-limit" not in shown


# torch 1.x's device check names the output tensor without an argument number ('out'), here behind Ray.
@pytest.mark.parametrize("line", [
    "(BackendExecutor pid=5631) RuntimeError: Expected tensor for 'out' to have the same device as tensor for "
    "argument #2 'mat1'; but device 1 does not equal 3 (while checking arguments for addmm)",
    "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
    "'weight'; but device 0 does not equal 1 (while checking arguments for cudnn_convolution)",
])
def test_legacy_same_device_checks_are_device_mismatches(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "device-mismatch"


# 128 + signal, as Horovod's runner, Open MPI's summary and containers print it, for the other signals.
@pytest.mark.parametrize(("line", "want"), [
    ("Process 3 exit with status code 134.", "native-crash"),
    ("Pod trainer-worker-1 was terminated with exitCode 139 in namespace default.", "native-crash"),
    ("Process exited with exit code 143", "unrecognized-failure"),
    ("  Exit code:    143", "unrecognized-failure"),
])
def test_exit_statuses_of_other_signals_in_runner_spellings(rules, line, want):
    root, _ = root_and_shown(rules, line)
    assert root == want


@pytest.mark.parametrize("line", ["Exit code: 1430 tokens", "exitCode 14"])
def test_longer_or_shorter_numbers_are_not_signals(rules, line):
    _, shown = root_and_shown(rules, line)
    assert not shown


# Lightning 1.8+/2.x asked for accelerator="gpu" on a machine where neither CUDA nor MPS is available.
def test_lightning_without_a_gpu_backend_is_no_visible_gpu(rules):
    root, _ = root_and_shown(rules, "lightning_fabric.utilities.exceptions.MisconfigurationException: "
                                    "No supported gpu backend found!")
    assert root == "cuda-invalid-device"


# DeepSpeed's communication layer used before its backend was initialised.
def test_deepspeed_backend_not_set_is_process_group_not_initialized(rules):
    root, _ = root_and_shown(rules, "AssertionError: DeepSpeed backend not set, please initialize it using "
                                    "init_process_group()")
    assert root == "process-group-not-initialized"


# Kernels and kubelets in their own words: a memory cgroup at its limit, a pod's disk quota.
@pytest.mark.parametrize(("text", "want"), [
    ("[337533.314412] Memory cgroup out of memory: Killed process 23793 (python3) total-vm:2623712kB, "
     "anon-rss:506500kB, file-rss:1268kB, shmem-rss:0kB", "out-of-memory"),
    ("Warning  Evicted  pod/trainer-0  Pod ephemeral local storage usage exceeds the total limit of containers 10Gi.\n"
     "Pod trainer-0 was terminated with exitCode 137 in namespace default.\n", "disk-write-failed"),
])
def test_scheduler_kernel_and_kubelet_wordings(rules, text, want):
    root, _ = root_and_shown(rules, text)
    assert root == want


def test_a_bare_cancel_banner_is_not_a_node_failure(rules):
    _, shown = root_and_shown(rules, "slurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***")
    assert "terminated-externally" not in shown
