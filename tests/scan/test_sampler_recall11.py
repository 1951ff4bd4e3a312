"""missing-distributed-sampler, scan-recall11: a loader built inside a class from a constructor parameter is judged
by what the instantiations pass (NVIDIA/VariantWorks#126: a data-layer class's ``DataLoader(..., shuffle=shuffle)``
under a per-GPU launch)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

SCRIPT = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ShardLayer:
    """Wraps the feature files into a loader for one training process."""

    def __init__(self, dataset, batch_size=32, shuffle={default}, distributed=False):
        sampler = {sampler}
        self.loader = DataLoader(dataset, batch_size=batch_size, {shuffle_arg}sampler=sampler)

    def __iter__(self):
        return iter(self.loader)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 10), torch.randint(0, 5, (4096,)))
    layer = ShardLayer(data, batch_size=64{passed})
    model = DistributedDataParallel(nn.Linear(10, 5).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        for x, y in layer:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''


def _code(default="False", passed=", shuffle=True", sampler="None", shuffle_arg="shuffle=shuffle, "):
    return SCRIPT.format(default=default, passed=passed, sampler=sampler, shuffle_arg=shuffle_arg)


@pytest.mark.parametrize("code, flagged", [
    (_code(), True),  # the instantiation turns shuffling on
    (_code(default="True", passed=""), True),  # left at its default
    (_code(passed=""), False),  # left at False: nothing says this loader trains
    (_code(passed=", shuffle=False"), False),
    (_code(sampler="DistributedSampler(dataset) if distributed else None", passed=", shuffle=True, distributed=True",
           shuffle_arg="shuffle=shuffle and sampler is None, "), False),
])
def test_a_constructor_parameter_is_read_off_the_instantiations(tmp_path, code, flagged):
    assert ("missing-distributed-sampler" in shown_ids(tmp_path, code)) is flagged



KWARGS_FACTORY = '''\
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class TrainConfig:
    batch_size: int = 8
    enable_fsdp: bool = False
    enable_ddp: bool = {ddp}


def get_dataloader_kwargs(cfg, dataset, mode):
    kwargs = {{}}
    if cfg.enable_fsdp or cfg.enable_ddp:
        kwargs["sampler"] = DistributedSampler(dataset, shuffle=mode == "train")
    kwargs["batch_size"] = cfg.batch_size
    kwargs["drop_last"] = True
    return kwargs


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    cfg = TrainConfig()
{tweak}
    train_set = TensorDataset(torch.randn(4096, 10), torch.randint(0, 5, (4096,)))
    loader_kwargs = get_dataloader_kwargs(cfg, train_set, "train")
    train_loader = DataLoader(train_set, num_workers=2, **loader_kwargs)
    model = DDP(nn.Linear(10, 5).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("ddp, tweak, flagged", [
    ("False", "", True),  # X-LANCE/SLAM-LLM#93: the config leaves both switches off, so no sampler is added
    ("True", "", False),
    ("False", "    for key, value in os.environ.items():\n        setattr(cfg, key.lower(), value)", False),
])
def test_a_sampler_added_by_a_kwargs_helper_only_under_a_switch_the_config_leaves_off(tmp_path, ddp, tweak, flagged):
    code = KWARGS_FACTORY.format(ddp=ddp, tweak=tweak)
    assert ("missing-distributed-sampler" in shown_ids(tmp_path, code)) is flagged
