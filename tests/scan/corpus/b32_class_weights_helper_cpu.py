# expect: loss-not-on-device
# Class weights computed from the labels by a local helper: the tensor it returns is built on the CPU, and
# neither it nor the loss is moved to the GPU the model runs on.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def inverse_frequency(targets):
    _, counts = torch.unique(targets, return_counts=True)
    freq = counts.float() / counts.sum()
    return 1.0 / freq


def train():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    targets = torch.randint(0, 5, (1000,))
    class_weight = inverse_frequency(targets)
    criterion = nn.CrossEntropyLoss(weight=class_weight)
    model = DDP(nn.Linear(10, 5).cuda(), device_ids=[local_rank])
    out = model(torch.randn(1000, 10).cuda())
    criterion(out, targets.cuda()).backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
