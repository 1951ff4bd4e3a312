# expect: checkpoint-without-module
# source: https://github.com/instanseg/instanseg/issues/74
# reason: Checkpoints from multi-GPU training carried a "module." prefix that did not match on reload; the reporter and maintainer agreed the saved keys were the problem.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_epoch(model, loader, optimizer, device):
    for img, mask in loader:
        loss = nn.functional.binary_cross_entropy_with_logits(model(img.to(device)), mask.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def main(num_epochs=500, save_path="models/instanseg.pth"):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 1))
    model = DDP(model.to(device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(1000, 3, 256, 256), torch.rand(1000, 1, 256, 256).round())
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = float("inf")
    for epoch in range(num_epochs):
        sampler.set_epoch(epoch)
        loss = train_epoch(model, loader, optimizer, device)
        if local_rank == 0 and loss < best:
            best = loss
            torch.save({"model_state_dict": model.state_dict(), "epoch": epoch}, save_path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
