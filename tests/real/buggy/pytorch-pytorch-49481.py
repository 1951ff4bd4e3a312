# expect: missing-set-device
# source: https://github.com/pytorch/pytorch/issues/49481
# reason: A multi-node DLRM-style run launched one process per GPU and placed everything with .to(torch.device("cuda", local_rank)) but never set the current CUDA device, so every process also created a context on the first visible GPU and rank 0's GPU carried ~870 MiB per other process; the maintainers identified the missing device selection.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def env_int(*names, default=0):
    for name in names:
        if name in os.environ:
            return int(os.environ[name])
    return default


def dist_init():
    rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
    size = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", default=1)
    local_rank = env_int("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
    os.environ.setdefault("RANK", str(rank))
    os.environ.setdefault("WORLD_SIZE", str(size))
    dist.init_process_group("nccl", rank=rank, world_size=size)
    return rank, local_rank, size


class DLRMNet(nn.Module):
    def __init__(self, num_tables=8, rows=100000, dim=64):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(num_tables))
        self.bot = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, dim))
        self.top = nn.Sequential(nn.Linear(dim * (num_tables + 1), 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, dense, sparse):
        x = self.bot(dense)
        ly = [emb(sparse[:, i:i + 1]) for i, emb in enumerate(self.emb)]
        return self.top(torch.cat([x, *ly], dim=1))


def main():
    rank, local_rank, size = dist_init()
    device = torch.device("cuda", local_rank)
    model = DLRMNet().to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.BCEWithLogitsLoss()
    for step in range(1000):
        dense = torch.randn(2048, 13).to(device)
        sparse = torch.randint(0, 100000, (2048, 8)).to(device)
        target = torch.rand(2048, 1).round().to(device)
        loss = loss_fn(model(dense, sparse), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0 and step % 100 == 0:
            print(step, loss.item(), torch.cuda.max_memory_allocated() / 2**20)


if __name__ == "__main__":
    main()
