# expect: batch-size-mismatch
# source: https://github.com/official-stockfish/nnue-pytorch/pull/390
# reason: Steps per epoch and positions seen depended on the GPU count because --batch-size was used per GPU; the merged PR makes it the global batch and divides it by the number of GPUs.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=16384)
    p.add_argument("--epoch-size", type=int, default=100_000_000)
    p.add_argument("--max-epochs", type=int, default=800)
    args = p.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(nn.Sequential(nn.Linear(768, 256), nn.ReLU(), nn.Linear(256, 1)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=8.75e-4)
    batches_per_epoch = args.epoch_size // args.batch_size
    for epoch in range(args.max_epochs):
        for _ in range(batches_per_epoch):
            x = torch.randn(args.batch_size, 768, device=device)
            target = torch.rand(args.batch_size, 1, device=device)
            loss = (model(x).sigmoid() - target).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
