"""collective-mismatch (scan-recall8): the DDP-wrapped model (with BatchNorm buffers) handed to an evaluation function
of the project's own modules on rank 0 only (DeiT / MAE-style ``engine.evaluate(loader, model, device)`` under
``if rank == 0:``): its forward broadcasts the buffers and rank 0 waits for ranks that never join
(pytorch/pytorch#54059). Near misses that stay quiet: every rank evaluating, the unwrapped ``model.module`` handed
over, and a function of the same name that is not a project file (a library's)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

ENGINE = '''
import torch


@torch.no_grad()
def evaluate(data_loader, model, device):
    model.eval()
    return sum((model(x.to(device)).argmax(1) == y.to(device)).sum().item() for x, y in data_loader)


def validate_one_epoch(model, data_loader, device):
    return evaluate(data_loader, model, device)
'''

MAIN = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import engine
from engine import evaluate


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                        nn.Linear(8, 4))
    model = DDP(net.to(device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(64, 3, 16, 16), torch.randint(0, 4, (64,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    val_loader = DataLoader(data, batch_size=8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
{evaluation}
        dist.barrier()


if __name__ == "__main__":
    main()
'''

ON_RANK0 = {
    "from-import": "        if dist.get_rank() == 0:\n            print(evaluate(val_loader, model, device))",
    "module-attribute": "        if dist.get_rank() == 0:\n            print(engine.validate_one_epoch(model, val_loader, device))",
}
QUIET = {
    "every-rank": "        acc = evaluate(val_loader, model, device)\n        if dist.get_rank() == 0:\n            print(acc)",
    "unwrapped-module": "        if dist.get_rank() == 0:\n            print(evaluate(val_loader, model.module, device))",
}


@pytest.mark.parametrize("name", sorted(ON_RANK0))
def test_wrapped_model_evaluated_on_rank0_in_project_module(tmp_path, name):
    (tmp_path / "engine.py").write_text(ENGINE, encoding="utf-8")
    assert ID in scan_ids(tmp_path, MAIN.format(evaluation=ON_RANK0[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_wrapped_model_evaluation_near_misses(tmp_path, name):
    (tmp_path / "engine.py").write_text(ENGINE, encoding="utf-8")
    assert ID not in scan_ids(tmp_path, MAIN.format(evaluation=QUIET[name]))


def test_not_a_project_module(tmp_path):
    assert ID not in scan_ids(tmp_path, MAIN.format(evaluation=ON_RANK0["from-import"]))
