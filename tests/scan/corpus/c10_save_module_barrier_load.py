# expect: none
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

CKPT = "/tmp/ckpt.pt"


def main():
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(10, 1).cuda(), device_ids=[local_rank])
    model(torch.randn(2, 10).cuda()).sum().backward()
    if rank == 0:
        torch.save(model.module.state_dict(), CKPT)
    dist.barrier()
    state = torch.load(CKPT, map_location={"cuda:0": f"cuda:{local_rank}"})
    model.module.load_state_dict(state)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
