# expect: missing-set-epoch
# source: https://github.com/goodfire-ai/spd/issues/104
# reason: After DDP support landed, the decomposition runs iterated their DistributedSampler epoch after epoch without ever calling set_epoch, so every epoch replayed the same data order; the maintainers' fix (closed by #112) reshuffles per epoch through the sampler's set_epoch.
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class Config:
    seed: int = 0
    steps: int = 20000
    batch_size: int = 64
    lr: float = 1e-3
    n_features: int = 40
    d_hidden: int = 10
    n_samples: int = 100000


def init_distributed():
    if "RANK" not in os.environ:
        return 0, 1, torch.device("cuda" if torch.cuda.is_available() else "cpu")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)


def create_data_loader(config, rank, world_size):
    dataset = TensorDataset(torch.rand(config.n_samples, config.n_features))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=config.seed)
    return DataLoader(dataset, batch_size=config.batch_size, sampler=sampler, drop_last=True)


def loop_over_data(loader):
    while True:
        for (batch,) in loader:
            yield batch


class ToyModel(nn.Module):
    def __init__(self, n_features, d_hidden):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_features, d_hidden) * 0.1)
        self.b = nn.Parameter(torch.zeros(n_features))

    def forward(self, x):
        return torch.relu(x @ self.W @ self.W.T + self.b)


def optimize(config):
    rank, world_size, device = init_distributed()
    torch.manual_seed(config.seed)
    model = ToyModel(config.n_features, config.d_hidden).to(device)
    if world_size > 1:
        model = DistributedDataParallel(model, device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    data = loop_over_data(create_data_loader(config, rank, world_size))
    for step in range(config.steps):
        batch = next(data).to(device)
        loss = ((model(batch) - batch) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0 and step % 1000 == 0:
            print(f"step {step} loss {loss.item():.5f}")
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    optimize(Config())
