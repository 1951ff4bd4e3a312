"""batchnorm-not-synced asks for a small per-rank batch: the batch size a loader evidently takes counts whatever
its spelling - a literal, a name bound once, the unchanged default of a command-line option or of a configuration
field (the shipped run's value). A large one (torchvision's references: 32 per GPU) is per-GPU BatchNorm as
designed; a small one still warns."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import argparse
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
    batch: int = {field}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default={option})
    args = parser.parse_args()
    cfg = TrainConfig()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    model = DDP(model.cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size={size}, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
'''
CASES = {
    "large option default": ("args.batch_size", 64, 8, False),
    "option default of 32": ("args.batch_size", 32, 8, False),
    "large dataclass field": ("cfg.batch", 8, 128, False),
    "large literal": ("256", 8, 8, False),
    "small option default": ("args.batch_size", 4, 128, True),
    "small dataclass field": ("cfg.batch", 64, 2, True),
    "small literal": ("4", 64, 64, True),
}


@pytest.mark.parametrize("size, option, field, warns", CASES.values(), ids=CASES.keys())
def test_the_per_rank_batch_is_read_whatever_its_spelling(tmp_path, size, option, field, warns):
    code = TEMPLATE.format(size=size, option=option, field=field)
    assert shows(tmp_path, "batchnorm-not-synced", code) is warns
