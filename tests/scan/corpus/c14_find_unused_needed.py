# expect: none
# The forward skips a branch depending on the input, so find_unused_parameters=True is required.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.small = nn.Linear(8, 8)
        self.large = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 8))

    def forward(self, x, hard):
        if hard:
            return self.large(x)
        return self.small(x)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(Router().cuda(), device_ids=[local_rank], find_unused_parameters=True)
    for step in range(10):
        model(torch.randn(4, 8).cuda(), hard=step % 2 == 0).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
