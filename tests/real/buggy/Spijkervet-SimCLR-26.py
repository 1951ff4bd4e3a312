# expect: missing-set-epoch
# source: https://github.com/Spijkervet/SimCLR/pull/26
# reason: The merged PR calls train_sampler.set_epoch(epoch) before each epoch; the loop called train() without it, so every epoch reused one shuffle.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def nt_xent(z_i, z_j, temperature=0.5):
    z = nn.functional.normalize(torch.cat([z_i, z_j]), dim=1)
    sim = z @ z.t() / temperature
    n = z_i.shape[0]
    labels = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return nn.functional.cross_entropy(sim.fill_diagonal_(-1e9), labels)


def train(args, loader, model, optimizer):
    total = 0.0
    for x_i, x_j in loader:
        x_i, x_j = x_i.cuda(non_blocking=True), x_j.cuda(non_blocking=True)
        loss = nt_xent(model(x_i), model(x_j))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def main(gpu, args):
    dist.init_process_group("nccl", rank=gpu, world_size=args["world_size"])
    torch.cuda.set_device(gpu)
    ds = TensorDataset(torch.randn(8192, 512), torch.randn(8192, 512))
    train_sampler = DistributedSampler(ds, num_replicas=args["world_size"], rank=gpu, shuffle=True)
    loader = DataLoader(ds, batch_size=128, shuffle=False, sampler=train_sampler, drop_last=True, num_workers=8)
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 64)).cuda(gpu)
    model = DDP(model, device_ids=[gpu])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(args["epochs"]):
        loss_epoch = train(args, loader, model, optimizer)
        if gpu == 0:
            print(f"epoch {epoch} loss {loss_epoch:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "8000")
    world_size = torch.cuda.device_count()
    mp.spawn(main, args=({"world_size": world_size, "epochs": 100},), nprocs=world_size, join=True)
