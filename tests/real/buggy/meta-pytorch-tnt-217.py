# expect: missing-set-epoch
# source: https://github.com/meta-pytorch/tnt/pull/217
# reason: The framework's training loop iterated the user's dataloader epoch after epoch without calling set_epoch on its DistributedSampler, so every epoch replayed the same order; the fix calls dataloader.sampler.set_epoch(epoch) at the start of each epoch.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class State:
    def __init__(self, module, optimizer, max_epochs):
        self.module = module
        self.optimizer = optimizer
        self.max_epochs = max_epochs
        self.epoch = 0


def _train_epoch(state, dataloader):
    state.module.train()
    for inputs, targets in dataloader:
        loss = nn.functional.cross_entropy(state.module(inputs.cuda()), targets.cuda())
        state.optimizer.zero_grad()
        loss.backward()
        state.optimizer.step()


def train(state, dataloader):
    while state.epoch < state.max_epochs:
        _train_epoch(state, dataloader)
        state.epoch += 1


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    module = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).cuda(), device_ids=[local_rank])
    dataset = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    dataloader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=True))
    state = State(module, torch.optim.SGD(module.parameters(), lr=0.1), max_epochs=20)
    train(state, dataloader)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
