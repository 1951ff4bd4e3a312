# expect: grad-accum-without-no-sync
# source: https://github.com/facebookresearch/ClassyVision/pull/656
# reason: The classification task accumulated gradients over `optimizer_period` iterations but ran every backward through the DistributedDataParallel model, so gradients were all-reduced on each accumulation step although the optimizer only stepped at the end of the period; the maintainer's change disables the sync (DDP no_sync) on the non-final steps.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ClassificationTask:
    def __init__(self, model, optimizer, loss, optimizer_period=4):
        self.base_model = model
        self.distributed_model = None
        self.optimizer = optimizer
        self.loss = loss
        self.optimizer_period = optimizer_period
        self.num_updates = 0
        self.losses = []

    def init_distributed_data_parallel_model(self, device_id):
        self.distributed_model = DistributedDataParallel(
            self.base_model, device_ids=[device_id], output_device=device_id,
            broadcast_buffers=True, find_unused_parameters=False)

    @property
    def model(self):
        return self.distributed_model if self.distributed_model is not None else self.base_model

    def _should_do_step(self):
        return (self.num_updates + 1) % self.optimizer_period == 0

    def run_optimizer(self, loss):
        if self.num_updates % self.optimizer_period == 0:
            self.optimizer.zero_grad()
        (loss / self.optimizer_period).backward()
        if self._should_do_step():
            self.optimizer.step()
        self.num_updates += 1

    def train_step(self, sample, device):
        inputs, targets = sample[0].to(device), sample[1].to(device)
        output = self.model(inputs)
        local_loss = self.loss(output, targets)
        self.run_optimizer(local_loss)
        self.losses.append(local_loss.detach())


def build_loader(rank, world_size):
    data = TensorDataset(torch.randn(4096, 3, 64, 64), torch.randint(0, 100, (4096,)))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True)
    return DataLoader(data, batch_size=32, sampler=sampler, num_workers=4, drop_last=True), sampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)

    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 100)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    task = ClassificationTask(model, optimizer, nn.CrossEntropyLoss(), optimizer_period=4)
    task.init_distributed_data_parallel_model(local_rank)

    loader, sampler = build_loader(rank, world_size)
    for phase in range(10):
        sampler.set_epoch(phase)
        task.model.train()
        for sample in loader:
            task.train_step(sample, device)
        if rank == 0:
            print(f"phase {phase}: loss {torch.stack(task.losses).mean().item():.4f}")
        task.losses.clear()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
