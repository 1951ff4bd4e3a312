# expect:
# seen-in: https://github.com/mistralai/mistral-finetune/blob/1943535d8e6d46b2eb47de8b81df07fec3ca5c15/train.py
# Under a scheduler that gives each task one GPU, the process sees a single device and takes index 0 (its own GPU);
# with several visible GPUs it takes the one of its local rank.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def bind_gpu():
    seen = torch.cuda.device_count()
    if seen == 1:
        torch.cuda.set_device(0)
        return 0
    index = int(os.environ["LOCAL_RANK"])
    assert 0 <= index < seen
    torch.cuda.set_device(index)
    return index


def main():
    gpu = bind_gpu()
    dist.init_process_group("nccl")
    net = DDP(nn.Linear(32, 4).cuda(), device_ids=[gpu])
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    for step in range(100):
        x = torch.randn(16, 32, device="cuda")
        loss = net(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
