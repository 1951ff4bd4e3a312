# expect: unsynced-init-seed
# source: https://github.com/bl0/moco/issues/4
# reason: The MoCo reproduction started one process per GPU with mp.spawn and built its encoders without ever seeding torch, so every rank initialised different weights; the maintainer acknowledged the missing seed and agreed to seed all processes before building the model.
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Encoder(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(64, dim)

    def forward(self, x):
        return F.normalize(self.fc(self.features(x)), dim=1)


class MemoryMoCo(nn.Module):
    def __init__(self, dim=128, queue_size=16384, temperature=0.07):
        super().__init__()
        self.temperature = temperature
        self.register_buffer("queue", F.normalize(torch.randn(queue_size, dim), dim=1))
        self.index = 0

    def forward(self, q, k):
        l_pos = (q * k).sum(dim=1, keepdim=True)
        l_neg = q @ self.queue.t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.temperature
        with torch.no_grad():
            n = k.shape[0]
            self.queue[self.index:self.index + n] = k
            self.index = (self.index + n) % self.queue.shape[0]
        return logits


def worker(gpu, ngpus, args):
    torch.cuda.set_device(gpu)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{args.port}", world_size=ngpus, rank=gpu)
    model = Encoder().cuda(gpu)
    model_ema = Encoder().cuda(gpu)
    model_ema.load_state_dict(model.state_dict())
    for p in model_ema.parameters():
        p.requires_grad = False
    contrast = MemoryMoCo().cuda(gpu)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    data = TensorDataset(torch.randn(4096, 3, 64, 64), torch.randn(4096, 3, 64, 64))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, num_workers=4, drop_last=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x_q, x_k in loader:
            x_q, x_k = x_q.cuda(gpu, non_blocking=True), x_k.cuda(gpu, non_blocking=True)
            q = model(x_q)
            with torch.no_grad():
                k = model_ema(x_k)
            logits = contrast(q, k)
            loss = F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for p, p_ema in zip(model.module.parameters(), model_ema.parameters()):
                    p_ema.mul_(0.999).add_(p.detach(), alpha=0.001)
        if gpu == 0:
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, os.path.join(args.out, "current.pth"))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser("moco training")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--port", type=int, default=23456)
    parser.add_argument("--out", default="output")
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()
    mp.spawn(worker, nprocs=ngpus, args=(ngpus, args))
