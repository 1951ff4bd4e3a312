# expect: dataparallel
# source: https://github.com/mapillary/inplace_abn/issues/83
# reason: The maintainer closed the issue after finding the large GPU imbalance was due to using DataParallel instead of DistributedDataParallel.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpus", default="0,1,2,3")
    args = p.parse_args()
    gpu_ids = [int(g) for g in args.gpus.split(",")]
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(64, 19, 1))
    net = nn.DataParallel(net, device_ids=gpu_ids).cuda()
    loader = DataLoader(TensorDataset(torch.randn(2975, 3, 512, 1024), torch.randint(0, 19, (2975, 512, 1024))),
                        batch_size=8, shuffle=True, num_workers=8)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(200):
        for img, label in loader:
            loss = nn.functional.cross_entropy(net(img.cuda()), label.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
