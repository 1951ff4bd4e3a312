# expect: dataparallel
# Single process, several GPUs through nn.DataParallel.
import torch
from torch import nn


def build():
    return nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))


def main():
    net = build().cuda()
    if torch.cuda.device_count() > 1:
        net = nn.DataParallel(net)
    opt = torch.optim.Adam(net.parameters())
    for step in range(100):
        x = torch.randn(64, 128).cuda()
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
