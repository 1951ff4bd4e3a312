# expect: dataparallel
# source: https://github.com/dbolya/yolact/issues/438
# reason: GPU utilisation was very low when training on 4 GPUs through the repository's DataParallel subclass; the reporter moved the training to DistributedDataParallel and reports a significant gain in speed and utilisation.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class COCODetectionStub(Dataset):
    def __len__(self):
        return 118287

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, 550, 550, generator=g), torch.randint(0, 81, (1,), generator=g)


def detection_collate(batch):
    images, targets = zip(*batch)
    return torch.stack(images), torch.cat(targets)


class Yolact(nn.Module):
    def __init__(self, num_classes=81):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.Conv2d(64, 256, 3, 2, 1), nn.ReLU())
        self.pred = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, num_classes))

    def forward(self, x):
        return self.pred(self.backbone(x))


class NetLoss(nn.Module):
    """Computes the loss inside forward so DataParallel can balance it across GPUs."""

    def __init__(self, net, criterion):
        super().__init__()
        self.net = net
        self.criterion = criterion

    def forward(self, images, targets):
        return self.criterion(self.net(images), targets)


class CustomDataParallel(nn.DataParallel):
    """Scatters the pre-split batch ourselves and averages the per-GPU losses."""

    def gather(self, outputs, output_device):
        return sum(o.to(output_device) for o in outputs) / len(outputs)


def train(args):
    net = Yolact()
    net.train()
    net_loss = CustomDataParallel(NetLoss(net, nn.CrossEntropyLoss())).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    loader = DataLoader(COCODetectionStub(), batch_size=args.batch_size, num_workers=args.num_workers,
                        shuffle=True, collate_fn=detection_collate, pin_memory=True)
    iteration = 0
    while iteration < args.max_iter:
        for images, targets in loader:
            loss = net_loss(images, targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            iteration += 1
            if iteration % 10 == 0:
                print(f"[{iteration:7d}] loss {loss.item():.3f}")
            if iteration >= args.max_iter:
                break


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--max_iter", type=int, default=800_000)
    train(parser.parse_args())
