"""Families of the sixth framework pass: the same cause told by another layer or another release.

- DeepSpeed started without a launcher falls back to MPI discovery: mpi4py missing, the traceback
  through ``mpi_discovery`` or Open MPI's failed init right after the discovery notice mean no
  launcher set the rank variables; the notice alone (a healthy mpirun run prints it) stays quiet;
- torch.distributed APIs a newer torch added (``barrier(device_ids=)``, DDP's ``static_graph``,
  ``_set_static_graph``) refused by an older torch are a version mismatch, as are framework options
  whose ``__init__`` a GitHub paste turned into a bold ``init``;
- an ENOSPC raised while creating a multiprocessing semaphore is a full /dev/shm, not a full disk;
- torch's "device >= 0 && device < num_gpus" assert is the device-index family;
- rocBLAS without Tensile kernels for the card's gfx target is an unsupported GPU architecture.
"""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

MPI_DISCOVERY_FAILED = [
    "ModuleNotFoundError: No module named 'mpi4py'",
    "ImportError: No module named mpi4py",
    '  File "/root/miniconda3/envs/py3.9/lib/python3.9/site-packages/deepspeed/comm/comm.py", line 677, '
    "in mpi_discovery\n    from mpi4py import MPI\nModuleNotFoundError: No module named 'mpi4py'",
    "[2021-04-07 22:13:53,125] [INFO] [distributed.py:37:init_distributed] Not using the DeepSpeed or "
    "torch.distributed launchers, attempting to detect MPI environment...\n"
    "*** An error occurred in MPI_Init_thread\n*** on a NULL communicator",
    "[2024-02-23 05:39:58,704] [INFO] [comm.py:652:init_distributed] Not using the DeepSpeed or dist "
    "launchers, attempting to detect MPI environment...\n"
    "[gpu009:2974788] pmix_mca_base_component_repository_open: unable to open mca_gds_ds21 (ignored)\n"
    "*** An error occurred in MPI_Init_thread\n*** on a NULL communicator",
]


@pytest.mark.parametrize("text", MPI_DISCOVERY_FAILED)
def test_mpi_discovery_failing_means_no_launcher_set_the_ranks(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "launcher-env-missing"
    assert "launcher-python-mismatch" not in shown[:1]


MPI_DISCOVERY_QUIET = [
    # the notice of a run mpirun started, whose discovery worked
    "[2024-02-23 05:39:58,704] [INFO] [comm.py:652:init_distributed] Not using the DeepSpeed or dist "
    "launchers, attempting to detect MPI environment...\n"
    "[2024-02-23 05:39:58,800] [INFO] [comm.py:702:mpi_discovery] Discovered MPI settings of world_rank=0, "
    "local_rank=0, world_size=2, master_addr=10.0.0.1, master_port=29500\nepoch 1 loss 0.5",
]


@pytest.mark.parametrize("text", MPI_DISCOVERY_QUIET)
def test_mpi_discovery_that_works_is_not_a_missing_launcher(rules, text):
    root, shown = root_and_shown(rules, text)
    assert "launcher-env-missing" not in shown


def test_an_mpi_init_failure_without_the_discovery_notice_is_not_a_missing_launcher(rules):
    root, shown = root_and_shown(rules, "*** An error occurred in MPI_Init_thread\n*** on a NULL communicator")
    assert "launcher-env-missing" not in shown


def test_another_missing_module_stays_an_environment_problem(rules):
    root, _ = root_and_shown(rules, "ModuleNotFoundError: No module named 'datasets'")
    assert root == "launcher-python-mismatch"


TORCH_TOO_OLD = [
    "TypeError: barrier() got an unexpected keyword argument 'device_ids'",
    "TypeError: init_process_group() got an unexpected keyword argument 'device_id'",
    "Accelerator error-> __init__() got an unexpected keyword argument 'static_graph'",
    "TypeError: DistributedDataParallel.__init__() got an unexpected keyword argument 'static_graph'",
    "AttributeError: 'DistributedDataParallel' object has no attribute '_set_static_graph'",
    "[rank1]: TypeError: new_group() got an unexpected keyword argument 'use_local_synchronization'",
    # DDP and DistributedSampler arguments a later torch added (find_unused_parameters 1.1, drop_last 1.8), with and
    # without the class name newer Pythons print
    "TypeError: __init__() got an unexpected keyword argument 'find_unused_parameters'",
    "TypeError: DistributedDataParallel.__init__() got an unexpected keyword argument 'delay_all_reduce_named_params'",
    "TypeError: __init__() got an unexpected keyword argument 'drop_last'",
    "TypeError: DistributedSampler.__init__() got an unexpected keyword argument 'drop_last'",
]


@pytest.mark.parametrize("line", TORCH_TOO_OLD)
def test_a_distributed_api_this_torch_lacks_is_a_version_mismatch(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "library-version-incompatible"


FRAMEWORK_OPTION_MARKDOWN = [
    "TypeError: init() got an unexpected keyword argument 'gpus'",
    "TypeError: Trainer.init() got an unexpected keyword argument 'gpus'",
    "TypeError: init() got an unexpected keyword argument 'distributed_backend'",
]


@pytest.mark.parametrize("line", FRAMEWORK_OPTION_MARKDOWN)
def test_a_removed_framework_option_pasted_through_markdown(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "library-version-incompatible"


NOT_A_VERSION = [
    "TypeError: MyModel.init() got an unexpected keyword argument 'gpus'",
    "TypeError: MyModel.__init__() got an unexpected keyword argument 'static_graph'",
    "TypeError: init() got an unexpected keyword argument 'hidden_dim'",
    "TypeError: my_barrier() got an unexpected keyword argument 'device_ids'",
    "TypeError: __init__() got an unexpected keyword argument 'find_unused_parameter'",
    "TypeError: MySampler.__init__() got an unexpected keyword argument 'drop_last'",
]


@pytest.mark.parametrize("line", NOT_A_VERSION)
def test_user_code_arguments_are_not_version_mismatches(rules, line):
    _, shown = root_and_shown(rules, line)
    assert "library-version-incompatible" not in shown


SEMAPHORE_ENOSPC = """\
/root/miniconda3/envs/vits/lib/python3.8/site-packages/joblib/_multiprocessing_helpers.py:46: UserWarning: [Errno 28] No space left on device.  joblib will operate in serial mode
  warnings.warn('%s.  joblib will operate in serial mode' % (e,))
Traceback (most recent call last):
  File "finetune_speaker_v2.py", line 55, in main
    mp.spawn(run, nprocs=n_gpus, args=(n_gpus, hps,))
  File "/root/miniconda3/envs/vits/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 182, in start_processes
    error_queue = mp.SimpleQueue()
  File "/root/miniconda3/envs/vits/lib/python3.8/multiprocessing/synchronize.py", line 57, in __init__
    sl = self._semlock = _multiprocessing.SemLock(
OSError: [Errno 28] No space left on device
"""

SEMAPHORE_ENOSPC_PY37 = """\
  File "/usr/lib/python3.7/multiprocessing/synchronize.py", line 162, in __init__
    SemLock.__init__(self, SEMAPHORE, 1, 1, ctx=ctx)
OSError: [Errno 28] No space left on device
"""


@pytest.mark.parametrize("text", [SEMAPHORE_ENOSPC, SEMAPHORE_ENOSPC_PY37])
def test_no_space_for_a_semaphore_is_a_full_dev_shm(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "shm-too-small"
    assert "disk-write-failed" not in shown[:1]


def test_the_joblib_notice_alone_in_a_finished_run_is_quiet(rules):
    text = ("/usr/lib/python3/dist-packages/joblib/_multiprocessing_helpers.py:46: UserWarning: [Errno 28] "
            "No space left on device.  joblib will operate in serial mode\nEpoch 1 done\n")
    _, shown = root_and_shown(rules, text)
    assert shown == []


def test_a_checkpoint_write_that_fails_stays_a_full_disk(rules):
    text = ('  File "/opt/conda/lib/python3.7/site-packages/torch/serialization.py", line 604, in _save\n'
            "    zip_file.write_record(name, storage.data_ptr(), num_bytes)\n"
            "OSError: [Errno 28] No space left on device\n")
    root, _ = root_and_shown(rules, text)
    assert root == "disk-write-failed"


DEVICE_INDEX_ASSERT = [
    'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/'
    'CUDAContext.cpp":50, please report a bug to PyTorch. device=1, num_gpus=',
    "CUDA call failed lazily at initialization with error: device >= 0 && device < num_gpus INTERNAL "
    'ASSERT FAILED at "../aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.',
]


@pytest.mark.parametrize("line", DEVICE_INDEX_ASSERT)
def test_the_device_count_assert_is_the_device_index_family(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root in {"local-rank-exceeds-devices", "cuda-invalid-device"}


ROCBLAS_NO_ARCH = [
    "rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\/rocblas/library/TensileLibrary.dat: "
    "No such file or directory for GPU arch : gfx1103",
    "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1201",
    "rocBLAS error: Cannot read /home/user/venv/lib/python3.10/site-packages/torch/lib/rocblas/library/"
    "TensileLibrary.dat: Illegal seek",
]


@pytest.mark.parametrize("line", ROCBLAS_NO_ARCH)
def test_rocblas_without_kernels_for_the_card(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "gpu-arch-unsupported"


def test_a_rocblas_listing_of_libraries_is_quiet(rules):
    text = ('"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx908.dat"\n'
            '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat"\n')
    _, shown = root_and_shown(rules, text)
    assert shown == []


QUANTIZED_SPLIT_OVER_GPUS = [
    "ValueError: You can't train a model that has been loaded in 8-bit precision on a different device than "
    "the one you're training on. Make sure you loaded the model on the correct device using for example "
    "`device_map={'':torch.cuda.current_device()}`",
    "ValueError: You can't train a model that has been loaded in 8-bit or 4-bit precision on a different device "
    "than the one you're training on. Make sure you loaded the model on the correct device using for example "
    "`device_map={'':torch.cuda.current_device()}` or `device_map={'':torch.xpu.current_device()}`",
]


@pytest.mark.parametrize("line", QUANTIZED_SPLIT_OVER_GPUS)
def test_a_quantized_model_dispatched_over_gpus_in_both_accelerate_wordings(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "device-map-with-ddp"


FSDP_DEVICE_NOT_SET = [
    "ValueError: Inconsistent compute device and `device_id` on rank 0: cuda:1 vs cuda:0",
    "[rank4]: ValueError: Inconsistent compute device and `device_id` on rank 3: cuda:0 vs cuda:3",
    "fsdp/_init_utils.py,line889 inconsistent compute device and'device_id ' on rank 3: cuda:0 vs cuda:3",
    "AssertionError: Expects tensor to be on the compute device cuda:2",
]


@pytest.mark.parametrize("line", FSDP_DEVICE_NOT_SET)
def test_fsdp_compute_device_checks_are_the_device_not_selected_per_rank(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "missing-set-device"


LAUNCHER_OPTION_OF_NEWER_TORCH = [
    "torchrun: error: unrecognized arguments: --nproc-per-node=1",
    "usage: torchrun [-h] [--nnodes NNODES] [--nproc_per_node NPROC_PER_NODE]\n"
    "torchrun: error: unrecognized arguments: --local-ranks-filter 0",
    "launch.py: error: unrecognized arguments: --standalone",
]


@pytest.mark.parametrize("text", LAUNCHER_OPTION_OF_NEWER_TORCH)
def test_a_launcher_refusing_an_option_of_a_newer_torch(rules, text):
    root, shown = root_and_shown(rules, text)
    assert root == "library-version-incompatible"
    assert "local-rank-argument" not in shown


@pytest.mark.parametrize("line", [
    "train.py: error: unrecognized arguments: --local-rank=0",
    "main.py: error: unrecognized arguments: --local_rank=3 -m",
])
def test_the_script_refusing_the_local_rank_flag_stays_the_local_rank_argument(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "local-rank-argument"


def test_an_extension_built_for_a_torch_before_1_13(rules):
    text = ("ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n"
            "E0524 02:47:32.143000 139970725283648 torch/distributed/elastic/multiprocessing/api.py:826] failed "
            "(exitcode: 1) local_rank: 0 (pid: 471996) of binary: /home/user/venv/bin/python\n")
    root, _ = root_and_shown(rules, text)
    assert root == "library-version-incompatible"


SHARDED_PLACEHOLDERS = [
    # saved under ZeRO-3 without gathering, loaded by from_pretrained
    "RuntimeError: Error(s) in loading state_dict for MistralForCausalLM:\n"
    "\tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([0]) from checkpoint, "
    "the shape in current model is torch.Size([32002, 4096]).\n"
    "\tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained` method.",
    # a whole checkpoint loaded into the partitioned model
    "RuntimeError: Error(s) in loading state_dict for MT5ForConditionalGeneration:\n"
    "        size mismatch for shared.weight: copying a param with shape torch.Size([250112, 512]) from "
    "checkpoint, the shape in current model is torch.Size([0]).",
]


@pytest.mark.parametrize("text", SHARDED_PLACEHOLDERS)
def test_empty_shard_placeholders_in_a_checkpoint(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "sharded-checkpoint-not-gathered"


def test_an_ordinary_size_mismatch_is_not_a_sharded_checkpoint(rules):
    text = ("RuntimeError: Error(s) in loading state_dict for ResNet:\n"
            "\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from checkpoint, "
            "the shape in current model is torch.Size([10, 2048]).\n")
    _, shown = root_and_shown(rules, text)
    assert "sharded-checkpoint-not-gathered" not in shown


@pytest.mark.parametrize("text", [
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
    "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f3a2c1d5e50>\nTraceback (most recent call last):\n"
    '  File "/usr/lib/python3/site-packages/deepspeed/ops/adam/cpu_adam.py", line 102, in __del__\n'
    "    self.ds_opt_adam.destroy_adam(self.opt_id)\n"
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
])
def test_a_deepspeed_cpu_optimizer_without_its_op_is_a_missing_build_tool(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "tool-missing"


def test_the_cpu_adam_echo_does_not_hide_the_stated_build_reason(rules):
    text = ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
            "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n")
    facts_root, shown = root_and_shown(rules, text)
    assert facts_root == "tool-missing"
    assert shown == ["tool-missing"]


def test_a_dataloader_refusing_shuffle_with_a_sampler(rules):
    root, _ = root_and_shown(rules, "ValueError: sampler option is mutually exclusive with shuffle")
    assert root == "shuffle-with-sampler"


@pytest.mark.parametrize("line", [
    "ValueError: Invalid rank 2, rank should be in the interval [0, 1]",
    "[rank9]: ValueError: Invalid rank 9, rank should be in the interval [0, 7]",
])
def test_a_sampler_rank_outside_its_replicas_is_an_inconsistent_rank_setup(rules, line):
    root, _ = root_and_shown(rules, line)
    assert root == "rank-env-inconsistent"


ENV_INT_OF_NONE = [
    '  File "train.py", line 12, in ddp_setup\n    local_rank = int(os.environ.get("LOCAL_RANK"))\n'
    "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
    '  File "/workspace/utils.py", line 40, in init_distributed\n    world_size = int(os.environ.get("WORLD_SIZE"))\n'
    "TypeError: int() argument must be a string, a bytes-like object or a number, not 'NoneType'",
]


@pytest.mark.parametrize("text", ENV_INT_OF_NONE)
def test_a_launcher_variable_read_as_none_is_a_missing_launcher(rules, text):
    root, _ = root_and_shown(rules, text)
    assert root == "launcher-env-missing"


def test_int_of_none_elsewhere_is_not_a_missing_launcher(rules):
    text = ('  File "train.py", line 80, in main\n    steps = int(cfg.get("max_steps"))\n'
            "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'")
    _, shown = root_and_shown(rules, text)
    assert "launcher-env-missing" not in shown


def test_the_compiled_network_looked_up_on_the_ddp_wrapper(rules):
    root, _ = root_and_shown(rules, "[rank6]: AttributeError: 'DistributedDataParallel' object has no attribute '_orig_mod'")
    assert root == "ddp-wrapper-attribute"


def test_a_ddp_internal_that_an_older_torch_lacks_stays_a_version_mismatch(rules):
    root, shown = root_and_shown(rules, "AttributeError: 'DistributedDataParallel' object has no attribute '_set_static_graph'")
    assert root == "library-version-incompatible"
    assert "ddp-wrapper-attribute" not in shown
