# expect: unused-parameters-error
# source: https://github.com/facebookresearch/ClassyVision/pull/415
# reason: For architecture search each layer position holds several candidate modules and one is sampled per step, so the others' parameters get no gradient and DDP errors out; the fix exposes find_unused_parameters=True for the DDP wrap.
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MixedOp(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.candidates = nn.ModuleList([
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.Conv2d(channels, channels, 5, padding=2),
            nn.Sequential(nn.Conv2d(channels, channels, 1), nn.ReLU()),
        ])

    def forward(self, x):
        choice = random.randrange(len(self.candidates))
        return self.candidates[choice](x)


class SuperNet(nn.Module):
    def __init__(self, channels=32, depth=6, num_classes=100):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.cells = nn.Sequential(*[MixedOp(channels) for _ in range(depth)])
        self.classifier = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.cells(torch.relu(self.stem(x)))
        return self.classifier(x.mean(dim=(2, 3)))


def init_distributed_data_parallel_model(model, broadcast_buffers=False):
    local_rank = int(os.environ["LOCAL_RANK"])
    return nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank,
                                               broadcast_buffers=broadcast_buffers)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = init_distributed_data_parallel_model(SuperNet().cuda())
    data = TensorDataset(torch.randn(6000, 3, 32, 32), torch.randint(0, 100, (6000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(30):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
