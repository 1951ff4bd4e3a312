# expect: missing-set-device
# source: https://github.com/marcoamonteiro/pi-GAN/issues/22
# reason: Every spawned process put a context and buffers on GPU 0 (DDP's initial broadcast ran there) because the worker never made its own GPU current; adding torch.cuda.set_device(rank) at the start of the training function fixed it for the users in the thread.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


class Generator(nn.Module):
    def __init__(self, z_dim=256):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(z_dim, 256), nn.LeakyReLU(0.2), nn.Linear(256, 256))
        self.siren = nn.Sequential(nn.Linear(3 + 256, 256), nn.ReLU(), nn.Linear(256, 4))

    def forward(self, z, points):
        style = self.mapping(z)[:, None].expand(-1, points.shape[1], -1)
        return self.siren(torch.cat([points, style], dim=-1))


def train(rank, world_size, opt):
    setup(rank, world_size, opt["port"])
    device = torch.device(rank)
    generator = Generator().to(device)
    generator_ddp = DDP(generator, device_ids=[rank], find_unused_parameters=True)
    optim = torch.optim.Adam(generator_ddp.parameters(), lr=6e-5, betas=(0, 0.9))
    for step in range(opt["steps"]):
        z = torch.randn(16, 256, device=device)
        pts = torch.rand(16, 1024, 3, device=device)
        loss = generator_ddp(z, pts).pow(2).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(train, args=(n, {"port": 12355, "steps": 1000}), nprocs=n, join=True)
