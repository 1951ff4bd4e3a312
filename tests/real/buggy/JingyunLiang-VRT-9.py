# expect: gradient-checkpointing-conflict
# source: https://github.com/JingyunLiang/VRT/issues/9
# reason: Training with use_checkpoint_attn=True under DistributedDataParallel failed: the attention blocks are run through torch.utils.checkpoint (reentrant) while DDP was built with find_unused_parameters=True; the author's fix was find_unused_parameters=False plus DDP's static graph.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.checkpoint as checkpoint
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class WindowAttentionBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        h = self.norm(x)
        x = x + self.attn(h, h, h)[0]
        return x + self.mlp(x)


class ResidualGroup(nn.Module):
    def __init__(self, dim, depth, use_checkpoint_attn=False):
        super().__init__()
        self.use_checkpoint_attn = use_checkpoint_attn
        self.blocks = nn.ModuleList(WindowAttentionBlock(dim) for _ in range(depth))

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint_attn:
                x = checkpoint.checkpoint(blk, x)
            else:
                x = blk(x)
        return x


class VideoRestorer(nn.Module):
    def __init__(self, dim=64, use_checkpoint_attn=True):
        super().__init__()
        self.embed = nn.Linear(48, dim)
        self.residual_group1 = ResidualGroup(dim, 4)
        self.residual_group2 = ResidualGroup(dim, 4, use_checkpoint_attn=use_checkpoint_attn)
        self.head = nn.Linear(dim, 48)

    def forward(self, lq):
        x = self.embed(lq)
        x = self.residual_group2(self.residual_group1(x))
        return lq + self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--find_unused_parameters", type=bool, default=True)
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", args.local_rank)
    net = VideoRestorer(use_checkpoint_attn=True).to(device)
    net = DistributedDataParallel(net, device_ids=[args.local_rank],
                                  find_unused_parameters=args.find_unused_parameters)
    data = TensorDataset(torch.randn(512, 64, 48), torch.randn(512, 64, 48))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    optimizer = torch.optim.Adam(net.parameters(), lr=4e-4)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for lq, gt in loader:
            loss = nn.functional.l1_loss(net(lq.to(device)), gt.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
