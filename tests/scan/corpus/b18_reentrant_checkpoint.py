# expect: gradient-checkpointing-conflict
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, x):
        return x + self.ff(x)


class Deep(nn.Module):
    def __init__(self, d=64, n=6):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x)
        return x


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(Deep().cuda(), device_ids=[local_rank], find_unused_parameters=True)
    loss = model(torch.randn(8, 64, device="cuda", requires_grad=True)).sum()
    loss.backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
