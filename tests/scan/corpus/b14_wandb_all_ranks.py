# expect: logging-from-all-ranks
import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    wandb.init(project="ddp-demo", config={"lr": 1e-3})
    model = DDP(torch.nn.Linear(16, 16).cuda(), device_ids=[local_rank])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(1000):
        loss = model(torch.randn(32, 16).cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        wandb.log({"loss": loss.item(), "step": step})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
