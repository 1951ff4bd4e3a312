# expect:
# seen-in: https://github.com/mlfoundations/open_clip/blob/89fb801f1e6087880e951fc8354b8a2077b79c6d/src/open_clip_train/legacy_main.py
# A flag derived once from the rank (args.save_logs = ... and is_master(args)) guards logging and saving later.
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter


def is_master(args, local=False):
    return args.local_rank == 0 if local else args.rank == 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--logs", default="./logs")
    p.add_argument("--epochs", type=int, default=32)
    args = p.parse_args()
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    args.rank = dist.get_rank()
    device = torch.device("cuda", args.local_rank)
    args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
    writer = SummaryWriter(args.logs) if args.save_logs else None
    model = DistributedDataParallel(nn.Linear(512, 512).to(device), device_ids=[args.local_rank])
    data = TensorDataset(torch.randn(8192, 512), torch.randn(8192, 512))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=128, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if args.save_logs and step % 100 == 0:
                writer.add_scalar("train/loss", loss.item(), epoch * len(loader) + step)
                logging.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
        if args.save_logs:
            torch.save({"epoch": epoch + 1, "state_dict": model.module.state_dict()}, os.path.join(args.logs, "latest.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
