"""scan _common.config_default (scan-recall11): a configuration class field's literal default decides a loader's
``shuffle`` when nothing in the file changes it (``@dataclass class DataConfig: shuffle: bool = True`` read as
``self.cfg.shuffle``), as an unchanged command-line default does."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

SCRIPT = '''\
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class DataConfig:
    batch_size: int = 64
    shuffle: bool = {default}
    workers: int = 4


class DataModule:
    def __init__(self, cfg: DataConfig):
        self.cfg = cfg
        self.train_set = TensorDataset(torch.randn(10000, 32), torch.randint(0, 10, (10000,)))

    def train_loader(self):
        sampler = {sampler}
        loader = DataLoader(self.train_set, batch_size=self.cfg.batch_size, shuffle=self.cfg.shuffle, sampler=sampler)
        return loader, sampler


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    cfg = {build}
{tweak}
    loader, sampler = DataModule(cfg).train_loader()
    model = DDP(nn.Linear(32, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''
WITH_SAMPLER = "DistributedSampler(self.train_set)"


def _code(default="True", sampler=WITH_SAMPLER, build="DataConfig()", tweak=""):
    return SCRIPT.format(default=default, sampler=sampler, build=build, tweak=tweak)


@pytest.mark.parametrize("code, found", [
    (_code(), {"shuffle-with-sampler"}),  # the default holds: shuffle=True beside a sampler
    (_code(sampler="None"), {"missing-distributed-sampler"}),  # the default holds: a shuffling loader, no sampler
    (_code(default="False"), set()),
    (_code(build="DataConfig(shuffle=False)"), set()),  # an instantiation sets the field
    (_code(build="DataConfig(**yaml.safe_load(open('data.yaml')))"), set()),  # values from a file
    (_code(build="DataConfig()", tweak="    cfg.shuffle = os.environ.get('SHUFFLE') == '1'"), set()),  # reassigned
])
def test_a_config_field_default_holds_only_when_nothing_changes_it(tmp_path, code, found):
    ids = shown_ids(tmp_path, code)
    assert ids & {"shuffle-with-sampler", "missing-distributed-sampler"} == found
