# expect: logging-from-all-ranks
# source: https://github.com/huggingface/pytorch-image-models/issues/1309
# reason: --log-wandb created one W&B run per GPU; the maintainer said wandb.init must move after distributed init and run on rank 0 only.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as NativeDDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log-wandb", action="store_true")
    parser.add_argument("--epochs", type=int, default=300)
    args = parser.parse_args()

    if args.log_wandb:
        wandb.init(project="timm-train", config=vars(args))

    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    args.rank = dist.get_rank()

    model = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 1000))
    model = NativeDDP(model.cuda(), device_ids=[args.local_rank])
    dataset = TensorDataset(torch.randn(5000, 3, 224, 224), torch.randint(0, 1000, (5000,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler, num_workers=8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.rank == 0 and args.log_wandb:
            wandb.log({"epoch": epoch, "train_loss": loss.item()})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
