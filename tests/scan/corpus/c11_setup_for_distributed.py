# expect: none
# The DETR / torchvision-references idiom: print is silenced on non-master ranks.
import builtins
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_for_distributed(is_master):
    builtin_print = builtins.print

    def print(*args, **kwargs):
        force = kwargs.pop("force", False)
        if is_master or force:
            builtin_print(*args, **kwargs)

    builtins.print = print


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    setup_for_distributed(dist.get_rank() == 0)
    model = DDP(torch.nn.Linear(3, 3).cuda(), device_ids=[local_rank])
    for step in range(10):
        loss = model(torch.randn(2, 3).cuda()).sum()
        loss.backward()
        print("step", step, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
