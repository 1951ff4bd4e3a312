# expect: batchnorm-not-synced
# source: https://github.com/MarkAny-Vision-AI/CenterNeXt/issues/5
# reason: DDP training of a ResNet-18 detector lost mAP; training with SyncBatchNorm (plus per-rank batch division) recovered it, as the thread's checklist records.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class CenterNet(nn.Module):
    def __init__(self, num_classes=20):
        super().__init__()
        backbone = torchvision.models.resnet18()
        self.backbone = nn.Sequential(*list(backbone.children())[:-2])
        self.head = nn.Sequential(nn.Conv2d(512, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.Conv2d(64, num_classes + 4, 1))

    def forward(self, x):
        return self.head(self.backbone(x))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = CenterNet().to(device)
    model = DDP(model, device_ids=[local_rank])
    data = TensorDataset(torch.randn(1000, 3, 512, 512), torch.randn(1000, 24, 16, 16))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(140):
        sampler.set_epoch(epoch)
        for images, targets in loader:
            loss = nn.functional.mse_loss(model(images.to(device)), targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
