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
