# expect: missing-distributed-sampler
# source: https://github.com/innnky/so-vits-svc/issues/70
# reason: mp.spawn training with one process per GPU but a plain shuffled loader: no speed-up until the reporter added a DistributedSampler.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class MelDataset(Dataset):
    def __init__(self, n=4096):
        self.items = torch.randn(n, 80)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], self.items[i].flip(0)


def run(rank, n_gpus, epochs):
    dist.init_process_group("nccl", init_method="env://", world_size=n_gpus, rank=rank)
    torch.cuda.set_device(rank)
    train_dataset = MelDataset()
    train_loader = DataLoader(train_dataset, batch_size=16, shuffle=True, num_workers=4, pin_memory=True)
    net = nn.Sequential(nn.Linear(80, 256), nn.ReLU(), nn.Linear(256, 80)).cuda(rank)
    net = DDP(net, device_ids=[rank])
    optim = torch.optim.AdamW(net.parameters(), 2e-4)
    for epoch in range(epochs):
        for x, y in train_loader:
            x, y = x.cuda(rank, non_blocking=True), y.cuda(rank, non_blocking=True)
            loss = nn.functional.l1_loss(net(x), y)
            optim.zero_grad()
            loss.backward()
            optim.step()
    dist.destroy_process_group()


def main():
    n_gpus = torch.cuda.device_count()
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "8001")
    mp.spawn(run, nprocs=n_gpus, args=(n_gpus, 100))


if __name__ == "__main__":
    main()
