# expect: batchnorm-not-synced
# source: https://github.com/LibreYOLO/libreyolo/pull/531
# reason: Multi-GPU training split the global batch across ranks but kept plain BatchNorm, so each rank tracked statistics of its own small shard and only rank 0's buffers were saved, degrading the model against single-GPU training; the merged fix converts to SyncBatchNorm under DDP.
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class DetectorConfig:
    batch: int = 16
    epochs: int = 300
    lr: float = 0.01


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(conv_block(3, 32), conv_block(32, 64), conv_block(64, 128))
        self.head = nn.Conv2d(128, 85, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


class DetectionTrainer:
    def __init__(self, cfg: DetectorConfig):
        self.cfg = cfg
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        per_rank = cfg.batch // dist.get_world_size()
        data = TensorDataset(torch.randn(512, 3, 64, 64))
        self.sampler = DistributedSampler(data)
        self.loader = DataLoader(data, batch_size=per_rank, sampler=self.sampler)
        self.model = DistributedDataParallel(TinyDetector().cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg.lr, momentum=0.937)

    def train(self):
        for epoch in range(self.cfg.epochs):
            self.sampler.set_epoch(epoch)
            for (images,) in self.loader:
                loss = self.model(images.cuda(non_blocking=True)).abs().mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    DetectionTrainer(DetectorConfig()).train()
