"""Families found on forum and blog evidence (logs-forum7): forum pastes are one line quoted in prose,
one rank's traceback, a framework's own re-wording of an error torch words differently.

- The network's attribute read on a data-parallel wrapper instead of ``.module`` is one family across
  wrappers: DDP, DataParallel, mmcv's MMDistributedDataParallel, FSDP, fairscale's sharded wrapper and
  DeepSpeed's engine (which keeps the network in ``.module`` too). The wrappers' own internals and
  their own API (``no_sync`` missing from an older DeepSpeed engine) are a version problem, and other
  objects' missing attributes (the optimizer, accelerate's Accelerator) are none of it.
- A launcher variable missing from the environment is one family whoever words it: torch's env://
  rendezvous, a bare ``KeyError: 'RANK'``, or a framework that catches the KeyError and names the
  launcher (ColossalAI and the projects built on it: "Could not find 'RANK' in the torch environment",
  "... in the SLURM environment", "... in the OpenMPI environment").
"""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

WRAPPER_ATTRIBUTE = [
    "AttributeError: 'DeepSpeedEngine' object has no attribute 'model'",
    "'DeepSpeedEngine' object has no attribute 'text_model'",
    "[rank0]: AttributeError: 'DeepSpeedEngine' object has no attribute 'model'. Did you mean: 'module'?",
    "torch.nn.modules.module.ModuleAttributeError: 'DeepSpeedEngine' object has no attribute 'generate'",
    "AttributeError: 'MMDistributedDataParallel' object has no attribute 'backbone'",
    "AttributeError: 'FullyShardedDataParallel' object has no attribute 'get_input_embeddings'",
    # a forum paste: the line quoted inside a traceback cut to its last frames
    'Traceback (most recent call last):\n  File "main.py", line 367, in main\n'
    "    print_throughput(model.model, args, end - start, args.global_rank)\n"
    '  File "/usr/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 464, in __getattr__\n'
    "    raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")\n"
    "AttributeError: 'DeepSpeedEngine' object has no attribute 'model'",
]


@pytest.mark.parametrize("text", WRAPPER_ATTRIBUTE)
def test_the_network_read_on_any_data_parallel_wrapper_is_the_wrapper_attribute_family(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "ddp-wrapper-attribute"


NOT_WRAPPER_ATTRIBUTE = [
    # the wrappers' own API or internals: a version mismatch, not the network read on the wrapper
    "torch.nn.modules.module.ModuleAttributeError: 'DeepSpeedEngine' object has no attribute 'no_sync'",
    "AttributeError: 'DeepSpeedEngine' object has no attribute '_deepcompile_active'",
    "AttributeError: 'DistributedDataParallel' object has no attribute '_use_replicated_tensor_module'",
    # other objects of a DeepSpeed / accelerate run
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
    "AttributeError: 'Accelerator' object has no attribute 'deepspeed_config'",
    "AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute 'loss_scale'",
]


@pytest.mark.parametrize("text", NOT_WRAPPER_ATTRIBUTE)
def test_other_missing_attributes_are_not_the_wrapper_attribute_family(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "ddp-wrapper-attribute" not in shown


LAUNCHER_VARIABLE_REWORDED = [
    "RuntimeError: Could not find 'RANK' in the torch environment",
    "RuntimeError: Could not find 'LOCAL_RANK' in the torch environment, visit https://www.colossalai.org/ "
    "for more information on launching with torch",
    "RuntimeError: Could not find 'SLURM_PROCID' in the SLURM environment",
    "RuntimeError: Could not find 'OMPI_COMM_WORLD_RANK' in the OpenMPI environment, visit "
    "https://www.colossalai.org/ for more information on launching with OpenMPI",
    # the chained traceback a user pastes: torch's KeyError, then the framework's re-raise
    'Traceback (most recent call last):\n  File "colossalai/initialize.py", line 209, in launch_from_torch\n'
    '    rank = int(os.environ["RANK"])\n  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n'
    "    raise KeyError(key) from None\nKeyError: 'RANK'\n\n"
    "During handling of the above exception, another exception occurred:\n\n"
    'Traceback (most recent call last):\n  File "scripts/inference.py", line 20, in main\n'
    "    colossalai.launch_from_torch({})\n"
    "RuntimeError: Could not find 'RANK' in the torch environment, visit https://www.colossalai.org/ for "
    "more information on launching with torch",
]


@pytest.mark.parametrize("text", LAUNCHER_VARIABLE_REWORDED)
def test_a_framework_naming_the_missing_launcher_variable_is_launcher_env_missing(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "launcher-env-missing"


NOT_LAUNCHER_VARIABLE = [
    # a file or a lower-case key that is not in some environment: no launcher variable
    "FileNotFoundError: Could not find 'config.json' in the model directory",
    "Could not find 'cuda' in the torch environment",
    "INFO: torch environment: RANK=0 LOCAL_RANK=0 WORLD_SIZE=2",
]


@pytest.mark.parametrize("text", NOT_LAUNCHER_VARIABLE)
def test_other_could_not_find_lines_are_not_a_missing_launcher(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "launcher-env-missing" not in shown


NOTEBOOK_SPAWN = [
    # what every spawned child prints when the function came from a notebook cell (Python <= 3.11, 3.12+)
    "AttributeError: Can't get attribute 'train' on <module '__main__' (built-in)>",
    "AttributeError: Can't get attribute 'worker' on <module '__main__' "
    "(<class '_frozen_importlib.BuiltinImporter'>)>",
    # the children's line followed by torch's teardown and the notebook's closing exception
    "AttributeError: Can't get attribute 'train' on <module '__main__' "
    "(<class '_frozen_importlib.BuiltinImporter'>)>\n"
    "W0407 09:59:08.879000 225 torch/multiprocessing/spawn.py:165] Terminating process 281 via signal SIGTERM\n\n"
    "ProcessExitedException: process 0 terminated with exit code 1",
    # a notebook paste cut to the cell frame and mp.spawn's closing exception (classic IPython, IPython 8)
    "---------------------------------------------------------------------------\n"
    "ProcessExitedException                    Traceback (most recent call last)\n"
    "<ipython-input-5-2b2ec8c4a1f0> in <module>\n"
    "----> 1 mp.spawn(train, nprocs=2, args=(2,), join=True)\n\n"
    "ProcessExitedException: process 0 terminated with exit code 1",
    "Cell In[7], line 3\n      1 world_size = torch.cuda.device_count()\n"
    "----> 3 mp.spawn(main, args=(world_size,), nprocs=world_size)\n\n"
    "ProcessExitedException: process 1 terminated with exit code 1",
]


@pytest.mark.parametrize("text", NOTEBOOK_SPAWN)
def test_a_notebook_function_lost_by_spawned_children_is_ddp_in_notebook(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "ddp-in-notebook"


NOT_NOTEBOOK_SPAWN = [
    # the same closing exception from a script: no notebook frame, so no notebook verdict
    'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n'
    "    mp.spawn(main, args=(world_size,), nprocs=world_size)\n"
    "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 1",
    # a module that really lacks the attribute (a script's __main__, a pickle of another module)
    "AttributeError: Can't get attribute 'Net' on <module '__main__' from '/home/user/train.py'>",
    "AttributeError: Can't get attribute 'Tokenizer' on <module 'mylib.text' from '/opt/mylib/text.py'>",
]


@pytest.mark.parametrize("text", NOT_NOTEBOOK_SPAWN)
def test_a_script_or_module_attribute_is_not_ddp_in_notebook(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "ddp-in-notebook" not in shown


def test_a_notebook_child_that_states_its_reason_keeps_that_reason(rules):
    text = (
        "<ipython-input-5-2b2ec8c4a1f0> in <module>\n----> 1 mp.spawn(train, nprocs=2)\n"
        "-- Process 1 terminated with the following error:\nTraceback (most recent call last):\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 23.69 GiB total "
        "capacity; 22.73 GiB already allocated; 9.69 MiB free; 22.84 GiB reserved in total by PyTorch)\n"
        "ProcessExitedException: process 1 terminated with exit code 1"
    )
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"


NUMPY_ABI = [
    # NumPy 2 under extensions built for NumPy 1.x, after the Windows c10d warning a forum paste keeps
    "[W socket.cpp:697] [c10d] The client socket has failed to connect to [host.example.com]:29500 "
    "(system error: 10049 - The requested address is not valid in its context.).\n\n"
    "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash. To support both 1.x "
    "and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.\n"
    "Some module may need to rebuild instead e.g. with 'pybind11>=2.12'.",
    "AttributeError: _ARRAY_API not found",
    "ImportError: numpy.core.multiarray failed to import",
    "ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, "
    "got 88 from PyObject",
    "RuntimeError: Numpy is not available",
]


@pytest.mark.parametrize("text", NUMPY_ABI)
def test_an_extension_built_for_another_numpy_is_a_library_version_mismatch(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "library-version-incompatible"


HEALTHY_NUMPY_AND_WINDOWS = [
    # torch's warning alone: the run goes on
    "/usr/lib/python3/site-packages/torch/_subclasses/functional_tensor.py:258: UserWarning: Failed to initialize "
    "NumPy: _ARRAY_API not found (Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)\n"
    "  cpu = _conversion_method_template(device=torch.device(\"cpu\"))\n"
    "epoch 1 step 100 loss 0.52\nepoch 1 step 200 loss 0.47\nTraining finished.",
    # a Windows run: the c10d IPv6/hostname retries and the redirect notice, then training
    "W0328 16:00:46.763000 12608 torch\\distributed\\elastic\\multiprocessing\\redirects.py:27] NOTE: Redirects "
    "are currently not supported in Windows or MacOs.\n"
    "[W328 16:00:46.000000000 socket.cpp:697] [c10d] The client socket has failed to connect to "
    "[kubernetes.docker.internal]:29500 (system error: 10049 - The requested address is not valid in its context.).\n"
    "Epoch 1/10: loss 0.512\nEpoch 2/10: loss 0.401\nTraining finished.",
]


@pytest.mark.parametrize("text", HEALTHY_NUMPY_AND_WINDOWS)
def test_harmless_numpy_and_windows_warnings_stay_quiet(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert shown == []


ZERO3_PLACEHOLDER = [
    "ValueError: Trying to set a tensor of shape torch.Size([43176, 8192]) in \"weight\" (which has shape "
    "torch.Size([0])), this look incorrect.",
    "ValueError: Trying to set a tensor of shape torch.Size([32000, 4096]) in \"weight\" (which has shape "
    "torch.Size([0])), this looks incorrect.",
    "\tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([0]) from checkpoint, "
    "the shape in current model is torch.Size([32002, 4096]).",
]


@pytest.mark.parametrize("text", ZERO3_PLACEHOLDER)
def test_a_whole_tensor_meeting_a_zero3_placeholder_is_the_sharded_checkpoint_family(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "sharded-checkpoint-not-gathered"


def test_a_real_shape_mismatch_is_not_the_zero3_placeholder(rules):
    text = ("ValueError: Trying to set a tensor of shape torch.Size([32000, 4096]) in \"weight\" (which has shape "
            "torch.Size([32001, 4096])), this looks incorrect.")
    _root, shown = root_and_shown(rules, text)
    assert "sharded-checkpoint-not-gathered" not in shown


# A GPU index at or above device_count() read through torch's device-property API
# (get_device_properties / get_device_capability / get_device_name, and the same Python check in
# the XPU/NPU/MLU backends) is an AssertionError worded "Invalid device id", not CUDA's "invalid
# device ordinal"; in a distributed run the index is a rank (the global rank on a second node).
INVALID_DEVICE_ID = [
    "Invalid device id",
    "AssertionError: Invalid device id",
    "[rank9]: AssertionError: Invalid device id",
    'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n'
    "    props = torch.cuda.get_device_properties(rank)\n"
    '  File "/usr/lib/python3.10/site-packages/torch/cuda/__init__.py", line 465, in get_device_properties\n'
    '    raise AssertionError("Invalid device id")\n'
    "AssertionError: Invalid device id",
]


@pytest.mark.parametrize("text", INVALID_DEVICE_ID)
def test_a_rank_beyond_the_visible_gpus_read_through_device_properties_is_local_rank_exceeds(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "local-rank-exceeds-devices"


def test_a_hard_coded_index_before_invalid_device_id_is_that_index(rules):
    text = (
        'Traceback (most recent call last):\n  File "bench.py", line 12, in <module>\n'
        "    name = torch.cuda.get_device_name('cuda:3')\n"
        "AssertionError: Invalid device id"
    )
    root, _shown = root_and_shown(rules, text)
    assert root == "cuda-invalid-device"


NOT_INVALID_DEVICE_ID = [
    "RuntimeError: Invalid device string: 'cuda:abc'",
    "ValueError: Invalid device identifier 'gpu0' in config",
    "RuntimeError: Invalid device, must be cuda device",
    "RuntimeError: Expected one of cpu, cuda, xpu device type at start of device string: gpu",
]


@pytest.mark.parametrize("text", NOT_INVALID_DEVICE_ID)
def test_other_invalid_device_wordings_are_not_a_rank_beyond_the_gpus(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "local-rank-exceeds-devices" not in shown


# A rendezvous scheme this torch build never registered is the build, not the script: the Windows
# wheels before 1.8 had no env:// (before 1.7 no torch.distributed at all, already read as
# backend-unavailable). A malformed init_method (an address with no scheme) is not that.
RENDEZVOUS_NOT_BUILT = [
    "RuntimeError: No rendezvous handler for env://",
    "RuntimeError: No rendezvous handler for tcp://",
    'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'
    "    dist.init_process_group(backend='gloo', init_method='env://', rank=rank, world_size=2)\n"
    '  File "C:\\\\Users\\\\user\\\\anaconda3\\\\lib\\\\site-packages\\\\torch\\\\distributed\\\\rendezvous.py", line 82, in rendezvous\n'
    "RuntimeError: No rendezvous handler for env://",
]


@pytest.mark.parametrize("text", RENDEZVOUS_NOT_BUILT)
def test_a_rendezvous_scheme_missing_from_the_build_is_backend_unavailable(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "backend-unavailable"


def test_an_init_method_without_a_scheme_is_not_a_missing_build(rules):
    _root, shown = root_and_shown(rules, "RuntimeError: No rendezvous handler for ://")
    assert "backend-unavailable" not in shown


# gloo cannot find the interface owning the address this host's name resolves to (tcp transport of
# torch 1.x and the libuv transport of Windows builds word it alike): the interface family. Other
# programs' "Unable to find interface for" lines are not gloo's.
GLOO_INTERFACE_NOT_FOUND = [
    "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:208] ifa != nullptr. "
    "Unable to find interface for: [127.0.1.1]",
    "RuntimeError: [enforce fail at C:\\actions-runner\\_work\\pytorch\\pytorch\\third_party\\gloo\\gloo\\"
    "transport\\uv\\device.cc:172] ifa != nullptr. Unable to find interface for: [0.0.0.0]",
]


@pytest.mark.parametrize("text", GLOO_INTERFACE_NOT_FOUND)
def test_gloo_without_an_interface_for_its_address_is_the_interface_family(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "wrong-network-interface"


def test_another_programs_interface_lookup_is_not_gloos(rules):
    _root, shown = root_and_shown(rules, "ERROR: Unable to find interface for IP: 10.0.0.7")
    assert "wrong-network-interface" not in shown


# accelerate refuses NCCL on consumer GPUs whose driver breaks peer-to-peer unless NCCL_P2P_DISABLE /
# NCCL_IB_DISABLE are set (both its wordings, its forks'): the P2P family, whose fix is exactly that.
CONSUMER_GPU_P2P = [
    "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. "
    'Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `accelerate launch` which will do this '
    "automatically.",
    "NotImplementedError: Using RTX 3090 or 4000 series doesn't support faster communication broadband via P2P or IB. "
    "Please",
    '  File "/home/user/miniconda3/lib/python3.10/site-packages/accelerate/state.py", line 287, in __init__\n'
    "    raise NotImplementedError(\n"
    "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. "
    'Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `sapiens_accelerator launch` which will do '
    "this automatically.",
]


@pytest.mark.parametrize("text", CONSUMER_GPU_P2P)
def test_accelerate_refusing_p2p_on_consumer_gpus_is_the_p2p_family(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "nccl-p2p-hang"


def test_a_script_echoing_the_advice_is_not_the_p2p_family(rules):
    text = "# RTX 3090 or 4000 series doesn't support faster communication broadband via P2P or IB\nexport NCCL_P2P_DISABLE=1"
    _root, shown = root_and_shown(rules, text)
    assert "nccl-p2p-hang" not in shown


# A spawned child re-importing a main module that starts processes at module level (Windows, macOS,
# mp.spawn, a spawn-context DataLoader): Python's bootstrapping-phase refusal, over its several lines
# or folded into one, is the missing main guard.
BOOTSTRAPPING_PHASE = [
    "RuntimeError: \n        An attempt has been made to start a new process before the\n"
    "        current process has finished its bootstrapping phase.\n\n"
    "        This probably means that you are not using fork to start your\n"
    "        child processes and you have forgotten to use the proper idiom\n"
    "        in the main module:\n\n"
    "            if __name__ == '__main__':\n                freeze_support()\n                ...",
    "RuntimeError: An attempt has been made to start a new process before the current process has finished its "
    "bootstrapping phase.",
    'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
    '  File "C:\\\\Users\\\\user\\\\anaconda3\\\\lib\\\\multiprocessing\\\\spawn.py", line 116, in spawn_main\n'
    "    exitcode = _main(fd, parent_sentinel)\n"
    '  File "C:\\\\Users\\\\user\\\\anaconda3\\\\lib\\\\multiprocessing\\\\spawn.py", line 134, in _check_not_importing_main\n'
    "    raise RuntimeError('''\n"
    "RuntimeError:\n        An attempt has been made to start a new process before the\n"
    "        current process has finished its bootstrapping phase.",
]


@pytest.mark.parametrize("text", BOOTSTRAPPING_PHASE)
def test_a_child_reimporting_a_main_that_spawns_is_the_missing_main_guard(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "spawn-without-main-guard"


def test_a_child_that_states_another_reason_keeps_it(rules):
    text = (
        "-- Process 1 terminated with the following error:\nTraceback (most recent call last):\n"
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 10.76 GiB total capacity)"
    )
    _root, shown = root_and_shown(rules, text)
    assert "spawn-without-main-guard" not in shown


# The JIT-built op's library missing from the extensions cache (its build failed, on this rank or on
# the one that built while the others waited, or was interrupted): the build family, whatever the
# cache directory is called. Other libraries missing from the loader path are not it.
EXTENSION_LIBRARY_MISSING = [
    "ImportError: /root/.cache/torch_extensions/py38_cu118/fused_adam/fused_adam.so: cannot open shared object "
    "file: No such file or directory",
    "ImportError: /home/user/.cache/torch_extensions/py39_cu118/cpu_adam/cpu_adam.so: cannot open shared object "
    "file: No such file or directory",
    "ImportError: workspace/torch_extendsions/fused_adam/fused_adam.so: cannot open shared object file: No such "
    "file or directory",
    "[rank1]: ImportError: /data/cache/ext/transformer_inference/transformer_inference.so: cannot open shared "
    "object file: No such file or directory",
]


@pytest.mark.parametrize("text", EXTENSION_LIBRARY_MISSING)
def test_a_jit_op_missing_from_the_extension_cache_is_the_build_family(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "tool-missing"


NOT_EXTENSION_LIBRARY = [
    "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
    "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
]


@pytest.mark.parametrize("text", NOT_EXTENSION_LIBRARY)
def test_other_missing_libraries_are_not_the_jit_build(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "tool-missing" not in shown


# Round s9: the reducer's unused-parameter report is a family of sentences, and a forum paste keeps any
# one of them (the diagnostic without its "for rank N: ..." tail, the explanation, the hint).
UNUSED_PARAMETERS_PARTIAL = [
    "Parameter indices which did not receive grad",
    "Parameters which did not receive grad",
    "Parameter indices which did not receive grad for rank 1: 244 245 286 287",
    "This error indicates that your module has parameters that were not used in producing loss.",
    "You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` "
    "to `torch.nn.parallel.DistributedDataParallel`, and by",
    "making sure all `forward` function outputs participate in calculating loss.",
    # torch 1.1-1.4: the (1)/(2) list on one line
    "You can enable unused parameter detection by (1) passing the keyword argument `find_unused_parameters=True` "
    "to `torch.nn.parallel.DistributedDataParallel`; (2) making sure all `forward` function outputs participate "
    "in calculating loss.",
]


@pytest.mark.parametrize("text", UNUSED_PARAMETERS_PARTIAL)
def test_any_sentence_of_the_reducers_unused_parameter_report_is_that_family(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "unused-parameters-error"


HEALTHY_UNUSED_PARAMETERS_WARNINGS = [
    "[W reducer.cpp:1346] Warning: find_unused_parameters=True was specified in DDP constructor, but did not "
    "find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd "
    "graph every iteration, which can adversely affect performance.",
    "Epoch 3: 100%|##########| 500/500 [01:02<00:00, 8.01it/s, loss=0.231]",
]


@pytest.mark.parametrize("text", HEALTHY_UNUSED_PARAMETERS_WARNINGS)
def test_the_harmless_find_unused_parameters_warning_stays_quiet(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "unused-parameters-error" not in shown


# torch calling an NCCL API its loaded libnccl lacks: quoted with or without the library path.
NCCL_API_SYMBOL_MISSING = [
    "undefined symbol: ncclCommRegister",
    "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
    "OSError: /opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommWindowRegister",
    "undefined symbol: ncclRedOpCreatePreMulSum",
]


@pytest.mark.parametrize("text", NCCL_API_SYMBOL_MISSING)
def test_torch_missing_an_nccl_api_symbol_is_a_library_version_mismatch(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "library-version-incompatible"


NCCL_PLUGIN_SYMBOL = [
    # NCCL skips a network/tuner plugin it cannot load: harmless
    "host:123:123 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.",
    "undefined symbol: ncclNetPlugin_v6",
    "undefined symbol: ncclTunerPlugin_v2",
]


@pytest.mark.parametrize("text", NCCL_PLUGIN_SYMBOL)
def test_an_nccl_plugin_symbol_is_not_the_torch_nccl_mismatch(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert "library-version-incompatible" not in shown


# accelerate's notebook_launcher refusing what a notebook cell did before the launch.
NOTEBOOK_LAUNCHER_REFUSALS = [
    ("ValueError: To launch a multi-GPU training from your notebook, the `Accelerator` should only be initialized "
     "inside your training function. Restart your notebook and make sure no cells initializes an `Accelerator`.",
     "ddp-in-notebook"),
    ("ValueError: To train on TPU in Colab or Kaggle Kernel, the `Accelerator` should only be initialized inside "
     "your training function. Restart your notebook and make sure no cells initializes an `Accelerator`.",
     "ddp-in-notebook"),
    ("ValueError: To launch a multi-GPU training from your notebook, you need to avoid running any instruction "
     "using `torch.cuda` in any cell. Restart your notebook and make sure no cells use `torch.cuda`.",
     "cuda-init-before-fork"),
    ("RuntimeError: Could not start distributed process. Libraries known to initialize CUDA upon import have been "
     "imported already. Please keep these imports inside your training function to try and help with this:",
     "cuda-init-before-fork"),
]


@pytest.mark.parametrize("text,finding", NOTEBOOK_LAUNCHER_REFUSALS)
def test_the_notebook_launcher_refusals_name_what_the_cell_did(rules, text, finding):
    root, _shown = root_and_shown(rules, text)
    assert root == finding


def test_a_notebook_launch_that_runs_stays_quiet(rules):
    text = "Launching training on 2 GPUs.\nepoch 0: 100%|##########| 40/40 [00:12<00:00, 3.2it/s]\n"
    _root, shown = root_and_shown(rules, text)
    assert not shown


# torch's arch warning is two sentences; a paste may keep only the list of capabilities the build has.
def test_the_supported_capabilities_sentence_alone_is_the_arch_family(rules):
    root, _shown = root_and_shown(rules, "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.")
    assert root == "gpu-arch-unsupported"


# Every rank waiting on the same Hugging Face cache lock until filelock gives up.
HF_CACHE_LOCK_TIMEOUT = [
    "filelock._error.Timeout: The file lock '/root/.cache/huggingface/hub/.locks/models--bert-base-uncased/abc123.lock' "
    "could not be acquired.",
    "filelock.Timeout: The file lock '/home/USER/.cache/huggingface/datasets/_home_USER_.cache_huggingface_datasets_json"
    "_default-1234_0.0.0_abcd.lock' could not be acquired.",
    "Timeout: The file lock '/data/hf_cache/hub/.locks/models--org--model/e2f3.lock' could not be acquired.",
]


@pytest.mark.parametrize("text", HF_CACHE_LOCK_TIMEOUT)
def test_a_hugging_face_cache_lock_timeout_is_cache_contention(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "hf-cache-contention"


def test_another_programs_lock_timeout_is_not_cache_contention(rules):
    _root, shown = root_and_shown(rules, "filelock._error.Timeout: The file lock '/tmp/my_tool/state.lock' could not be acquired.")
    assert "hf-cache-contention" not in shown


# Harmless lines forum posters ask about: a run printing them alone is healthy.
HARMLESS_FORUM_LINES = [
    "UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze "
    "and return a vector.",
    "[W socket.cpp:426] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family "
    "not supported by protocol).",
    "[rank0]:[W1224 10:00:00.000000000 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been "
    "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process.",
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being "
    "overloaded, please further tune the variable for optimal performance in your application as needed.",
    "[W ProcessGroupGloo.cpp:694] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
    "address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.",
]


@pytest.mark.parametrize("text", HARMLESS_FORUM_LINES)
def test_harmless_lines_forum_posters_ask_about_stay_clean(rules, text):
    _root, shown = root_and_shown(rules, text)
    assert not shown


def test_the_dataparallel_hint_still_rides_along_a_real_failure(rules):
    text = ("UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead "
            "unsqueeze and return a vector.\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total "
            "capacity; 21.10 GiB already allocated)\n")
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"


# The global-batch arithmetic refused by DeepSpeed's and Megatron's config checks.
BATCH_ARITHMETIC = [
    "AssertionError: Micro batch size per gpu: 0 has to be greater than 0",
    "AssertionError: Gradient accumulation steps: 0 has to be greater than 0",
    "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
    "gradient_acc_step * world_size 16 != 2 * 1 * 4",
    "AssertionError: global batch size (16) is not divisible by micro batch size (2) times data parallel size (16)",
]


@pytest.mark.parametrize("text", BATCH_ARITHMETIC)
def test_a_refused_global_batch_arithmetic_is_batch_size_mismatch(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "batch-size-mismatch"


def test_a_deepspeed_config_banner_with_positive_batches_stays_quiet(rules):
    text = ("[INFO] [config.py:988:print]   train_batch_size ............. 64\n"
            "[INFO] [config.py:988:print]   train_micro_batch_size_per_gpu  8\n"
            "[INFO] [config.py:988:print]   gradient_accumulation_steps .. 2\n")
    _root, shown = root_and_shown(rules, text)
    assert "batch-size-mismatch" not in shown


# The driver and the GPU as forum posts paste them: nvidia-smi's failures and CUDA's "unknown error".
DRIVER_AND_GPU = [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.", "cuda-invalid-device"),
    ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env "
     "variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
     "cuda-invalid-device"),
    ("Failed to initialize NVML: Driver/library version mismatch", "library-version-incompatible"),
    ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error", "cuda-kernel-fault"),
    ("RuntimeError: No backend type associated with device type mps", "device-mismatch"),
]


@pytest.mark.parametrize("text,finding", DRIVER_AND_GPU)
def test_driver_and_gpu_failures_as_forum_posts_paste_them(rules, text, finding):
    root, _shown = root_and_shown(rules, text)
    assert root == finding


def test_cuda_unknown_error_as_a_start_up_warning_stays_informational(rules):
    text = ("UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up "
            "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the "
            "available devices to be zero.")
    _root, shown = root_and_shown(rules, text)
    assert not shown


# A store that cannot listen is not always a port in use: the address may not be this host's, or the
# name may not resolve here.
STORE_BIND_REASONS = [
    ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
     "failed to bind to 203.0.113.7:29500 (errno: 99 - Cannot assign requested address).", "master-addr-not-local"),
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
     "port: 29500, useIpv6: false, code: -99, name: EADDRNOTAVAIL, message: address not available",
     "master-addr-not-local"),
    ("RuntimeError: The server socket has failed to listen on any local network address. useIpv6: 0, code: -3, "
     "name: EAI_NONAME, message: unknown node or service", "master-addr-unresolvable"),
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
     "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use", "master-port-in-use"),
    ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
     "failed to bind to [::]:29500 (errno: 98 - Address already in use).", "master-port-in-use"),
]


@pytest.mark.parametrize("text,finding", STORE_BIND_REASONS)
def test_a_store_that_cannot_listen_is_told_by_its_reason(rules, text, finding):
    root, shown = root_and_shown(rules, text)
    assert root == finding
    if finding != "master-port-in-use":
        assert "master-port-in-use" not in shown


def test_errno_99_on_a_client_connect_is_not_a_foreign_master_address(rules):
    text = "OSError: [Errno 99] Cannot assign requested address"
    _root, shown = root_and_shown(rules, text)
    assert "master-addr-not-local" not in shown
