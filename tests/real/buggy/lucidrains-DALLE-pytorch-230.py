# expect: missing-set-epoch
# source: https://github.com/lucidrains/DALLE-pytorch/pull/230
# reason: The merged fix adds data_sampler.set_epoch(epoch): without it the DistributedSampler replays the same order every epoch.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--distributed", action="store_true")
    return p.parse_args()


def main():
    args = parse()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    if args.distributed:
        dist.init_process_group("nccl")
    ds = TensorDataset(torch.randint(0, 1000, (5000, 64)), torch.randn(5000, 3, 32, 32))
    data_sampler = DistributedSampler(ds, shuffle=True) if args.distributed else None
    dl = DataLoader(ds, batch_size=args.batch_size, shuffle=data_sampler is None, sampler=data_sampler, drop_last=True)
    dalle = nn.Sequential(nn.Embedding(1000, 128), nn.Flatten(), nn.Linear(64 * 128, 3 * 32 * 32)).cuda()
    if args.distributed:
        dalle = DDP(dalle, device_ids=[local_rank])
    opt = torch.optim.Adam(dalle.parameters(), lr=3e-4)
    for epoch in range(args.epochs):
        for i, (text, images) in enumerate(dl):
            text, images = text.cuda(), images.cuda()
            loss = nn.functional.mse_loss(dalle(text), images.flatten(1))
            loss.backward()
            opt.step()
            opt.zero_grad()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
