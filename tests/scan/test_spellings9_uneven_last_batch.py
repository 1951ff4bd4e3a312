"""uneven-last-batch spellings (scan-recall7b, session 9): a DistributedSampler over a dataset a local function builds
from a random draw with no seed shared by the ranks (Lightning#9851: each process picked its own subset size, so the
ranks ran different numbers of batches). Near misses that stay quiet: a seed set alike on every rank first
(``random.seed(0)``, ``seed_everything(42)``), a builder with no random draw."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "uneven-last-batch"

SCRIPT = '''
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def pick_subset(pool):
{pick}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
{seed}    pool = TensorDataset(torch.randn(1000, 8), torch.randint(0, 2, (1000,)))
    train_set = pick_subset(pool)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=4, sampler=sampler)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

RANDOM_SIZE = "n = random.randint(len(pool) // 2, len(pool))\nreturn Subset(pool, random.sample(range(len(pool)), n))"
NUMPY_SIZE = "keep = np.random.rand(len(pool)) < 0.8\nreturn Subset(pool, np.nonzero(keep)[0].tolist())"
FIXED = "return Subset(pool, list(range(0, len(pool), 2)))"


def _script(pick: str, seed: str = "") -> str:
    return SCRIPT.format(pick="\n".join("    " + line for line in pick.splitlines()), seed=seed)


@pytest.mark.parametrize("pick, seed, warns", [
    (RANDOM_SIZE, "", True),
    (NUMPY_SIZE, "", True),
    (RANDOM_SIZE, "    random.seed(1234 + dist.get_rank())\n", True),
    (RANDOM_SIZE, "    random.seed(1234)\n", False),
    (NUMPY_SIZE, "    np.random.seed(0)\n", False),
    (FIXED, "", False),
])
def test_dataset_of_a_random_size_per_rank(tmp_path, pick, seed, warns):
    assert (ID in scan_ids(tmp_path, _script(pick, seed))) is warns
