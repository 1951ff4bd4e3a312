# expect: gradient-checkpointing-conflict, unnecessary-find-unused-parameters
# source: https://github.com/microsoft/FocalNet/issues/4
# reason: The use_checkpoint trick (reentrant torch.utils.checkpoint) failed under DDP with "Expected to mark a variable ready only once" while it worked on one GPU. Every parameter of this reduced model is used, so find_unused_parameters=True is also unnecessary here.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.checkpoint as checkpoint
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class FocalBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class BasicLayer(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([FocalBlock(dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x) if self.use_checkpoint else blk(x)
        return x


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Linear(96, 192), BasicLayer(192, 6, use_checkpoint=True), nn.Linear(192, 80)).to(device)
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
    data = TensorDataset(torch.randn(2000, 49, 96), torch.randn(2000, 49, 80))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(36):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device).requires_grad_()), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
