# expect: logging-from-all-ranks
# source: https://github.com/Emerge-Lab/PufferDrive/pull/468
# reason: Logger creation in train() was not gated, so under torchrun every rank called wandb.init and world_size duplicate runs appeared; the merged fix builds the logger on rank 0 only.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


class WandbLogger:
    def __init__(self, config):
        self.run = wandb.init(project="pufferdrive", group="ddp", config=config)

    def log(self, metrics, step):
        self.run.log(metrics, step=step)


def train(config):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    logger = WandbLogger(config)
    policy = DDP(nn.Sequential(nn.Linear(128, 256), nn.Tanh(), nn.Linear(256, 9)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    global_step = 0
    for update in range(config["updates"]):
        obs = torch.randn(4096, 128, device=device)
        adv = torch.randn(4096, device=device)
        logits = policy(obs)
        loss = -(logits.log_softmax(-1).max(-1).values * adv).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        global_step += obs.shape[0]
        logger.log({"loss": loss.item()}, step=global_step)
    dist.destroy_process_group()


if __name__ == "__main__":
    train({"updates": 10000})
