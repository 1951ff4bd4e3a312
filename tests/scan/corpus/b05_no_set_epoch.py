# expect: missing-set-epoch
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def train_one_epoch(model, loader, opt, device):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()


def main():
    local_rank = setup()
    device = torch.device("cuda", local_rank)
    ds = TensorDataset(torch.randn(2048, 20), torch.randint(0, 2, (2048,)))
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=64, sampler=sampler, pin_memory=True)
    model = DDP(nn.Linear(20, 2).to(device), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        train_one_epoch(model, loader, opt, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
