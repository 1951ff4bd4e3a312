# expect: loss-not-on-device
# source: https://github.com/open-mmlab/mmaction2/issues/1456
# reason: Setting class_weight in the loss raised "Expected all tensors to be on the same device": the weight tensor built in the loss module stayed on the CPU.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class CrossEntropyLoss(nn.Module):
    def __init__(self, loss_weight=1.0, class_weight=None):
        super().__init__()
        self.loss_weight = loss_weight
        self.class_weight = torch.Tensor(class_weight) if class_weight is not None else None

    def forward(self, cls_score, label):
        return self.loss_weight * F.cross_entropy(cls_score, label, weight=self.class_weight)


class Recognizer3D(nn.Module):
    def __init__(self, num_classes, class_weight):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv3d(3, 64, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten())
        self.cls_head = nn.Linear(64, num_classes)
        self.loss_cls = CrossEntropyLoss(class_weight=class_weight)

    def forward(self, imgs, label):
        return self.loss_cls(self.cls_head(self.backbone(imgs)), label)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = Recognizer3D(num_classes=3, class_weight=[1.0, 2.0, 5.0]).cuda()
    model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()], broadcast_buffers=False)
    data = TensorDataset(torch.randn(600, 3, 8, 112, 112), torch.randint(0, 3, (600,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for imgs, label in loader:
            loss = model(imgs.cuda(), label.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
