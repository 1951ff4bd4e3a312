# expect: missing-set-device
# source: https://github.com/dptech-corp/deepmd-pytorch/pull/76
# reason: The merged fix adds the missing set_device step from the DDP tutorial: rank 0's GPU held extra contexts from every process.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
DEVICE = torch.device(f"cuda:{LOCAL_RANK}")


class EnergyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fitting = nn.Sequential(nn.Linear(64, 240), nn.Tanh(), nn.Linear(240, 1))

    def forward(self, descriptor):
        return self.fitting(descriptor).sum(dim=1)


def train(num_steps=1000):
    dist.init_process_group(backend="nccl")
    data = TensorDataset(torch.randn(20000, 12, 64), torch.randn(20000, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=2)
    model = EnergyModel().to(DEVICE)
    model = DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step, epoch = 0, 0
    while step < num_steps:
        sampler.set_epoch(epoch)
        for desc, energy in loader:
            loss = nn.functional.mse_loss(model(desc.to(DEVICE)), energy.to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
