"""missing-set-epoch (session 7): set_epoch called, but only on another DistributedSampler.

``val_sampler.set_epoch(epoch)`` re-seeds the evaluation sampler while the training loader's ``train_sampler`` keeps
its first shuffle every epoch. Quiet when the training sampler is re-seeded too, when the set_epoch receiver may be
the training sampler (a name also bound to something else), and for a non-shuffling training sampler.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-set-epoch"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    ds = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    train_sampler = DistributedSampler(ds{train_shuffle})
    val_sampler = DistributedSampler(ds, shuffle=False)
    loader = DataLoader(ds, batch_size=32, sampler=train_sampler)
    val_loader = DataLoader(ds, batch_size=32, sampler=val_sampler)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
{reseed}
        for x, y in loader:
            opt.zero_grad()
            nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            opt.step()
        with torch.no_grad():
            for x, y in val_loader:
                model(x.cuda())


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("reseed", [
    "        val_sampler.set_epoch(epoch)",
    "        if epoch > 0:\n            val_sampler.set_epoch(epoch)",
])
def test_only_the_evaluation_sampler_is_reseeded(tmp_path, reseed):
    assert ID in scan_ids(tmp_path, SCRIPT.format(train_shuffle="", reseed=reseed))


@pytest.mark.parametrize("train_shuffle,reseed", [
    ("", "        train_sampler.set_epoch(epoch)\n        val_sampler.set_epoch(epoch)"),
    ("", "        for s in (train_sampler, val_sampler):\n            s.set_epoch(epoch)"),
    ("", "        sampler = train_sampler if epoch >= 0 else val_sampler\n        sampler.set_epoch(epoch)"),
    (", shuffle=False", "        val_sampler.set_epoch(epoch)"),
])
def test_quiet_when_the_training_sampler_may_be_reseeded(tmp_path, train_shuffle, reseed):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(train_shuffle=train_shuffle, reseed=reseed))
