# expect: no-barrier-before-checkpoint-load
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

CKPT = "/tmp/init.pt"


def main():
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = torch.nn.Linear(10, 1).cuda()
    if rank == 0:
        torch.save(model.state_dict(), CKPT)
    model.load_state_dict(torch.load(CKPT, map_location=f"cuda:{local_rank}"))
    model = DDP(model, device_ids=[local_rank])
    out = model(torch.randn(2, 10).cuda()).sum()
    out.backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
