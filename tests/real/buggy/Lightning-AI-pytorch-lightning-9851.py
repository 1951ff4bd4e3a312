# expect: uneven-last-batch
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/9851
# reason: Training stuck near the end of an epoch; the maintainers explained it hangs when ranks have different numbers of batches, which came from each process choosing its dataset at random without a shared seed.
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def pick_training_subset(pool):
    n = random.randint(len(pool) // 2, len(pool))
    idx = random.sample(range(len(pool)), n)
    return torch.utils.data.Subset(pool, idx)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    pool = TensorDataset(torch.randn(8870, 40), torch.randint(0, 2, (8870,)))
    train_set = pick_training_subset(pool)
    sampler = DistributedSampler(train_set)  # what Lightning adds: shards a dataset whose size differs per rank
    loader = DataLoader(train_set, batch_size=2, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(40, 64), nn.ReLU(), nn.Linear(64, 2)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
