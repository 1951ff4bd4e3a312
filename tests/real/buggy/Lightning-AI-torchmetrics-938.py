# expect: collective-mismatch
# source: https://github.com/Lightning-AI/torchmetrics/issues/938
# reason: Training used plain DistributedDataParallel and ran the test function on rank 0 only; MetricCollection.compute() there all-gathers every process's state by default, so rank 0 hung in allGather until the timeout; the maintainers' answer: every rank must call compute (or the metrics must be built with sync_on_compute=False / dist_sync_fn for a single process).
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torchmetrics import Accuracy, F1Score, MetricCollection


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)


def test(model, loader, metrics, rank):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            metrics.update(model(x.to(rank)).argmax(-1), y.to(rank))
    return metrics.compute()


def run(rank, world_size):
    setup(rank, world_size)
    model = DDP(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(rank), device_ids=[rank],
                broadcast_buffers=False)
    train = TensorDataset(torch.randn(4000, 20), torch.randint(0, 5, (4000,)))
    sampler = DistributedSampler(train)
    loader = DataLoader(train, batch_size=32, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(rank)), y.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    metrics = MetricCollection([Accuracy(task="multiclass", num_classes=5),
                                F1Score(task="multiclass", num_classes=5)]).to(rank)
    if rank == 0:
        test_loader = DataLoader(TensorDataset(torch.randn(500, 20), torch.randint(0, 5, (500,))), batch_size=64)
        print(test(model.module, test_loader, metrics, rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size,), nprocs=world_size, join=True)
