"""hardcoded-cuda0, scan-recall11: GPU 0 through a plain name that evidently holds 0 (``GPU_ID = 0`` then
``model.cuda(GPU_ID)``) pins every rank as ``model.cuda(0)`` does; a name derived from the rank does not."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

SCRIPT = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
{top}

def train(model, loader, sampler, gpu):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(gpu)), y.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
{setup}
    model = DDP(nn.Linear(32, 10).cuda(gpu), device_ids=[gpu])
    data = TensorDataset(torch.randn(1000, 32), torch.randint(0, 10, (1000,)))
    sampler = DistributedSampler(data)
    train(model, DataLoader(data, batch_size=32, sampler=sampler), sampler, gpu)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("top, setup, flagged", [
    ("GPU_ID = 0\n", "    gpu = GPU_ID\n    torch.cuda.set_device(GPU_ID)", True),
    ("", "    gpu = 0\n    torch.cuda.set_device(gpu)", True),
    ("", "    gpu = local_rank\n    torch.cuda.set_device(gpu)", False),
    ("GPU_ID = 0\n", "    gpu = local_rank if dist.is_initialized() else GPU_ID\n    torch.cuda.set_device(gpu)", False),
])
def test_a_name_holding_gpu_zero_pins_every_rank(tmp_path, top, setup, flagged):
    assert ("hardcoded-cuda0" in shown_ids(tmp_path, SCRIPT.format(top=top, setup=setup))) is flagged
