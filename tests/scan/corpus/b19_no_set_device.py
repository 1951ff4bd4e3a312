# expect: missing-set-device
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl")
    device = f"cuda:{local_rank}"
    model = DDP(torch.nn.Linear(8, 8).to(device), device_ids=[local_rank])
    loss = model(torch.randn(4, 8, device=device)).sum()
    loss.backward()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
