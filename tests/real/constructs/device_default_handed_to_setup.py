# expect:
# seen-in: https://github.com/rwightman/efficientdet-pytorch/blob/c6dff775a36cea0bf9b76c58e59f936411c5ce01/train.py
# timm's train.py family: args.device defaults to "cuda:0" and the distributed set-up helper, handed the
# arguments, sets it to the local rank's GPU; the constant only serves a one-process run.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def init_distributed_device(args):
    args.distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    args.rank, args.local_rank = 0, 0
    if args.distributed:
        dist.init_process_group("nccl")
        args.rank, args.local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
        args.device = f"cuda:{args.local_rank}"
        torch.cuda.set_device(args.device)
    return torch.device(args.device)


def main():
    args = argparse.ArgumentParser().parse_args()
    args.device = "cuda:0"
    device = init_distributed_device(args)
    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data) if args.distributed else None
    loader = DataLoader(data, batch_size=16, sampler=sampler, shuffle=sampler is None)
    model = nn.Linear(8, 2).to(device)
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
