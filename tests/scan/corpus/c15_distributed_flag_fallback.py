# expect: none
# Runs with or without torchrun; the single-GPU branch may use cuda:0.
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    args.distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    if args.distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda:0")
    ds = TensorDataset(torch.randn(256, 4))
    sampler = DistributedSampler(ds) if args.distributed else None
    loader = DataLoader(ds, batch_size=8, sampler=sampler, shuffle=(sampler is None))
    model = torch.nn.Linear(4, 4).to(device)
    if args.distributed:
        model = DDP(model, device_ids=[device.index])
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for (x,) in loader:
            model(x.to(device)).sum().backward()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
