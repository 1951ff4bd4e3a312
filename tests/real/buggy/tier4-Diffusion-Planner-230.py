# expect: checkpoint-without-module
# source: https://github.com/tier4/Diffusion-Planner/pull/230
# reason: DDP training saved state_dict keys with the "module." prefix, so single-GPU validation and resume could not load them; the merged PR strips the prefix.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def save_model(model, optimizer, epoch, save_path):
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
               os.path.join(save_path, "latest.pth"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--save_dir", default="runs")
    p.add_argument("--epochs", type=int, default=500)
    args = p.parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    if args.ddp:
        dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 80 * 4)).to(device)
    if args.ddp:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    data = TensorDataset(torch.randn(30000, 256), torch.randn(30000, 320))
    sampler = DistributedSampler(data) if args.ddp else None
    loader = DataLoader(data, batch_size=256, sampler=sampler, shuffle=sampler is None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if local_rank == 0:
            save_model(model, optimizer, epoch, args.save_dir)
    if args.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
