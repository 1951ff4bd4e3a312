# expect: batch-size-mismatch
# source: https://github.com/Wuziyi616/nerv/pull/3
# reason: In DDP mode the trainer computed the number of training steps from the per-GPU batch size and then multiplied it back by the number of GPUs, although the DistributedSampler already splits the data across GPUs, so the step count (and the LR schedule built on it) was world_size times too large; the maintainer merged the fix.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class BaseParams:
    gpus = int(os.environ.get("WORLD_SIZE", 1))
    max_epochs = 40
    train_batch_size = 64 // gpus  # the config already divides the batch size per GPU
    lr = 2e-4


class BaseMethod:
    def __init__(self, model, params, train_set, local_rank):
        self.params = params
        self.device = torch.device("cuda", local_rank)
        self.model = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[local_rank])
        self.sampler = DistributedSampler(train_set)
        self.train_loader = DataLoader(train_set, batch_size=params.train_batch_size, sampler=self.sampler)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=params.lr)
        steps_per_epoch = len(train_set) // params.train_batch_size // params.gpus * params.gpus
        self.total_steps = params.max_epochs * steps_per_epoch * params.gpus
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(self.optimizer, max_lr=params.lr,
                                                             total_steps=self.total_steps)

    def fit(self):
        for epoch in range(self.params.max_epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.train_loader:
                loss = nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.scheduler.step()


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(9000, 128), torch.randn(9000, 128))
    BaseMethod(nn.Linear(128, 128), BaseParams(), data, local_rank).fit()
