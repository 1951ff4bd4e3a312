# expect: none
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint


class Gated(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)

    def forward(self, x, use_b):
        x = checkpoint(self.a, x, use_reentrant=False)
        if use_b:
            x = self.b(x)
        return x


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(Gated().cuda(), device_ids=[local_rank], find_unused_parameters=True)
    model(torch.randn(2, 32, device="cuda"), use_b=False).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
