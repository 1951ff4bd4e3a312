# expect: missing-set-device
# source: https://github.com/pytorch/pytorch/issues/72931
# reason: An MNIST script spawned one process per GPU, moved the model with Net().to(rank) and wrapped it in FullyShardedDataParallel without ever calling torch.cuda.set_device(rank); training then failed complaining about tensors on several devices because the wrapper's own buffers and collectives went to the current device (GPU 0); the workaround suggested by a maintainer, confirmed by the reporter, is to set the device before wrapping.
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = torch.flatten(F.max_pool2d(x, 2), 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(model, rank, train_loader, optimizer, epoch, sampler):
    model.train()
    totals = torch.zeros(2).to(rank)
    sampler.set_epoch(epoch)
    for data, target in train_loader:
        data, target = data.to(rank), target.to(rank)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target, reduction="sum")
        loss.backward()
        optimizer.step()
        totals[0] += loss.item()
        totals[1] += len(data)
    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
    if rank == 0:
        print(f"Train Epoch: {epoch} \tLoss: {totals[0] / totals[1]:.6f}")


def fsdp_main(rank, world_size, args):
    setup(rank, world_size)
    dataset = TensorDataset(torch.randn(6000, 1, 28, 28), torch.randint(0, 10, (6000,)))
    sampler = DistributedSampler(dataset, rank=rank, num_replicas=world_size, shuffle=True)
    train_kwargs = {"batch_size": args.batch_size, "sampler": sampler}
    train_kwargs.update({"num_workers": 2, "pin_memory": True, "shuffle": False})
    train_loader = DataLoader(dataset, **train_kwargs)

    model = Net().to(rank)
    model = FSDP(model)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        train(model, rank, train_loader, optimizer, epoch, sampler)
    cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1.0)
    args = parser.parse_args()
    WORLD_SIZE = torch.cuda.device_count()
    mp.spawn(fsdp_main, args=(WORLD_SIZE, args), nprocs=WORLD_SIZE, join=True)
