# expect: unused-parameters-error
# source: https://github.com/ultralytics/ultralytics/pull/24620
# reason: The YOLO26 detection model kept a flow_model sub-module that its forward never ran, and the trainer's DDP wrap had dropped find_unused_parameters (static_graph only under compile), so multi-GPU training failed with parameters that did not receive grad; the merged fix re-added find_unused_parameters and the thread confirmed the unused flow_model as the cause.
import os
from types import SimpleNamespace

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))


class Conv(nn.Module):
    def __init__(self, c1, c2, k=3, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


class FlowHead(nn.Module):
    def __init__(self, c, steps=4):
        super().__init__()
        self.steps = nn.ModuleList(Conv(c, c) for _ in range(steps))

    def forward(self, x):
        for step in self.steps:
            x = x + step(x)
        return x


class DetectionModel(nn.Module):
    def __init__(self, nc=80, width=64):
        super().__init__()
        self.backbone = nn.Sequential(Conv(3, width, s=2), Conv(width, width * 2, s=2), Conv(width * 2, width * 4, s=2))
        self.head = nn.Conv2d(width * 4, nc + 4, 1)
        self.flow_model = FlowHead(width * 4)

    def forward(self, x):
        return self.head(self.backbone(x))


class DetectionTrainer:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda", LOCAL_RANK)
        self.model = DetectionModel().to(self.device)

    def _setup_ddp(self):
        torch.cuda.set_device(LOCAL_RANK)
        dist.init_process_group(backend="nccl", rank=RANK, world_size=WORLD_SIZE)

    def _setup_train(self):
        if WORLD_SIZE > 1:
            self._setup_ddp()
            self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[LOCAL_RANK],
                                                             static_graph=bool(self.args.compile))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.937)
        dataset = TensorDataset(torch.randn(1024, 3, 128, 128), torch.randn(1024, 84, 16, 16))
        self.sampler = DistributedSampler(dataset) if WORLD_SIZE > 1 else None
        self.train_loader = DataLoader(dataset, batch_size=16, sampler=self.sampler, shuffle=self.sampler is None)

    def train(self):
        self._setup_train()
        for epoch in range(self.args.epochs):
            if self.sampler is not None:
                self.sampler.set_epoch(epoch)
            for imgs, targets in self.train_loader:
                preds = self.model(imgs.to(self.device))
                loss = F.mse_loss(preds, targets.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        if WORLD_SIZE > 1:
            dist.destroy_process_group()


if __name__ == "__main__":
    DetectionTrainer(SimpleNamespace(epochs=100, compile=False)).train()
