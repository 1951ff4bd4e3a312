# expect: hardcoded-cuda0
# source: https://github.com/Peterande/D-FINE/issues/289
# reason: NCCL failed with "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device"; the reporter had set one default GPU for the device in train.py while debugging, so every rank used that card, and restoring the original per-rank device fixed it.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup_distributed():
    dist.init_process_group(backend="nccl", init_method="env://")
    return dist.get_rank(), int(os.environ["LOCAL_RANK"])


def main(args):
    rank, local_rank = setup_distributed()
    torch.cuda.set_device(1)
    device = torch.device("cuda:1")
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(32, 80)).to(device)
    model = DDP(model, device_ids=[device])
    data = TensorDataset(torch.randn(4096, 3, 64, 64), torch.randint(0, 80, (4096,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--epochs", type=int, default=72)
    main(p.parse_args())
