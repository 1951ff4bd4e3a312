"""A dataset built from values the rank picked by its rank (``Subset(full, indices)`` with ``indices`` from
``range(rank, n, world)``, ``perm[rank::world]``, ``tensor_split(...)[rank]``, ``np.array_split(...)[rank]``, or rows
read from ``files[rank::world]``) is sharded by hand: no DistributedSampler needed. The same loader over the whole
dataset still warns."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    full = TensorDataset(torch.randn(1000, 8), torch.randn(1000, 1))
{build}
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
'''
CASES = {
    "range from the rank": ("    indices = list(range(rank, len(full), world))\n    train_set = Subset(full, indices)", False),
    "strided permutation": ("    idx = torch.randperm(len(full)).tolist()[rank::world]\n    train_set = Subset(full, idx)",
                            False),
    "tensor_split": ("    share = torch.tensor_split(torch.arange(len(full)), world)[rank]\n"
                     "    train_set = Subset(full, share.tolist())", False),
    "numpy array_split": ("    idx = np.array_split(np.arange(len(full)), world)[rank]\n    train_set = Subset(full, idx)",
                          False),
    "files of the rank": ("    files = sorted(os.listdir('data'))[rank::world]\n"
                          "    train_set = TensorDataset(torch.randn(len(files), 8), torch.randn(len(files), 1))", False),
    "the whole dataset": ("    idx = torch.randperm(len(full)).tolist()\n    train_set = Subset(full, idx)", True),
}


@pytest.mark.parametrize("build, warns", CASES.values(), ids=CASES.keys())
def test_a_dataset_built_from_the_rank_share_is_sharded(tmp_path, build, warns):
    assert shows(tmp_path, "missing-distributed-sampler", TEMPLATE.format(build=build)) is warns
