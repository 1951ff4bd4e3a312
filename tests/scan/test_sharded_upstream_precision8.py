"""missing-distributed-sampler: a dataset cut to the rank's share upstream keeps it through selections and wrappers.

nanoVLM shards its rows with ``rows.shard(num_shards=world, index=rank)``, selects a range of them, and wraps them in
two dataset classes before the DataLoader: each wrapper takes the sharded data as its first argument (or as the
receiver of a method), so the loader's dataset holds this rank's share and needs no sampler. Every spelling of the
cut is followed back through the function's bindings; a chain with no cut by rank is still flagged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

ID = "missing-distributed-sampler"

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Encoded(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return torch.tensor(self.rows[i]["x"], dtype=torch.float32)


def loader_for(rank, world):
    rows = load_dataset("parquet", data_files="train/*.parquet")["train"]
{cut}
    rows = rows.select(range(32, len(rows)))
    data = Encoded(rows)
    return DataLoader(data, batch_size=8, drop_last=True)


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    train_loader = loader_for(rank, world)
    for x in train_loader:
        loss = net(x.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

CUTS = {
    "shard keywords": "    rows = rows.shard(num_shards=world, index=rank)",
    "shard positional": "    rows = rows.shard(world, rank)",
    "shard under a test": "    if world > 1:\n        rows = rows.shard(num_shards=dist.get_world_size(), index=dist.get_rank())",
    "split_dataset_by_node": "    rows = split_dataset_by_node(rows, rank=rank, world_size=world)",
    "strided slice": "    rows = rows[rank::world]",
    "renamed": "    mine = rows.shard(num_shards=world, index=rank)\n    rows = mine.shuffle(seed=0)",
}
UNCUT = {
    "no cut": "    rows = rows.shuffle(seed=0)",
    "world size only": "    rows = rows.select(range(len(rows) // world * world))",
}


def _flagged(tmp_path: Path, cut: str) -> bool:
    return ID in shown_ids(tmp_path, TEMPLATE.format(cut=cut))


@pytest.mark.parametrize("cut", CUTS.values(), ids=list(CUTS))
def test_a_cut_by_rank_upstream_of_the_wrappers_needs_no_sampler(tmp_path, cut):
    assert not _flagged(tmp_path, cut)


@pytest.mark.parametrize("cut", UNCUT.values(), ids=list(UNCUT))
def test_the_same_chain_without_a_cut_by_rank_is_flagged(tmp_path, cut):
    assert _flagged(tmp_path, cut)
