# expect: dataparallel
# source: https://github.com/datapink/robosat.pink/issues/82
# reason: Multi-GPU training stopped scaling beyond 4 GPUs with utilisation around 50-70% because the tool wrapped the net in DataParallel; the maintainer agreed switching to DistributedDataParallel is the fix.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SemSegTiles(Dataset):
    def __init__(self, n_tiles=40000, channels=3, size=256):
        self.n, self.channels, self.size = n_tiles, channels, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        image = torch.rand(self.channels, self.size, self.size, generator=g)
        mask = (image.mean(0) > 0.5).long()
        return image, mask


def build_net(num_classes=2):
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(64, num_classes, 1),
    )


def train_epoch(loader, net, criterion, optimizer, device):
    net.train()
    running = 0.0
    for images, masks in loader:
        images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
        loss = criterion(net(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / len(loader)


def main(args):
    device = torch.device("cuda")
    net = build_net().to(device)
    if torch.cuda.device_count() > 1:
        net = torch.nn.DataParallel(net)
    loader = DataLoader(SemSegTiles(), batch_size=args.bs, shuffle=True, num_workers=args.workers, drop_last=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        loss = train_epoch(loader, net, criterion, optimizer, device)
        print(f"Epoch: {epoch + 1}/{args.epochs} train loss {loss:.3f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="rsp train")
    parser.add_argument("--bs", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=8)
    main(parser.parse_args())
