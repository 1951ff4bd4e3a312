# expect: unused-parameters-error
# source: https://github.com/lucidrains/imagen-pytorch/issues/75
# reason: DDP training reported "Parameters which did not receive grad" for final_res_block.time_mlp: the UNet called its final ResnetBlock without the time embedding, and the block applies its time MLP only when one is passed, so those parameters never got a gradient; the maintainer fixed the call (and the other unused layers).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def exists(val):
    return val is not None


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_cond_dim=None):
        super().__init__()
        self.time_mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_cond_dim, dim_out * 2)) if exists(time_cond_dim) else None
        self.block1 = nn.Sequential(nn.GroupNorm(8, dim), nn.SiLU(), nn.Conv2d(dim, dim_out, 3, padding=1))
        self.block2 = nn.Sequential(nn.GroupNorm(8, dim_out), nn.SiLU(), nn.Conv2d(dim_out, dim_out, 3, padding=1))
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        h = self.block1(x)
        if exists(self.time_mlp) and exists(time_emb):
            scale, shift = self.time_mlp(time_emb)[:, :, None, None].chunk(2, dim=1)
            h = h * (scale + 1) + shift
        return self.block2(h) + self.res_conv(x)


class Unet(nn.Module):
    def __init__(self, dim=64, time_cond_dim=256):
        super().__init__()
        self.to_time_hiddens = nn.Sequential(nn.Linear(1, time_cond_dim), nn.SiLU())
        self.init_conv = nn.Conv2d(3, dim, 7, padding=3)
        self.mid_block = ResnetBlock(dim, dim, time_cond_dim=time_cond_dim)
        self.final_res_block = ResnetBlock(dim, dim, time_cond_dim=time_cond_dim)
        self.final_conv = nn.Conv2d(dim, 3, 3, padding=1)

    def forward(self, x, times):
        t = self.to_time_hiddens(times[:, None])
        x = self.init_conv(x)
        x = self.mid_block(x, t)
        x = self.final_res_block(x)
        return self.final_conv(x)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    unet = DDP(Unet().cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(2000, 3, 64, 64))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optimizer = torch.optim.Adam(unet.parameters(), lr=1e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for (images,) in loader:
            images = images.cuda()
            times = torch.rand(images.size(0), device=images.device)
            noise = torch.randn_like(images)
            loss = nn.functional.mse_loss(unet(images + times[:, None, None, None] * noise, times), noise)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
