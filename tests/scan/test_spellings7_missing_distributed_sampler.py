"""missing-distributed-sampler (session 7): PyG's NeighborLoader family, and a dataset only moved to the rank's GPU.

A ``NeighborLoader`` iterates seed nodes (``input_nodes``) in place of a dataset: every rank handed all training
nodes trains on the same seeds (pytorch_geometric#6312). Sharded by hand when the seeds are a per-rank slice
(``train_idx.split(n // world_size)[rank]``, in the call or bound before it). ``data.to(rank)`` puts the same data on
each rank's GPU: it is not a split by rank (neither for this checker nor for uneven-last-batch).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-distributed-sampler"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.loader import {loader}
from torch_geometric.nn import SAGEConv


def run(rank, world_size, data):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    data = data.to(rank, "x", "y")
    train_idx = data.train_mask.nonzero(as_tuple=False).view(-1)
{split}
    train_loader = {loader}(data, {seeds}=train_idx, num_neighbors=[25, 10], shuffle=True, batch_size=1024)
    model = DistributedDataParallel(SAGEConv(16, 8).to(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    for epoch in range(10):
        for batch in train_loader:
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index.to(rank))[:batch.batch_size]
            F.cross_entropy(out, batch.y[:batch.batch_size]).backward()
            optimizer.step()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size, None), nprocs=world_size)
'''


@pytest.mark.parametrize("loader,seeds", [("NeighborLoader", "input_nodes"),
                                          ("LinkNeighborLoader", "edge_label_index")])
def test_every_rank_iterates_all_seeds(tmp_path, loader, seeds):
    assert ID in scan_ids(tmp_path, SCRIPT.format(loader=loader, seeds=seeds, split=""))


@pytest.mark.parametrize("split", [
    "    train_idx = train_idx.split(train_idx.size(0) // world_size)[rank]",
    "    train_idx = train_idx.chunk(world_size)[rank].to(rank)",
    "    train_idx = train_idx[rank::world_size]",
])
def test_quiet_when_the_seeds_are_sliced_by_rank(tmp_path, split):
    ids = scan_ids(tmp_path, SCRIPT.format(loader="NeighborLoader", seeds="input_nodes", split=split))
    assert ID not in ids


PLAIN = '''
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    data = {placed}
    train_loader = DataLoader(data, batch_size=8, shuffle=True)
    model = DDP(torch.nn.Linear(4, 1).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()


if __name__ == "__main__":
    main()
'''


def test_a_dataset_moved_to_the_rank_gpu_is_not_split(tmp_path):
    ids = scan_ids(tmp_path, PLAIN.format(placed="data.to(local_rank)"))
    assert ID in ids and "uneven-last-batch" not in ids


def test_a_dataset_split_by_rank_is_still_sharded_by_hand(tmp_path):
    ids = scan_ids(tmp_path, PLAIN.format(placed="torch.utils.data.Subset(data, range(local_rank, 64, 2))"))
    assert ID not in ids
