"""batchnorm-not-synced (session 6): per-GPU BatchNorm is only a defect when the per-rank batch is small.

Confirmed reports are runs whose global batch was split across ranks (LibreYOLO#531: ``cfg.batch //
world_size`` per rank) or small per-GPU batches (CenterNeXt#5: 4 per GPU). A DDP example that trains every rank on
a large literal batch (pytorch_geometric's multi-GPU graph example, 128 graphs per GPU) keeps plain BatchNorm on
purpose, the way torchvision's ImageNet references do (32 per GPU, SyncBatchNorm an option): no warning then.
Loaders under rank-0-only code (evaluation) do not count.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "batchnorm-not-synced"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def run(rank, world_size, args):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    data = TensorDataset(torch.randn(4096, 16), torch.randint(0, 2, (4096,)))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank)
    {batch_line}
    loader = DataLoader(data, batch_size=per_rank, sampler=sampler)
    if rank == 0:
        val_loader = DataLoader(data, batch_size=8)
    model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2)).cuda(rank)
    model = DDP(model, device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x.cuda(rank)), y.cuda(rank)).backward()
            opt.step()
'''


@pytest.mark.parametrize("batch_line", [
    "per_rank = 4",                                  # a small literal per-GPU batch
    "per_rank = args.batch // world_size",           # the global batch split across the ranks
    "per_rank = args.batch_size",                    # unknown: BatchNorm without SyncBatchNorm is still worth a look
])
def test_batchnorm_without_sync_on_small_or_unknown_per_rank_batches(tmp_path, batch_line):
    assert ID in scan_ids(tmp_path, SCRIPT.format(batch_line=batch_line))


@pytest.mark.parametrize("batch_line", [
    "per_rank = 128",
    "per_rank = 32",
])
def test_quiet_when_every_training_loader_takes_a_large_literal_batch(tmp_path, batch_line):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(batch_line=batch_line))


def test_still_flags_large_batches_when_another_training_loader_is_small(tmp_path):
    code = SCRIPT.format(batch_line="per_rank = 128").replace(
        "    model = nn.Sequential", "    aux_loader = DataLoader(data, batch_size=2, sampler=sampler)\n    model = nn.Sequential")
    assert ID in scan_ids(tmp_path, code)


def test_a_positional_large_batch_counts_too(tmp_path):
    code = SCRIPT.format(batch_line="per_rank = 128").replace("DataLoader(data, batch_size=per_rank,",
                                                                 "DataLoader(data, per_rank,")
    assert ID not in scan_ids(tmp_path, code)
