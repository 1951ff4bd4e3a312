# expect: shuffle-with-sampler
# source: https://github.com/AgatheSenellart/MultiVae/issues/33
# reason: The trainer hard-coded shuffle=True next to its DistributedSampler ("sampler option is mutually exclusive with shuffle"); the maintainer fixed it in a PR.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class BaseTrainer:
    def __init__(self, model, train_dataset, batch_size=64, epochs=50):
        self.distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if self.distributed:
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)
        model = model.to(self.device)
        if self.distributed:
            model = nn.parallel.DistributedDataParallel(model, device_ids=[self.local_rank])
        self.model = model
        self.train_loader = self.get_train_dataloader(train_dataset, batch_size)
        self.epochs = epochs
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def get_train_dataloader(self, dataset, batch_size):
        sampler = DistributedSampler(dataset) if self.distributed else None
        return DataLoader(dataset, batch_size=batch_size, shuffle=True, sampler=sampler)

    def train(self):
        for epoch in range(self.epochs):
            if self.distributed:
                self.train_loader.sampler.set_epoch(epoch)
            for (x,) in self.train_loader:
                x = x.to(self.device)
                recon = self.model(x)
                loss = nn.functional.mse_loss(recon, x)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        if self.distributed:
            dist.destroy_process_group()


if __name__ == "__main__":
    vae = nn.Sequential(nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 784))
    BaseTrainer(vae, TensorDataset(torch.rand(6000, 784))).train()
