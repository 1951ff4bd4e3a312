# expect: missing-distributed-sampler
# source: https://github.com/PatrickHua/SimSiam/issues/16
# reason: Under DDP the training loader kept shuffle=True with no DistributedSampler, so every GPU walked the whole dataset each epoch; the maintainer acknowledged it and changed the code.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--batch_size", type=int, default=256)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--base_lr", type=float, default=0.03)
    p.add_argument("--num_epochs", type=int, default=800)
    return p.parse_args()


class TwoViews(Dataset):
    """Returns two noisy views of the same image, like the augmentation pipeline does."""

    def __init__(self, n=50000):
        self.images = torch.randn(n, 3, 32, 32)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i]
        return (x + 0.1 * torch.randn_like(x), torch.flip(x, dims=[2])), 0


class SimSiam(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                      nn.Linear(64, dim))
        self.projector = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.predictor = nn.Sequential(nn.Linear(dim, dim // 4), nn.ReLU(), nn.Linear(dim // 4, dim))

    def forward(self, x1, x2):
        z1, z2 = self.projector(self.backbone(x1)), self.projector(self.backbone(x2))
        p1, p2 = self.predictor(z1), self.predictor(z2)
        return -(F.cosine_similarity(p1, z2.detach()).mean() + F.cosine_similarity(p2, z1.detach()).mean()) / 2


def main(args):
    train_loader = DataLoader(dataset=TwoViews(), batch_size=args.batch_size, shuffle=True,
                              num_workers=args.num_workers, pin_memory=True, drop_last=True)
    torch.cuda.set_device(args.local_rank)
    torch.distributed.init_process_group(backend="nccl", init_method="env://")
    device = torch.device("cuda", args.local_rank)
    model = SimSiam().to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr * args.batch_size / 256, momentum=0.9)
    for epoch in range(args.num_epochs):
        model.train()
        for (images1, images2), _ in train_loader:
            model.zero_grad()
            loss = model(images1.to(device), images2.to(device))
            loss.backward()
            optimizer.step()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(get_args())
