# expect: collective-mismatch
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def is_main_process():
    return dist.get_rank() == 0


def log_metrics(loss):
    if not is_main_process():
        return
    dist.all_reduce(loss)
    print("mean loss", loss.item() / dist.get_world_size())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(3, 1).cuda(), device_ids=[local_rank])
    for step in range(10):
        loss = model(torch.randn(5, 3, device="cuda")).pow(2).mean()
        loss.backward()
        log_metrics(loss.detach())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
