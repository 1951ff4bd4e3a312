"""collective-mismatch (scan-recall8): a project helper whose name says it runs a collective, imported from the
project's own modules and called on rank 0 only (torchvision references' ``utils.reduce_across_processes``, MoCo's
``concat_all_gather``, ``dist_mean``-style wrappers): the other ranks never join it. Near misses that stay quiet:
the same helpers called on every rank."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import utils
from moco_utils import concat_all_gather
from metrics import dist_mean


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        out = model(torch.randn(4, 8, device="cuda"))
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
{report}


if __name__ == "__main__":
    main()
'''

CALLS = {
    "reduce-across-processes": "utils.reduce_across_processes(loss.detach())",
    "concat-all-gather": "concat_all_gather(out.detach())",
    "dist-mean": "dist_mean(loss.detach())",
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_named_collective_helper_on_rank0(tmp_path, name):
    report = f"        if dist.get_rank() == 0:\n            print({CALLS[name]})"
    assert ID in scan_ids(tmp_path, SCRIPT.format(report=report))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_named_collective_helper_on_every_rank(tmp_path, name):
    report = f"        value = {CALLS[name]}\n        if dist.get_rank() == 0:\n            print(value)"
    assert ID not in scan_ids(tmp_path, SCRIPT.format(report=report))
