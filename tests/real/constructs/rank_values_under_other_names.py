# expect:
# seen-in: https://github.com/huggingface/nanoVLM/blob/4e0c0961846135c2217f95e54cb4c2d66eb55e42/train.py
# Rank guards spelled with names that say nothing: the set-up returns (rank, local rank) as a tuple, the "main
# process" predicate answers True in a one-process run and `rank == 0` otherwise, and the RNG state goes to one
# file without a launcher (local rank -1) and to one file per rank with one.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


def started():
    return dist.is_available() and dist.is_initialized()


def lead():
    return dist.get_rank() == 0 if started() else True


def prepare(which):
    if which == -1:
        return 0, 0
    torch.cuda.set_device(which)
    dist.init_process_group("nccl")
    return dist.get_rank(), which


def keep(folder, which):
    state = torch.random.get_rng_state()
    if (alone := which == -1):
        torch.save(state, os.path.join(folder, "rng.pth"))
    else:
        torch.save(state, os.path.join(folder, f"rng_{which}.pth"))


def go():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    o = p.parse_args()
    r, lr = prepare(o.local_rank)
    if lead():
        wandb.init(project="demo")
    net = nn.Linear(8, 1).cuda()
    if o.local_rank != -1:
        net = DDP(net, device_ids=[lr])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(100):
        objective = net(torch.randn(4, 8).cuda()).pow(2).mean()
        opt.zero_grad()
        objective.backward()
        opt.step()
        if r == 0 and step % 50 == 49:
            torch.save(net.state_dict() if o.local_rank == -1 else net.module.state_dict(), "last.pth")
        if step % 50 == 49:
            keep("out", o.local_rank)


if __name__ == "__main__":
    go()
