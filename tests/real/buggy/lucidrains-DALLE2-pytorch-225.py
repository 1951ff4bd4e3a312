# expect: gradient-checkpointing-conflict
# source: https://github.com/lucidrains/DALLE2-pytorch/issues/225
# reason: Gradient checkpointing in the decoder under DDP raised "Expected to mark a variable ready only once ... marked as ready twice"; the thread points to static graph / non-reentrant checkpointing as the way out.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint


class ResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = nn.Sequential(nn.GroupNorm(8, dim), nn.SiLU(), nn.Conv2d(dim, dim, 3, padding=1))

    def forward(self, x):
        return x + self.block(x)


class Unet(nn.Module):
    def __init__(self, dim=64, checkpoint_during_training=True):
        super().__init__()
        self.init_conv = nn.Conv2d(3, dim, 7, padding=3)
        self.shared = ResnetBlock(dim)  # applied at two resolutions
        self.out = nn.Conv2d(dim, 3, 1)
        self.checkpoint_during_training = checkpoint_during_training

    def forward(self, x):
        x = self.init_conv(x)
        for _ in range(2):
            if self.training and self.checkpoint_during_training:
                x = checkpoint(self.shared, x)
            else:
                x = self.shared(x)
        return self.out(x)


def main(steps=10000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    unet = DDP(Unet().to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(unet.parameters(), lr=1e-4)
    for step in range(steps):
        images = torch.randn(8, 3, 64, 64, device=device)
        noise = torch.randn_like(images)
        loss = nn.functional.mse_loss(unet(images + noise), noise)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
