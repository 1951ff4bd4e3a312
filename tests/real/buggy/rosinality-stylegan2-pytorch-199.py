# expect: missing-set-epoch
# source: https://github.com/rosinality/stylegan2-pytorch/issues/199
# reason: The DistributedSampler built by data_sampler() is drained through an endless sample_data() generator and set_epoch is never called, so every pass over the data repeats the same order; the maintainer confirmed it was missed.
import argparse

import torch
from torch import distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils import data


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
    while True:
        for batch in loader:
            yield batch


class Generator(nn.Module):
    def __init__(self, latent=64, size=32):
        super().__init__()
        self.size = size
        self.net = nn.Linear(latent, 3 * size * size)

    def forward(self, z):
        return self.net(z).view(z.size(0), 3, self.size, self.size)


class Discriminator(nn.Module):
    def __init__(self, size=32):
        super().__init__()
        self.net = nn.Linear(3 * size * size, 1)

    def forward(self, x):
        return self.net(x.flatten(1))


def train(args, loader, generator, discriminator, g_optim, d_optim, device):
    loader = sample_data(loader)
    for idx in range(args.iter):
        real_img = next(loader).to(device)
        noise = torch.randn(real_img.size(0), 64, device=device)

        d_loss = F.softplus(discriminator(generator(noise).detach())).mean() + F.softplus(-discriminator(real_img)).mean()
        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()

        g_loss = F.softplus(-discriminator(generator(noise))).mean()
        g_optim.zero_grad()
        g_loss.backward()
        g_optim.step()

        if get_rank() == 0 and idx % 100 == 0:
            print(f"{idx}: d {d_loss.item():.4f} g {g_loss.item():.4f}")


def main():
    device = "cuda"
    parser = argparse.ArgumentParser()
    parser.add_argument("--iter", type=int, default=800000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()

    n_gpu = torch.cuda.device_count()
    args.distributed = n_gpu > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        synchronize()

    generator = Generator().to(device)
    discriminator = Discriminator().to(device)
    g_optim = torch.optim.Adam(generator.parameters(), lr=0.002, betas=(0, 0.99))
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=0.002, betas=(0, 0.99))

    if args.distributed:
        generator = nn.parallel.DistributedDataParallel(
            generator, device_ids=[args.local_rank], output_device=args.local_rank, broadcast_buffers=False)
        discriminator = nn.parallel.DistributedDataParallel(
            discriminator, device_ids=[args.local_rank], output_device=args.local_rank, broadcast_buffers=False)

    dataset = torch.randn(10000, 3, 32, 32)
    loader = data.DataLoader(
        dataset,
        batch_size=args.batch,
        sampler=data_sampler(dataset, shuffle=True, distributed=args.distributed),
        drop_last=True,
    )
    train(args, loader, generator, discriminator, g_optim, d_optim, device)


if __name__ == "__main__":
    main()
