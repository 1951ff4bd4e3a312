"""batch-size-mismatch (session 7): an option whose help declares it the batch of all GPUs, handed to each rank.

``add_argument("--batch-size", help="total batch size across all GPUs")`` then ``DataLoader(batch_size=args.batch_size)``
on every rank makes the real batch world_size times the declared one. Quiet when the file rescales the option
(the ImageNet example's ``args.batch_size = int(args.batch_size / ngpus_per_node)``), divides it in the call, or when
the help also calls it the per-GPU batch (MAE: "Batch size per GPU (effective batch size is ...)").
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "batch-size-mismatch"

SCRIPT = '''
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("{flag}", type=int, default=256, help="{help}")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
{rescale}
    ds = TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1))
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size={size}, sampler=sampler)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            model(x.cuda()).sum().backward()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("flag,help", [
    ("--batch-size", "total batch size across all GPUs"),
    ("--batch_size", "global batch size"),
    ("--bs", "mini-batch size, summed over all devices (across all processes)"),
    ("--batch-size", "effective batch size for one optimizer step"),
])
def test_declared_global_handed_to_each_rank(tmp_path, flag, help):
    size = "args." + flag.lstrip("-").replace("-", "_")
    assert ID in scan_ids(tmp_path, SCRIPT.format(flag=flag, help=help, rescale="", size=size))


@pytest.mark.parametrize("help,rescale,size", [
    ("total batch size of all GPUs on the node", "    args.batch_size = int(args.batch_size / torch.cuda.device_count())",
     "args.batch_size"),
    ("total batch size across all GPUs", "", "args.batch_size // dist.get_world_size()"),
    ("Batch size per GPU (effective batch size is batch_size * accum_iter * # gpus)", "", "args.batch_size"),
    ("input batch size for training", "", "args.batch_size"),
])
def test_quiet_when_rescaled_divided_or_per_gpu(tmp_path, help, rescale, size):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(flag="--batch-size", help=help, rescale=rescale, size=size))
