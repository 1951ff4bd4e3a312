# expect: hardcoded-cuda0
# CUDA_VISIBLE_DEVICES pinned to one constant GPU for every process, in a script that picks devices by local rank.
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
