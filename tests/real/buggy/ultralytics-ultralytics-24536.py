# expect: unused-parameters-error
# source: https://github.com/ultralytics/ultralytics/issues/24536
# reason: Multi-GPU training hung deterministically before the first validation: the detection head's per-scale branches only enter the loss when a batch assigns ground truth to that scale, so on a batch with no target at one scale those parameters got no gradient and DDP (built without find_unused_parameters) waited forever in its reducer; the maintainer's root cause, fixed by restoring find_unused_parameters=True.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MultiScaleDetector(nn.Module):
    def __init__(self, nc=80, ch=(64, 128, 256)):
        super().__init__()
        self.stem = nn.Conv2d(3, ch[0], 3, stride=2, padding=1)
        self.p4 = nn.Conv2d(ch[0], ch[1], 3, stride=2, padding=1)
        self.p5 = nn.Conv2d(ch[1], ch[2], 3, stride=2, padding=1)
        self.cls_p3 = nn.Conv2d(ch[0], nc, 1)
        self.cls_p4 = nn.Conv2d(ch[1], nc, 1)
        self.cls_p5 = nn.Conv2d(ch[2], nc, 1)

    def forward(self, images, targets):
        p3 = self.stem(images)
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        loss = p3.new_zeros(())
        if targets[:, 0].any():
            loss = loss + F.binary_cross_entropy_with_logits(self.cls_p3(p3).mean((2, 3)), targets[:, 0:1].expand(-1, 80))
        if targets[:, 1].any():
            loss = loss + F.binary_cross_entropy_with_logits(self.cls_p4(p4).mean((2, 3)), targets[:, 1:2].expand(-1, 80))
        if targets[:, 2].any():
            loss = loss + F.binary_cross_entropy_with_logits(self.cls_p5(p5).mean((2, 3)), targets[:, 2:3].expand(-1, 80))
        return loss


def main():
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = DDP(MultiScaleDetector().to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    dataset = TensorDataset(torch.randn(800, 3, 128, 128), (torch.rand(800, 3) > 0.7).float())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for images, targets in loader:
            loss = model(images.to(rank), targets.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
