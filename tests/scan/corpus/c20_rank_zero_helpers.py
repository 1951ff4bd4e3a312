# expect: none
import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


def rank_zero_only(fn):
    def wrapped(*args, **kwargs):
        if dist.get_rank() == 0:
            return fn(*args, **kwargs)
    return wrapped


@rank_zero_only
def save(model, epoch):
    torch.save(model.module.state_dict(), f"epoch{epoch}.pt")


def report(step, loss):
    wandb.log({"loss": loss, "step": step})
    print(f"step {step}: {loss:.3f}")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    is_master = dist.get_rank() == 0
    if is_master:
        wandb.init(project="demo")
    model = DDP(torch.nn.Linear(3, 3).cuda(), device_ids=[local_rank])
    for epoch in range(3):
        for step in range(100):
            loss = model(torch.randn(2, 3).cuda()).sum()
            loss.backward()
            if is_master and step % 10 == 0:
                report(step, loss.item())
        save(model, epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
