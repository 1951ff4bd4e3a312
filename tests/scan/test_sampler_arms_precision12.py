"""A loader with no sampler in one arm of an ``if`` on the distributed state, whose other arm builds a
DistributedSampler (or hands its loader a sampler), is the one-process run's loader: no warning, whatever the flag
is called (``args.distributed``, a ``to_be_distributed`` parameter, the world size, ``dist.is_initialized()``, a
launcher rank of -1), or its arm returning early. Two arms without a sampler still warn. Spellings seen in BiRefNet's train.py,
qAp/ESRGAN-pytorch's get_loader and uimnet's get_loader."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_loader(dataset, batch_size, distributed, local_rank):
{arms}
    return train_loader


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if distributed:
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
    model = nn.Linear(8, 1).cuda()
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    train_loader = build_loader(TensorDataset(torch.randn(256, 8), torch.randn(256, 1)), 16, distributed, local_rank)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        if distributed:
            train_loader.sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
'''
SHARDED = "DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset), drop_last=True)"
ALONE = "DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)"
CASES = {
    "flag, loaders in both arms": (f"    if distributed:\n        train_loader = {SHARDED}\n"
                                   f"    else:\n        train_loader = {ALONE}", False),
    "negated flag": (f"    if not distributed:\n        train_loader = {ALONE}\n"
                     f"    else:\n        train_loader = {SHARDED}", False),
    "sampler bound in the arm, None in the other": (
        "    if distributed:\n        sampler = DistributedSampler(dataset)\n"
        "        train_loader = DataLoader(dataset, batch_size=batch_size, shuffle=False, sampler=sampler)\n"
        "    else:\n        train_loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, sampler=None)",
        False),
    "world size": (f"    if dist.is_initialized() and dist.get_world_size() > 1:\n        train_loader = {SHARDED}\n"
                   f"    else:\n        train_loader = {ALONE}", False),
    "launcher rank": (f"    if local_rank != -1:\n        train_loader = {SHARDED}\n"
                      f"    else:\n        train_loader = {ALONE}", False),
    "the distributed arm returns": (f"    if distributed:\n        return {SHARDED}\n    train_loader = {ALONE}", False),
    "no sampler in either arm": (f"    if distributed:\n        train_loader = {ALONE}\n"
                                 f"    else:\n        train_loader = {ALONE}", True),
    "no arm at all": (f"    train_loader = {ALONE}", True),
}


@pytest.mark.parametrize("arms, warns", CASES.values(), ids=CASES.keys())
def test_the_one_process_arm_needs_no_sampler(tmp_path, arms, warns):
    assert shows(tmp_path, "missing-distributed-sampler", TEMPLATE.format(arms=arms)) is warns
