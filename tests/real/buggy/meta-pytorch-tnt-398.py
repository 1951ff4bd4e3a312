# expect: ddp-before-to-device
# source: https://github.com/meta-pytorch/tnt/pull/398
# reason: A refactor stopped moving the module to its device before the DDP wrap, giving "module parameters {device(type='cpu')}" errors; the fix restores the move before wrapping.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def prepare_ddp(module, device):
    return DDP(module, device_ids=[device.index])


class AutoUnit:
    def __init__(self, module, device):
        self.device = device
        module = prepare_ddp(module, device)
        self.module = module.to(self.device)
        self.optimizer = torch.optim.AdamW(self.module.parameters(), lr=1e-3)

    def train_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        loss = nn.functional.cross_entropy(self.module(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    unit = AutoUnit(nn.Linear(128, 16), torch.device("cuda", local_rank))
    data = TensorDataset(torch.randn(5000, 128), torch.randint(0, 16, (5000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for batch in loader:
            unit.train_step(batch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
