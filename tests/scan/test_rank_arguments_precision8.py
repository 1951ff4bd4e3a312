"""Rank values by meaning: a name handed to the process group or a distributed sampler as its rank is a rank.

A spawned worker's first parameter may be called anything (``lrank``, ``proc``, ``gpu``) and reach ``mp.spawn``
through a launcher helper (``launch(worker, n)`` -> ``mp.spawn(main_func, ...)``); ``init_process_group(...,
rank=proc)`` or ``DistributedSampler(data, rank=proc)`` says what it holds, so ``if proc == 0:`` is a rank-0 guard.
A name given as the world size is not a rank.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

TEMPLATE = '''
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def worker({param}, n):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", {group})
    torch.cuda.set_device({param})
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    sampler = DistributedSampler(data, {sampler})
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[{param}])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        if {test}:
            torch.save(net.module.state_dict(), "last.pt")
    dist.destroy_process_group()


def launch(main_func, n):
    mp.spawn(main_func, nprocs=n, args=(n,))


if __name__ == "__main__":
    launch(worker, torch.cuda.device_count())
'''

GIVEN = {
    "process group keyword": ("lrank", "world_size=n, rank=lrank", "num_replicas=n", "lrank == 0"),
    "sampler keyword": ("proc", "world_size=n, rank=0 + proc", "num_replicas=n, rank=proc", "proc == 0"),
    "both, negated early test": ("gpu", "world_size=n, rank=gpu", "rank=gpu", "not gpu"),
}


@pytest.mark.parametrize("case", GIVEN, ids=list(GIVEN))
def test_a_name_given_as_the_rank_guards_the_save(tmp_path, case):
    param, group, sampler, test = GIVEN[case]
    code = TEMPLATE.format(param=param, group=group, sampler=sampler, test=test)
    assert "logging-from-all-ranks" not in shown_ids(tmp_path, code)


def test_a_name_given_as_the_world_size_is_not_a_rank(tmp_path):
    code = TEMPLATE.format(param="proc", group="world_size=n, rank=proc", sampler="num_replicas=n", test="n == 1")
    assert "logging-from-all-ranks" in shown_ids(tmp_path, code)
