"""missing-distributed-sampler (session 5): training loaders built by a factory of the script.

The factory's ``shuffle`` parameter holds what every call passes (or its default): a method or function whose
loader shuffles at every call and gets no sampler trains on all of the dataset in every rank
(narumiruna/pytorch-distributed-example#5, NERSC/sc21-dl-tutorial#5: the loader helper takes the rank and ignores
it). Near miss: the factory builds a DistributedSampler (from its shuffle parameter).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-distributed-sampler"

DATAMODULE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class DataModule:
    def __init__(self, rank):
        self.rank = rank
        self.dataset = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))

    def make_loader(self, batch_size, shuffle=True):
{body}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = DataModule(dist.get_rank())
    loader = data.make_loader({call})
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''

PLAIN = "        return DataLoader(self.dataset, batch_size=batch_size, shuffle=shuffle)"
SHARDED = ("        sampler = DistributedSampler(self.dataset, shuffle=shuffle)\n"
           "        return DataLoader(self.dataset, batch_size=batch_size, sampler=sampler)")


@pytest.mark.parametrize("call", ["32", "32, True", "batch_size=32, shuffle=True"])
def test_factory_loader_that_shuffles_without_a_sampler(tmp_path, call):
    assert ID in scan_ids(tmp_path, DATAMODULE.format(body=PLAIN, call=call))


@pytest.mark.parametrize("call", ["32", "32, True"])
def test_factory_with_a_distributed_sampler_stays_quiet(tmp_path, call):
    assert ID not in scan_ids(tmp_path, DATAMODULE.format(body=SHARDED, call=call))
