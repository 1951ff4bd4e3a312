# expect: logging-from-all-ranks
# source: https://github.com/wandb/wandb/issues/3208
# reason: "FileExistsError ... run-<id>.wandb" and "file data was not synced" under distributed training: every process called wandb.init with the same run id; W&B staff traced it to the parallel init calls, and commenters confirmed non-zero ranks must not init.
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def worker(rank, world_size, args, run_id):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    run = wandb.init(project=args.project, id=run_id, resume="allow", config=vars(args))
    device = torch.device("cuda", rank)
    model = DDP(nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(device), device_ids=[rank])
    data = TensorDataset(torch.randn(60000, 128), torch.randint(0, 10, (60000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=run.config.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            wandb.log({"loss": loss.item(), "epoch": epoch})
    run.finish()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", default="sweep-ddp")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    run_id = wandb.util.generate_id()
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size, args, run_id), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
