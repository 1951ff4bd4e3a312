# expect: missing-set-epoch
# source: https://github.com/kan-bayashi/ParallelWaveGAN/issues/177
# reason: The trainer keeps its samplers and loaders in dicts and builds a DistributedSampler for "train" under distributed training, but its epoch loop never calls sampler.set_epoch, so the shuffle order is the same every epoch; the maintainer acknowledged the bug.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    """Step-based trainer that loops over epochs until train_max_steps."""

    def __init__(self, steps, epochs, data_loader, sampler, model, criterion, optimizer, config, device):
        self.steps = steps
        self.epochs = epochs
        self.data_loader = data_loader
        self.sampler = sampler
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.config = config
        self.device = device
        self.finish_train = False

    def run(self):
        while True:
            self._train_epoch()
            if self.finish_train:
                break

    def _train_epoch(self):
        for batch in self.data_loader["train"]:
            self._train_step(batch)
            if self.steps >= self.config["train_max_steps"]:
                self.finish_train = True
                break
        self.epochs += 1

    def _train_step(self, batch):
        x, y = [t.to(self.device) for t in batch]
        loss = self.criterion(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.steps += 1


def main():
    config = {"batch_size": 6, "train_max_steps": 400000, "distributed": int(os.environ.get("WORLD_SIZE", 1)) > 1}
    rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda")
    if config["distributed"]:
        torch.cuda.set_device(rank)
        dist.init_process_group(backend="nccl", init_method="env://")
    dataset = {"train": TensorDataset(torch.randn(8000, 80), torch.randn(8000, 256)),
               "dev": TensorDataset(torch.randn(200, 80), torch.randn(200, 256))}
    sampler = {"train": None, "dev": None}
    if config["distributed"]:
        sampler["train"] = DistributedSampler(dataset["train"], num_replicas=dist.get_world_size(),
                                              rank=dist.get_rank(), shuffle=True)
        sampler["dev"] = DistributedSampler(dataset["dev"], shuffle=False)
    data_loader = {
        "train": DataLoader(dataset["train"], shuffle=not config["distributed"], batch_size=config["batch_size"],
                            sampler=sampler["train"]),
        "dev": DataLoader(dataset["dev"], shuffle=False, batch_size=config["batch_size"], sampler=sampler["dev"]),
    }
    model = nn.Sequential(nn.Linear(80, 512), nn.LeakyReLU(0.2), nn.Linear(512, 256)).to(device)
    if config["distributed"]:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.RAdam(model.parameters(), lr=1e-4)
    trainer = Trainer(0, 0, data_loader, sampler, model, nn.L1Loss(), optimizer, config, device)
    trainer.run()


if __name__ == "__main__":
    main()
