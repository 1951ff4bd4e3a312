# expect: unused-parameters-error
# source: https://github.com/catalyst-team/catalyst/issues/1110
# reason: A stochastic-depth ResNet failed under DistributedDataParallel with "Expected to have finished reduction in the prior iteration": each step randomly skips whole residual blocks, so their parameters get no gradient on that step; the fix is find_unused_parameters=True in the DDP wrap.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class StochasticBlock(nn.Module):
    def __init__(self, channels, survival_prob):
        super().__init__()
        self.survival_prob = survival_prob
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        if self.training and torch.rand(1).item() > self.survival_prob:
            return x
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if not self.training:
            out = out * self.survival_prob
        return torch.relu(out + x)


class StochasticResNet(nn.Module):
    def __init__(self, num_blocks=18, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        probs = [1.0 - 0.5 * i / num_blocks for i in range(num_blocks)]
        self.blocks = nn.Sequential(*[StochasticBlock(16, p) for p in probs])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, num_classes))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def get_model(local_rank):
    model = nn.SyncBatchNorm.convert_sync_batchnorm(StochasticResNet()).cuda(local_rank)
    return nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    model = get_model(local_rank)
    data = TensorDataset(torch.randn(5000, 3, 32, 32), torch.randint(0, 10, (5000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=128, sampler=sampler, num_workers=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(50):
        sampler.set_epoch(epoch)
        model.train()
        for images, labels in loader:
            loss = criterion(model(images.cuda(local_rank)), labels.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
