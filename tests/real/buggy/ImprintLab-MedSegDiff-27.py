# expect: unused-parameters-error
# source: https://github.com/ImprintLab/MedSegDiff/issues/27
# reason: DDP training stopped with "Expected to have finished reduction in the prior iteration before starting a new one": the network defines a parameterized layer in __init__ that its forward never uses, as the maintainer pointed out.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ResBlock(nn.Module):
    def __init__(self, channels, emb_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.emb = nn.Linear(emb_channels, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, emb):
        h = F.silu(self.conv1(x)) + self.emb(emb)[:, :, None, None]
        return x + self.conv2(F.silu(h))


class UNetModel(nn.Module):
    def __init__(self, channels=64, emb_channels=256):
        super().__init__()
        self.time_embed = nn.Sequential(nn.Linear(1, emb_channels), nn.SiLU(), nn.Linear(emb_channels, emb_channels))
        self.inp = nn.Conv2d(4, channels, 3, padding=1)
        self.blocks = nn.ModuleList([ResBlock(channels, emb_channels) for _ in range(4)])
        self.hwm = nn.Conv2d(channels, channels, 1)  # conditioning branch, never called in forward
        self.out = nn.Conv2d(channels, 1, 3, padding=1)

    def forward(self, x, timesteps):
        emb = self.time_embed(timesteps[:, None].float())
        h = self.inp(x)
        for block in self.blocks:
            h = block(h, emb)
        return self.out(h)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(UNetModel().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dataset = TensorDataset(torch.randn(1024, 4, 64, 64), torch.randn(1024, 1, 64, 64))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for image, noise in loader:
            image, noise = image.cuda(), noise.cuda()
            t = torch.randint(0, 1000, (image.shape[0],), device=image.device)
            loss = F.mse_loss(model(image, t), noise)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
