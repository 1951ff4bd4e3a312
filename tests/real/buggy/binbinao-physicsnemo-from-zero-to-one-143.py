# expect: missing-distributed-sampler
# source: https://github.com/binbinao/physicsnemo-from-zero-to-one/issues/143
# reason: The chapter's multi-GPU training script wrapped the model in DDP but built its DataLoader with shuffle=True and no DistributedSampler, so every rank saw the same data and DDP gave single-GPU progress; the repository's own review filed it as the bug to fix.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset


class DarcyPairs(Dataset):
    def __init__(self, n=1024, res=64):
        self.inputs = torch.randn(n, 1, res, res)
        self.targets = torch.randn(n, 1, res, res)

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        return self.inputs[i], self.targets[i]


def setup_distributed():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), local_rank


def make_loader(batch_size):
    return DataLoader(DarcyPairs(), batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=True)


def main():
    rank, local_rank = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.GELU(), nn.Conv2d(32, 1, 3, padding=1)).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = make_loader(batch_size=16)
    for epoch in range(50):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
