# expect: none
# A --device option that defaults to "cuda:0" for single-GPU runs and is replaced by the local rank's device
# under torchrun; a helper whose device default is always passed explicitly. Nothing is pinned to GPU 0.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_targets(n, device="cuda:0"):
    return torch.zeros(n, 8, device=device)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    args.device = f"cuda:{local_rank}"
    model = DDP(nn.Linear(8, 8).to(args.device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 8))
    sampler = DistributedSampler(data)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in DataLoader(data, batch_size=16, sampler=sampler):
            loss = nn.functional.mse_loss(model(x.to(args.device)), make_targets(x.shape[0], device=args.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
