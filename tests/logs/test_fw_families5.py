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


# One meaning per row, as a framework, a launcher, a runtime or a kernel words it: the root cause it must be.
ROOT_CAUSE = [
    # ranks started with torch.multiprocessing.spawn from a notebook cell
    pytest.param(NOTEBOOK_SPAWN_IPYTHON, "ddp-in-notebook", id="notebook-ipython"),
    pytest.param(NOTEBOOK_SPAWN_CELL, "ddp-in-notebook", id="notebook-cell"),
    # a notebook whose child rank says why it failed: the stated reason wins over the framing
    pytest.param(NOTEBOOK_SPAWN_OOM, "out-of-memory", id="notebook-stated-reason"),
    # torch >= 2.4 picks a backend from the accelerator and refuses one it has no backend for (mps, xpu, ...)
    pytest.param("ValueError: We detected accelerator mps on your machine. But we don't know which communication "
                 "backend to use for this accelerator. Please specify the `backend` argument in the "
                 "`init_process_group` call.", "backend-unavailable", id="accelerator-mps"),
    pytest.param("[rank0]: ValueError: We detected accelerator xpu on your machine. But we don't know which "
                 "communication backend to use for this accelerator. Please specify the `backend` argument in the "
                 "`init_process_group` call.", "backend-unavailable", id="accelerator-xpu"),
    # ROCm with HSA_OVERRIDE_GFX_VERSION naming an ISA the card cannot run: no kernels for this GPU
    pytest.param(":0:rocdevice.cpp            :3018: 128688649210d us:  Callback: Queue 0x7f7f4d000000 aborting "
                 "with error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f",
                 "gpu-arch-unsupported", id="rocm-invalid-isa"),
    # containers and managed services report SIGKILL as 128 + 9 in their own spelling
    pytest.param("AlgorithmError: ExecuteUserScriptError:\nExitCode 137\nErrorMessage \"\"\n", "out-of-memory",
                 id="sagemaker-137"),
    pytest.param("Pod trainer-worker-0 was terminated with exitCode 137 in namespace default.", "out-of-memory",
                 id="pod-137"),
    # the open-file limit, as the DataLoader queue, torch, Python and NCCL each word it
    pytest.param("RuntimeError: received 0 items of ancdata", "open-files-limit", id="nofile-ancdata"),
    pytest.param("RuntimeError: Too many open files. Communication with the workers is no longer possible. Please "
                 "increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
                 "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code",
                 "open-files-limit", id="nofile-torch"),
    pytest.param("OSError: [Errno 24] Too many open files: '/data/train/shard-00017.tar'", "open-files-limit",
                 id="nofile-python"),
    pytest.param("node1:1234:1300 [0] misc/socket.cc:480 NCCL WARN socketAccept: Call to accept failed : Too many "
                 "open files", "open-files-limit", id="nofile-nccl"),
    # torch 1.x's device check names the output tensor without an argument number ('out'), here behind Ray
    pytest.param("(BackendExecutor pid=5631) RuntimeError: Expected tensor for 'out' to have the same device as "
                 "tensor for argument #2 'mat1'; but device 1 does not equal 3 (while checking arguments for addmm)",
                 "device-mismatch", id="legacy-device-out"),
    pytest.param("RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for "
                 "argument #2 'weight'; but device 0 does not equal 1 (while checking arguments for "
                 "cudnn_convolution)", "device-mismatch", id="legacy-device-argument"),
    # 128 + signal, as Horovod's runner, Open MPI's summary and containers print it, for the other signals
    pytest.param("Process 3 exit with status code 134.", "native-crash", id="horovod-134"),
    pytest.param("Pod trainer-worker-1 was terminated with exitCode 139 in namespace default.", "native-crash",
                 id="pod-139"),
    pytest.param("Process exited with exit code 143", "unrecognized-failure", id="process-143"),
    pytest.param("  Exit code:    143", "unrecognized-failure", id="openmpi-143"),
    # Lightning 1.8+/2.x asked for accelerator="gpu" on a machine where neither CUDA nor MPS is available
    pytest.param("lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend found!",
                 "cuda-invalid-device", id="lightning-no-gpu-backend"),
    # DeepSpeed's communication layer used before its backend was initialised
    pytest.param("AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()",
                 "process-group-not-initialized", id="deepspeed-backend-not-set"),
    # kernels and kubelets in their own words: a memory cgroup at its limit, a pod's disk quota
    pytest.param("[337533.314412] Memory cgroup out of memory: Killed process 23793 (python3) total-vm:2623712kB, "
                 "anon-rss:506500kB, file-rss:1268kB, shmem-rss:0kB", "out-of-memory", id="cgroup-oom"),
    pytest.param("Warning  Evicted  pod/trainer-0  Pod ephemeral local storage usage exceeds the total limit of "
                 "containers 10Gi.\nPod trainer-0 was terminated with exitCode 137 in namespace default.\n",
                 "disk-write-failed", id="pod-evicted-storage"),
]


@pytest.mark.parametrize(("text", "want"), ROOT_CAUSE)
def test_each_wording_has_its_root_cause(rules, text, want):
    root, _ = root_and_shown(rules, text)
    assert root == want


# Look-alike lines: what they must not be shown as.
NOT_SHOWN = [
    # the same words about values or classes no release accepted: a typo or a user bug, not a version
    *(pytest.param(line, "library-version-incompatible", id=f"not-a-release-option-{i}")
      for i, line in enumerate(NOT_A_RELEASE_OPTION)),
    # spawn from a script, or a fork-based launcher made for notebooks, is not the notebook limitation
    pytest.param(SCRIPT_SPAWN, "ddp-in-notebook", id="script-spawn"),
    pytest.param(NOTEBOOK_FORK, "ddp-in-notebook", id="fork-launcher"),
    # other exit numbers are not a SIGKILL
    pytest.param("ExitCode 1370 records written", "out-of-memory", id="exit-1370"),
    pytest.param("exitCode 13", "out-of-memory", id="exit-13"),
    # an open-file limit printed or raised
    pytest.param("open files                      (-n) 1024", "open-files-limit", id="ulimit-printed"),
    pytest.param("+ ulimit -n 65535", "open-files-limit", id="ulimit-raised"),
    # a bare cancel banner is not a node failure
    pytest.param("slurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***",
                 "terminated-externally", id="slurm-cancel-banner"),
]


@pytest.mark.parametrize(("text", "absent"), NOT_SHOWN)
def test_look_alikes_are_not_shown_as_that(rules, text, absent):
    _, shown = root_and_shown(rules, text)
    assert absent not in shown


@pytest.mark.parametrize("line", ["Exit code: 1430 tokens", "exitCode 14"])
def test_longer_or_shorter_numbers_are_not_signals(rules, line):
    _, shown = root_and_shown(rules, line)
    assert not shown
