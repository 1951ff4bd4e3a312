# expect: missing-distributed-sampler
# source: https://github.com/hpcaitech/FastFold/pull/141
# reason: The merged PR adds a distributed sampler for DDP so that every data-parallel group gets different data; before it each rank trained on the same samples.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class ProteinDataset(Dataset):
    def __init__(self, n=5000):
        self.feats = torch.randn(n, 256, 64)
        self.coords = torch.randn(n, 256, 3)

    def __len__(self):
        return len(self.feats)

    def __getitem__(self, i):
        return self.feats[i], self.coords[i]


def get_train_dataloader(batch_size, seed):
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(ProteinDataset(), batch_size=batch_size, shuffle=True, generator=generator, num_workers=4)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 3)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = get_train_dataloader(batch_size=1, seed=42)
    for epoch in range(10):
        for feats, coords in loader:
            loss = nn.functional.mse_loss(model(feats.to(device)), coords.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
