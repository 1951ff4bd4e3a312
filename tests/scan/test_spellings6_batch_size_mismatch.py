"""batch-size-mismatch (session 6): a value declared the global batch in a DeepSpeed config, used per rank.

DALLE-pytorch#397: ``deepspeed_config = {"train_batch_size": BATCH_SIZE, ...}`` handed to deepspeed.initialize,
while the WebDataset every rank builds batches ``.batched(BATCH_SIZE)``: each rank took the whole global batch. The
config's ``train_batch_size`` is DeepSpeed's global batch (micro batch x accumulation x world size), whatever the
variable's name. Quiet when the rank's loader divides it, when the config says the per-GPU micro batch, when the
dict never reaches the engine (a tracker's config), or when only rank 0 builds the loader.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "batch-size-mismatch"

SCRIPT = '''
import argparse
import deepspeed
import torch
import torch.nn as nn
import webdataset as wds
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--urls", type=str, default="shards-{{000..099}}.tar")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
BATCH_SIZE = args.batch_size

deepspeed.init_distributed()
world_size = torch.distributed.get_world_size()
model = nn.Linear(16, 16)
data = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 16))
{loader}
config = {{"{key}": BATCH_SIZE, "gradient_accumulation_steps": 1, "fp16": {{"enabled": True}}}}
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters(),
                                               {config_kw}=config)
for x, y in dl:
    loss = nn.functional.mse_loss(engine(x.to(engine.device)), y.to(engine.device))
    engine.backward(loss)
    engine.step()
'''

LOADER = "dl = DataLoader(data, batch_size=BATCH_SIZE, sampler=DistributedSampler(data))"
WDS = "dl = wds.WebLoader(wds.WebDataset(args.urls).to_tuple('x', 'y').batched(BATCH_SIZE), batch_size=None)"


@pytest.mark.parametrize("loader,config_kw", [
    (LOADER, "config"),
    (LOADER, "config_params"),
    (WDS, "config"),
])
def test_global_config_batch_used_as_each_ranks_batch(tmp_path, loader, config_kw):
    code = SCRIPT.format(loader=loader, key="train_batch_size", config_kw=config_kw)
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("loader,key", [
    ("dl = DataLoader(data, batch_size=BATCH_SIZE // world_size, sampler=DistributedSampler(data))", "train_batch_size"),
    ("dl = wds.WebLoader(wds.WebDataset(args.urls).batched(BATCH_SIZE // world_size), batch_size=None)",
     "train_batch_size"),
    (LOADER, "train_micro_batch_size_per_gpu"),  # the config itself says per GPU: consistent
])
def test_quiet_when_the_rank_batch_is_divided_or_declared_per_gpu(tmp_path, loader, key):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(loader=loader, key=key, config_kw="config"))


def test_quiet_when_the_dict_is_a_trackers_config_not_the_engines(tmp_path):
    code = SCRIPT.format(loader=LOADER, key="train_batch_size", config_kw="config").replace(
        "                                               config=config)",
        "                                               config=args.deepspeed_config)\n"
        "run_config = {'train_batch_size': BATCH_SIZE}")
    assert ID not in scan_ids(tmp_path, code)


def test_quiet_when_only_rank_zero_builds_the_loader(tmp_path):
    code = SCRIPT.format(loader="if torch.distributed.get_rank() == 0:\n    dl = DataLoader(data, batch_size=BATCH_SIZE)",
                         key="train_batch_size", config_kw="config")
    assert ID not in scan_ids(tmp_path, code)
