"""collective-mismatch (scan-recall8): Accelerate's ``save_state`` / ``load_state`` on the main process only in a run
the file shows sharded (DeepSpeed or FSDP behind the Accelerator): every process then saves or loads its own shard
and they synchronise, so the main process waits forever (bghira/SimpleTuner#262, huggingface/diffusers#2606,
huggingface/accelerate#1171). The sharded engine shown by its plugin (configured, built, or tested through
``DistributedType``). Near misses that stay quiet: plain DDP (no sign of a sharded engine), diffusers' fix
(``DistributedType.DEEPSPEED or accelerator.is_main_process``, either order), and saving on every process with only
the pruning of old checkpoints on the main one."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import os
import shutil

import torch
from accelerate import Accelerator
from accelerate.utils import DeepSpeedPlugin, DistributedType, FullyShardedDataParallelPlugin

{setup}
model = torch.nn.Linear(16, 16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = accelerator.prepare(model, optimizer)
if os.path.isdir("out/last"):
{resume}
global_step = 0
for step in range(1000):
    loss = model(torch.randn(4, 16, device=accelerator.device)).pow(2).mean()
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    global_step += 1
    if global_step % 100 == 0:
{save}
'''

PLUGIN_CONFIGURED = '''accelerator = Accelerator(mixed_precision="bf16")
if accelerator.state.deepspeed_plugin is not None:
    accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = 4'''
DEEPSPEED_BUILT = 'accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=2))'
FSDP_BUILT = 'accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())'
PLAIN = 'accelerator = Accelerator(mixed_precision="bf16")'

RESUME_ALL = '    accelerator.load_state("out/last")'
RESUME_MAIN = '    if accelerator.is_main_process:\n        accelerator.load_state("out/last")'
SAVE_MAIN = '''        if accelerator.is_main_process:
            shutil.rmtree("out/old", ignore_errors=True)
            accelerator.save_state(f"out/checkpoint-{global_step}")'''
SAVE_ALL = '''        if accelerator.is_main_process:
            shutil.rmtree("out/old", ignore_errors=True)
        accelerator.save_state(f"out/checkpoint-{global_step}")'''
SAVE_FIXED = '''        if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:
            accelerator.save_state(f"out/checkpoint-{global_step}")'''
SAVE_FIXED_SWAPPED = '''        if accelerator.is_main_process or accelerator.state.deepspeed_plugin is not None:
            accelerator.save_state(f"out/checkpoint-{global_step}")'''

POSITIVE = {
    "plugin-configured-save": (PLUGIN_CONFIGURED, RESUME_ALL, SAVE_MAIN),
    "deepspeed-plugin-built-save": (DEEPSPEED_BUILT, RESUME_ALL, SAVE_MAIN),
    "fsdp-plugin-built-save": (FSDP_BUILT, RESUME_ALL, SAVE_MAIN),
    "plugin-configured-load": (PLUGIN_CONFIGURED, RESUME_MAIN, SAVE_ALL),
}

QUIET = {
    "plain-ddp": (PLAIN, RESUME_ALL, SAVE_MAIN),
    "saved-on-every-process": (PLUGIN_CONFIGURED, RESUME_ALL, SAVE_ALL),
    "deepspeed-or-main": (PLUGIN_CONFIGURED, RESUME_ALL, SAVE_FIXED),
    "main-or-plugin": (DEEPSPEED_BUILT, RESUME_ALL, SAVE_FIXED_SWAPPED),
}


def script(setup: str, resume: str, save: str) -> str:
    code = SCRIPT.format(setup=setup, resume=resume, save=save)
    if "Plugin(" not in setup and "DistributedType" not in save:
        code = code.replace("from accelerate.utils import DeepSpeedPlugin, DistributedType, FullyShardedDataParallelPlugin\n", "")
    return code


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_sharded_state_on_main_only(tmp_path, name):
    assert ID in scan_ids(tmp_path, script(*POSITIVE[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_sharded_state_near_misses(tmp_path, name):
    assert ID not in scan_ids(tmp_path, script(*QUIET[name]))
