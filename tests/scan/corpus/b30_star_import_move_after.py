# expect: ddp-before-to-device
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import *


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = torch.nn.Linear(5, 5)
    model = DistributedDataParallel(model)
    model = model.to(f"cuda:{local_rank}")
    model(torch.randn(1, 5, device=f"cuda:{local_rank}")).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
