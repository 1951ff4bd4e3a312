# expect: unused-parameters-error
# source: https://github.com/Project-MONAI/GenerativeModels/issues/402
# reason: The diffusion UNet's attention block builds a projection layer (proj_attn) that its forward never calls, so under DDP those parameters get no gradient and training fails with 'Parameters which did not receive grad ... attention.proj_attn.weight'; the maintainers confirmed the layer is created but not used at all (MONAI issue 7991).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class AttentionBlock(nn.Module):
    def __init__(self, num_channels, num_head_channels=32):
        super().__init__()
        self.num_heads = num_channels // num_head_channels
        self.norm = nn.GroupNorm(8, num_channels)
        self.to_q = nn.Linear(num_channels, num_channels)
        self.to_k = nn.Linear(num_channels, num_channels)
        self.to_v = nn.Linear(num_channels, num_channels)
        self.proj_attn = nn.Linear(num_channels, num_channels)

    def forward(self, x):
        b, c, h, w = x.shape
        residual = x
        x = self.norm(x).view(b, c, h * w).transpose(1, 2)
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        attn = torch.softmax(q @ k.transpose(1, 2) / c ** 0.5, dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(b, c, h, w)
        return x + residual


class ResBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(F.silu(self.conv1(F.silu(x))))


class SmallDiffusionUNet(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.conv_in = nn.Conv2d(1, channels, 3, padding=1)
        self.down = ResBlock(channels)
        self.middle_attention = AttentionBlock(channels)
        self.up = ResBlock(channels)
        self.conv_out = nn.Conv2d(channels, 1, 3, padding=1)

    def forward(self, x):
        h = self.conv_in(x)
        h = self.down(h)
        h = self.middle_attention(h)
        h = self.up(h)
        return self.conv_out(h)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(SmallDiffusionUNet().to(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2.5e-5)
    data = TensorDataset(torch.randn(512, 1, 32, 32))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for (images,) in loader:
            images = images.to(local_rank)
            noise = torch.randn_like(images)
            loss = F.mse_loss(model(images + noise), noise)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
