# expect: unsynced-dropout-rng, unused-parameters-error
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class LayerDropEncoder(nn.Module):
    def __init__(self, d=32, layers=4, p=0.2):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(layers)])
        self.p = p

    def forward(self, x):
        for layer in self.layers:
            if self.training and random.random() < self.p:
                continue
            x = torch.relu(layer(x))
        return x


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(LayerDropEncoder().cuda(), device_ids=[local_rank])
    for _ in range(20):
        model(torch.randn(2, 32, device="cuda")).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
