"""uneven-last-batch, scan-recall12: no DDP, but a collective on every step of a loop over data split by rank by hand
(dlio_benchmark#339: ``files[rank::world_size]`` behind a dataset, a loader and a method parameter, a barrier per
step; the same with ``np.array_split(...)[rank]`` and an all-reduce per step, or an object gather per item)."""

from __future__ import annotations

import textwrap

import pytest

from tests.scan.conftest import shown_ids

SETUP = '''\
import glob
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class Files(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return torch.from_numpy(np.load(self.paths[i])).float()

'''

MAIN = '''
if __name__ == "__main__":
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    main(dist.get_rank(), dist.get_world_size())
    dist.destroy_process_group()
'''

METHOD_SLICE_BARRIER = '''
class Bench:
    def __init__(self, rank, world_size):
        self.rank, self.world_size = rank, world_size

    def my_files(self):
        return sorted(glob.glob("data/*.npy"))[self.rank::self.world_size]

    def epoch(self, loader):
        for batch in loader:
            batch.cuda().sum()
            dist.barrier()

    def run(self):
        loader = DataLoader(Files(self.my_files()), batch_size=16)
        for _ in range(3):
            self.epoch(loader)


def main(rank, world_size):
    Bench(rank, world_size).run()
'''

ARRAY_SPLIT_ALL_REDUCE = '''
def main(rank, world_size):
    items = np.arange(1000)
    mine = np.array_split(items, world_size)[rank]
    for chunk in np.array_split(mine, len(mine) // 8 + 1):
        stat = torch.tensor([float(chunk.sum())], device="cuda")
        dist.all_reduce(stat)
'''

PER_ITEM_GATHER = '''
def main(rank, world_size):
    shard = sorted(glob.glob("data/*.npy"))[rank::world_size]
    for path in shard:
        result = float(np.load(path).mean())
        gathered = [None] * world_size
        dist.all_gather_object(gathered, result)
'''

EVENED_OUT = '''
def main(rank, world_size):
    paths = sorted(glob.glob("data/*.npy"))
    per_rank = len(paths) // world_size
    for path in paths[rank * per_rank:(rank + 1) * per_rank]:
        stat = torch.tensor([float(np.load(path).mean())], device="cuda")
        dist.all_reduce(stat)
'''

GATHER_AFTER_THE_LOOP = '''
def main(rank, world_size):
    results = [float(np.load(p).mean()) for p in sorted(glob.glob("data/*.npy"))[rank::world_size]]
    total = 0.0
    for value in sorted(glob.glob("data/*.npy"))[rank::world_size]:
        total += len(value)
    gathered = [None] * world_size
    dist.all_gather_object(gathered, (results, total))
'''

PADDED_FIRST = '''
def local_indices(rank, world_size, n):
    indices = list(range(n))
    while len(indices) % world_size != 0:
        indices.extend(indices[: world_size - len(indices) % world_size])
    return indices[rank::world_size]


def main(rank, world_size):
    for i in local_indices(rank, world_size, 1000):
        stat = torch.tensor([float(i)], device="cuda")
        dist.all_reduce(stat)
'''

SUBGROUP_COLLECTIVE = '''
def main(rank, world_size):
    group = dist.new_group([0, 1])
    for path in sorted(glob.glob("data/*.npy"))[rank::world_size]:
        image = torch.from_numpy(np.load(path)).cuda()
        dist.broadcast(image, src=0, group=group)
'''


@pytest.mark.parametrize("body, flagged", [
    (METHOD_SLICE_BARRIER, True),
    (ARRAY_SPLIT_ALL_REDUCE, True),
    (PER_ITEM_GATHER, True),
    (EVENED_OUT, False),
    (GATHER_AFTER_THE_LOOP, False),
    (PADDED_FIRST, False),
    (SUBGROUP_COLLECTIVE, False),
], ids=["method-slice-barrier", "array-split-all-reduce", "per-item-gather", "evened-out", "gather-after-the-loop",
        "padded-first", "subgroup-collective"])
def test_collective_per_step_over_hand_split_data(tmp_path, body, flagged):
    code = SETUP + textwrap.dedent(body) + MAIN
    assert ("uneven-last-batch" in shown_ids(tmp_path, code)) is flagged
