# expect: missing-set-device
# source: https://github.com/galilai-group/stable-pretraining/pull/50
# reason: The trainer read the local rank from the launcher but never used it to select the CUDA device, so every process allocated on the default GPU; the merged fix sets the device from the local rank.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class BaseTrainer:
    def __init__(self, config):
        self.config = config
        self._setup_distributed()
        self.model = self._build_model()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=config["lr"], momentum=0.9)

    def _setup_distributed(self):
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        self.rank = int(os.environ.get("RANK", 0))
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if self.world_size > 1:
            dist.init_process_group(backend="nccl", init_method="env://")
        self.device = torch.device("cuda")

    def _build_model(self):
        backbone = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 128))
        backbone = backbone.to(self.device)
        if self.world_size > 1:
            backbone = DistributedDataParallel(backbone)
        return backbone

    def _loader(self):
        dataset = TensorDataset(torch.randn(1024, 3, 32, 32))
        sampler = DistributedSampler(dataset) if self.world_size > 1 else None
        return DataLoader(dataset, batch_size=self.config["batch_size"], sampler=sampler, shuffle=sampler is None), sampler

    def fit(self):
        loader, sampler = self._loader()
        for epoch in range(self.config["epochs"]):
            if sampler is not None:
                sampler.set_epoch(epoch)
            for (x,) in loader:
                x = x.to(self.device, non_blocking=True)
                z1, z2 = self.model(x), self.model(x.flip(-1))
                loss = -nn.functional.cosine_similarity(z1, z2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    BaseTrainer({"lr": 0.05, "batch_size": 256, "epochs": 100}).fit()
