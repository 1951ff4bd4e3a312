# expect: batchnorm-not-synced
# source: https://github.com/ultralytics/yolov5/pull/401
# reason: With small per-GPU batches the DDP runs without SyncBatchNorm scored visibly lower; the thread's comparison shows SyncBN recovering accuracy.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def conv(c1, c2, k=3, s=1):
    return nn.Sequential(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())


class TinyYolo(nn.Module):
    def __init__(self, nc=80):
        super().__init__()
        self.body = nn.Sequential(conv(3, 32, 6, 2), conv(32, 64, 3, 2), conv(64, 128, 3, 2), conv(128, 256, 3, 2))
        self.detect = nn.Conv2d(256, 3 * (nc + 5), 1)

    def forward(self, x):
        return self.detect(self.body(x))


def train(opt):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    world = dist.get_world_size()
    device = torch.device("cuda", local_rank)
    batch_size = opt.total_batch_size // world
    model = TinyYolo().to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    data = TensorDataset(torch.randn(2000, 3, 640, 640), torch.randn(2000, 255, 40, 40))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=batch_size, sampler=sampler, num_workers=8, pin_memory=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
    for epoch in range(opt.epochs):
        sampler.set_epoch(epoch)
        for imgs, targets in loader:
            pred = model(imgs.to(device, non_blocking=True).float() / 255)
            loss = nn.functional.mse_loss(pred, targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--total-batch-size", type=int, default=64)
    train(p.parse_args())
