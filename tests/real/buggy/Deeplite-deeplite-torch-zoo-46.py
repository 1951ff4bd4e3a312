# expect: hardcoded-cuda0
# source: https://github.com/Deeplite/deeplite-torch-zoo/pull/46
# reason: The training code pinned tensors and models to "cuda:0", which breaks multi-GPU training (every process works on GPU 0); the merged fix replaces every "cuda:0" with the process's current device.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="cuda:0")
    return parser.parse_args()


class YOLOLoss(nn.Module):
    def __init__(self, anchors, device="cuda:0"):
        super().__init__()
        self.anchors = torch.tensor(anchors, device=device)

    def forward(self, pred, target):
        return ((pred - target) ** 2).mean() + 0.0 * self.anchors.sum()


def train(args, local_rank):
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.LeakyReLU(0.1), nn.Conv2d(32, 255, 1)).to(args.device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    criterion = YOLOLoss([[10, 13], [16, 30], [33, 23]])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    dataset = TensorDataset(torch.randn(2000, 3, 64, 64), torch.randn(2000, 255, 64, 64))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, targets in loader:
            loss = criterion(model(images.to(args.device)), targets.to(args.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train(get_args(), local_rank)
