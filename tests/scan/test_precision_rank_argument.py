"""uneven-last-batch: a local loader function handed the rank that only TESTS it (rank 0 builds a cache first behind
barriers, the HF example loaders' idiom with the rank as a parameter) returns the same data on every rank; one that
cuts the data by it, or a per-rank piece passed in, is still a split by hand."""

from __future__ import annotations

import pytest

from .conftest import scan_ids

SCRIPT = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def load_examples(path, local_rank, world=2):
{body}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(4, 1).cuda(local_rank), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = load_examples({argument})
    loader = DataLoader(dataset, batch_size=8)
    for epoch in range(3):
        for (x,) in loader:
            model(x.cuda(local_rank)).sum().backward()
            opt.step()
    dist.destroy_process_group()
'''

GUARDED = """    if local_rank not in (-1, 0):
        dist.barrier()
    data = TensorDataset(torch.load(path))
    if local_rank == 0:
        dist.barrier()
    return data"""
SLICED = """    data = torch.load(path)
    return TensorDataset(data[local_rank::world])"""


@pytest.mark.parametrize("argument", ['"train.pt", local_rank', '"train.pt", local_rank=local_rank'])
def test_a_rank_only_tested_by_the_loader_function_is_no_split(tmp_path, argument):
    code = SCRIPT.format(body=GUARDED, argument=argument)
    assert "uneven-last-batch" not in scan_ids(tmp_path, code)


@pytest.mark.parametrize("body,argument", [
    (SLICED, '"train.pt", local_rank'),                          # the function cuts the data by the rank
    (GUARDED, '"train.pt", [0, 1, 2][local_rank]'),              # a per-rank piece is passed in
])
def test_a_rank_that_cuts_the_data_is_still_a_split(tmp_path, body, argument):
    code = SCRIPT.format(body=body, argument=argument)
    assert "uneven-last-batch" in scan_ids(tmp_path, code)
