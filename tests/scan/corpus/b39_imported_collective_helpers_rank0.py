# expect: collective-mismatch
# Collectives reached through the project's own helper modules by name (utils.reduce_dict, comm.synchronize) on rank 0 only; torch.cuda.synchronize is not one.
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import utils
from engine.comm import synchronize


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    for epoch in range(3):
        loss = model(torch.randn(2, 4).cuda()).sum()
        if dist.get_rank() == 0:
            loss_dict = utils.reduce_dict({"loss": loss})
            print(loss_dict)
            synchronize()
            torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
