# expect: none
# The class-weight helper returns its tensor on the device of the labels, which are on the GPU.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def inverse_frequency(targets):
    _, counts = torch.unique(targets, return_counts=True)
    freq = counts.float() / counts.sum()
    return (1.0 / freq).to(targets.device)


def train():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    targets = torch.randint(0, 5, (1000,)).cuda()
    class_weight = inverse_frequency(targets)
    criterion = nn.CrossEntropyLoss(weight=class_weight)
    model = DDP(nn.Linear(10, 5).cuda(), device_ids=[local_rank])
    out = model(torch.randn(1000, 10).cuda())
    criterion(out, targets).backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
