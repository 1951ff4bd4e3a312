# expect: none
import logging
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    logging.basicConfig(level=logging.INFO if dist.get_rank() == 0 else logging.WARNING)
    model = DDP(torch.nn.Linear(3, 3).cuda(), device_ids=[local_rank])
    for step in range(10):
        loss = model(torch.randn(2, 3).cuda()).sum()
        loss.backward()
        log.info("step %d loss %.3f", step, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
