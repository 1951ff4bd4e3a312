# expect: hardcoded-cuda0
# source: https://github.com/rosinality/stylegan2-pytorch/issues/36
# reason: Resuming distributed training with --ckpt loaded the checkpoint with torch.load(args.ckpt) and no map_location: every process put the saved generator/discriminator tensors on GPU 0 (where they were saved), so the primary GPU held a copy per process and could not fit a larger batch; the maintainer pointed to map_location and the reporter confirmed it fixed the memory.
import argparse
import os

import torch
from torch import nn, optim
from torch.nn import functional as F
from torch.utils import data
import torch.distributed as dist


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


def synchronize():
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
    if shuffle:
        return data.RandomSampler(dataset)
    return data.SequentialSampler(dataset)


def sample_data(loader):
    epoch = 0
    while True:
        if isinstance(loader.sampler, data.distributed.DistributedSampler):
            loader.sampler.set_epoch(epoch)
        for batch in loader:
            yield batch
        epoch += 1


class Generator(nn.Module):
    def __init__(self, latent=128, size=32):
        super().__init__()
        self.size = size
        self.net = nn.Sequential(nn.Linear(latent, 256), nn.LeakyReLU(0.2), nn.Linear(256, 3 * size * size))

    def forward(self, z):
        return self.net(z).view(-1, 3, self.size, self.size)


class Discriminator(nn.Module):
    def __init__(self, size=32):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * size * size, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1))

    def forward(self, x):
        return self.net(x)


def train(args, loader, generator, discriminator, g_optim, d_optim, device):
    loader = sample_data(loader)
    g_module = generator.module if args.distributed else generator
    d_module = discriminator.module if args.distributed else discriminator
    for i in range(args.start_iter, args.iter):
        real_img = next(loader).to(device)
        noise = torch.randn(args.batch, 128, device=device)
        fake_img = generator(noise)
        d_loss = F.softplus(discriminator(fake_img.detach())).mean() + F.softplus(-discriminator(real_img)).mean()
        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()
        g_loss = F.softplus(-discriminator(generator(noise))).mean()
        g_optim.zero_grad()
        g_loss.backward()
        g_optim.step()
        if get_rank() == 0 and i % 1000 == 0:
            torch.save({"g": g_module.state_dict(), "d": d_module.state_dict(),
                        "g_optim": g_optim.state_dict(), "d_optim": d_optim.state_dict()},
                       f"checkpoint/{str(i).zfill(6)}.pt")


if __name__ == "__main__":
    device = "cuda"
    parser = argparse.ArgumentParser()
    parser.add_argument("path", type=str)
    parser.add_argument("--iter", type=int, default=800000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--ckpt", type=str, default=None)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()

    n_gpu = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    args.distributed = n_gpu > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        synchronize()

    args.start_iter = 0
    generator = Generator().to(device)
    discriminator = Discriminator().to(device)
    g_optim = optim.Adam(generator.parameters(), lr=args.lr, betas=(0, 0.99))
    d_optim = optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0, 0.99))

    if args.ckpt is not None:
        print("load model:", args.ckpt)
        ckpt = torch.load(args.ckpt)
        args.start_iter = int(os.path.splitext(os.path.basename(args.ckpt))[0])
        generator.load_state_dict(ckpt["g"])
        discriminator.load_state_dict(ckpt["d"])
        g_optim.load_state_dict(ckpt["g_optim"])
        d_optim.load_state_dict(ckpt["d_optim"])

    if args.distributed:
        generator = nn.parallel.DistributedDataParallel(
            generator, device_ids=[args.local_rank], output_device=args.local_rank, broadcast_buffers=False)
        discriminator = nn.parallel.DistributedDataParallel(
            discriminator, device_ids=[args.local_rank], output_device=args.local_rank, broadcast_buffers=False)

    dataset = torch.randn(4096, 3, 32, 32)
    loader = data.DataLoader(dataset, batch_size=args.batch,
                             sampler=data_sampler(dataset, shuffle=True, distributed=args.distributed),
                             drop_last=True)
    train(args, loader, generator, discriminator, g_optim, d_optim, device)
