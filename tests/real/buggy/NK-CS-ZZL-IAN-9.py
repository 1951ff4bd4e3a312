# expect: unused-parameters-error
# source: https://github.com/NK-CS-ZZL/IAN/issues/9
# reason: The Any2Any network defined three bottleneck blocks (bottleneck1, bottleneck2, bottleneck3) but its forward used only bottleneck1 (a shared bottleneck was found enough), so the other two had parameters that never got a gradient and were reported as unused under DDP; the maintainers confirmed and said to delete the unused blocks when training new models.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.LeakyReLU(0.2, inplace=True))


class Any2Any(nn.Module):
    def __init__(self, in_ch=3, width=32):
        super().__init__()
        self.enc1 = conv_block(in_ch, width)
        self.enc2 = conv_block(width, width * 2)
        self.enc3 = conv_block(width * 2, width * 4)
        self.bottleneck1 = conv_block(width * 4, width * 4)
        self.bottleneck2 = conv_block(width * 4, width * 4)
        self.bottleneck3 = conv_block(width * 4, width * 4)
        self.dec3 = conv_block(width * 8, width * 2)
        self.dec2 = conv_block(width * 4, width)
        self.dec1 = conv_block(width * 2, width)
        self.out = nn.Conv2d(width, in_ch, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        b = self.bottleneck1(e3)
        d3 = self.dec3(torch.cat([b, e3], 1))
        d2 = self.dec2(torch.cat([F.interpolate(d3, scale_factor=2), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2), e1], 1))
        return self.out(d1)


class RelightPairs(Dataset):
    def __len__(self):
        return 2000

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, 64, 64, generator=g), torch.rand(3, 64, 64, generator=g)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", default="pytorch")
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    net = Any2Any().cuda()
    net = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.Adam(net.parameters(), lr=2e-4, betas=(0.9, 0.99))
    dataset = RelightPairs()
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4, drop_last=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for src, tgt in loader:
            pred = net(src.cuda(non_blocking=True))
            loss = F.l1_loss(pred, tgt.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(net.module.state_dict(), f"any2any_{epoch}.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
