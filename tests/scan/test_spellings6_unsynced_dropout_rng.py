"""unsynced-dropout-rng for a DistributedSampler seeded differently on each rank: the rank added to the seed (by
keyword, by position, through a local name, an attribute holding the rank), the process's clock; near misses that
must stay quiet: one seed for all, no shuffle, no seed, the rank passed as the sampler's rank."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "unsynced-dropout-rng"

SCRIPT = '''
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Runner:
    def __init__(self, args):
        dist.init_process_group("nccl")
        self.global_rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        self.model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        data = TensorDataset(torch.randn(256, 8))
        rank, world = self.global_rank, dist.get_world_size()
{build}
        self.loader = DataLoader(data, batch_size=8, sampler=self.sampler)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for (x,) in self.loader:
                loss = self.model(x.cuda()).sum()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
'''


def build(lines: str) -> str:
    return "\n".join("        " + line for line in lines.splitlines())


@pytest.mark.parametrize("code", [
    "self.sampler = DistributedSampler(data, seed=args.seed + dist.get_rank())",
    "self.sampler = DistributedSampler(data, world, rank, True, args.seed + rank)",
    "seed = int(time.time()) * self.global_rank\nself.sampler = DistributedSampler(data, shuffle=True, seed=seed)",
    "self.sampler = DistributedSampler(data, seed=int(time.time()))",
], ids=["seed-plus-rank", "positional", "local-name", "clock"])
def test_sampler_seed_differs_between_ranks(tmp_path, code):
    assert ID in scan_ids(tmp_path, SCRIPT.format(build=build(code)))


@pytest.mark.parametrize("code", [
    "self.sampler = DistributedSampler(data, seed=args.seed)",
    "self.sampler = DistributedSampler(data, shuffle=False, seed=args.seed + rank)",
    "self.sampler = DistributedSampler(data)",
    "self.sampler = DistributedSampler(data, num_replicas=world, rank=rank)",
], ids=["shared-seed", "no-shuffle", "no-seed", "rank-argument"])
def test_quiet_with_one_seed(tmp_path, code):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(build=build(code)))
