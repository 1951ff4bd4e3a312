# expect: missing-set-epoch
# source: https://github.com/catalyst-team/catalyst/pull/207
# reason: The runner's epoch loop iterated its loaders (DistributedSampler under distributed training) without setting the sampler's epoch; the merged PR adds the set_epoch call so each epoch gets a new shuffle.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class SupervisedRunner:
    def __init__(self, model, criterion, optimizer, device):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device

    def _run_loader(self, loader, is_train):
        self.model.train(is_train)
        for features, targets in loader:
            with torch.set_grad_enabled(is_train):
                loss = self.criterion(self.model(features.to(self.device)), targets.to(self.device))
            if is_train:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def train(self, loaders, num_epochs):
        for epoch in range(num_epochs):
            for name, loader in loaders.items():
                self._run_loader(loader, is_train=name.startswith("train"))


def get_loaders(distributed):
    datasets = {"train": TensorDataset(torch.randn(10000, 32), torch.randint(0, 4, (10000,))),
                "valid": TensorDataset(torch.randn(1000, 32), torch.randint(0, 4, (1000,)))}
    loaders = {}
    for name, dataset in datasets.items():
        sampler = DistributedSampler(dataset, shuffle=name == "train") if distributed else None
        loaders[name] = DataLoader(dataset, batch_size=64, sampler=sampler,
                                   shuffle=sampler is None and name == "train", num_workers=2)
    return loaders


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    runner = SupervisedRunner(model, nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), lr=1e-3), device)
    runner.train(get_loaders(distributed=True), num_epochs=20)


if __name__ == "__main__":
    main()
