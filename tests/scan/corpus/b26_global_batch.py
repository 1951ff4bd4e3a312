# expect: batch-size-mismatch
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--global-batch-size", type=int, default=1024)
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
ds = TensorDataset(torch.randn(100000, 16))
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=args.global_batch_size, sampler=sampler)
model = DDP(torch.nn.Linear(16, 1).cuda(), device_ids=[local_rank])
for epoch in range(args.epochs):
    sampler.set_epoch(epoch)
    for (x,) in loader:
        model(x.cuda()).mean().backward()
dist.destroy_process_group()
