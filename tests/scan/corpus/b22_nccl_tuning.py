# expect: nccl-tuning-before-profiling
import os

os.environ["NCCL_DEBUG"] = "WARN"
os.environ["NCCL_ALGO"] = "Tree"
os.environ.setdefault("NCCL_NSOCKS_PERTHREAD", "8")

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    model(torch.randn(1, 4).cuda()).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
