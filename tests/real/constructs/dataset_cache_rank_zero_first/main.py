# expect:
# seen-in: https://github.com/WongKinYiu/yolov7/blob/a207844b1ce82d204ab36d87d496728d3d2348e7/train.py
# The dataset writes its label cache with torch.save; it is built under torch_distributed_zero_first(rank), so
# rank 0 writes the cache first and the other ranks, started after it, read it: no concurrent write.
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


@contextmanager
def torch_distributed_zero_first(local_rank):
    if local_rank not in [-1, 0]:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


class LabelledImages(Dataset):
    def __init__(self, path):
        cache_path = path + ".cache"
        self.labels = torch.load(cache_path) if os.path.exists(cache_path) else self.cache_labels(cache_path)

    def cache_labels(self, cache_path):
        labels = torch.zeros(1000, dtype=torch.long)
        torch.save(labels, cache_path)
        return labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.randn(8), self.labels[i]


def create_dataloader(path, rank):
    with torch_distributed_zero_first(rank):
        dataset = LabelledImages(path)
    return DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))


def main():
    rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    loader = create_dataloader("data/train", rank)
    model = DDP(nn.Linear(8, 10).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(rank)), y.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
