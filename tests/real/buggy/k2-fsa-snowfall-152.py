# expect: uneven-last-batch
# source: https://github.com/k2-fsa/snowfall/issues/152
# reason: The maintainer confirmed the rank with more utterances hangs at the end: the ceil-based partition gives the last rank fewer items, so it leaves the all-reduce early.
import math

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def partition(items, rank, world_size):
    total = len(items)
    per_partition = int(math.ceil(total / float(world_size)))
    start = rank * per_partition
    end = min(start + per_partition, total)
    return items[start:end]


def run(rank, world_size):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:12355", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    utterances = torch.randn(1003, 80)
    mine = partition(utterances, rank, world_size)
    model = DDP(nn.Linear(80, 500).to(device), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        for batch in mine.split(10):
            loss = model(batch.to(device)).logsumexp(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 4
    mp.spawn(run, args=(world_size,), nprocs=world_size, join=True)
