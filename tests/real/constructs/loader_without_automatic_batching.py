# expect:
# seen-in: https://github.com/wenet-e2e/wenet/blob/015469960db73eb19c49a48c020d5ac9db69bae5/wenet/bin/train.py
# DataLoader(dataset, batch_size=None): the dataset yields whole batches and splits its shards by rank itself
# (wenet's data pipes, webdataset); no DistributedSampler belongs on such a loader.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class ShardedBatches(IterableDataset):
    def __init__(self, shards, batch_size):
        self.shards, self.batch_size = shards, batch_size

    def __iter__(self):
        rank, world = dist.get_rank(), dist.get_world_size()
        for shard in self.shards[rank::world]:
            yield torch.randn(self.batch_size, 8) + shard, torch.randint(0, 2, (self.batch_size,))


def build_dataset(shards):
    return ShardedBatches(shards, batch_size=16)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    train_set = build_dataset(list(range(64)))
    train_loader = DataLoader(train_set, batch_size=None, num_workers=2, persistent_workers=True)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
