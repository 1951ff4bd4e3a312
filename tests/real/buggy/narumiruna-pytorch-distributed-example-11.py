# expect: ddp-before-to-device
# source: https://github.com/narumiruna/pytorch-distributed-example/pull/11
# reason: The model was wrapped in DistributedDataParallel while still on the CPU and only moved with net.to(device) afterwards, which breaks GPU DDP; the merged fix moves the model to the device before the wrap.
import argparse

import torch
import torch.nn.functional as F
from torch import distributed, nn
from torch.utils import data
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


class Trainer:
    def __init__(self, net, optimizer, train_loader, device):
        self.net = net
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.device = device

    def fit(self, epochs):
        for epoch in range(1, epochs + 1):
            self.train_loader.sampler.set_epoch(epoch)
            self.train()

    def train(self):
        self.net.train()
        total = 0.0
        for images, labels in self.train_loader:
            images = images.to(self.device)
            labels = labels.to(self.device)
            loss = F.cross_entropy(self.net(images), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


def get_dataloader(root, batch_size):
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.MNIST(root, train=True, transform=transform, download=True)
    sampler = DistributedSampler(train_set)
    return data.DataLoader(train_set, batch_size=batch_size, shuffle=(sampler is None), sampler=sampler)


def run(args):
    use_cuda = torch.cuda.is_available() and not args.no_cuda
    device = torch.device("cuda" if use_cuda else "cpu")

    net = Net()
    net = nn.parallel.DistributedDataParallel(net)
    net.to(device)

    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    train_loader = get_dataloader(args.root, args.batch_size)
    Trainer(net, optimizer, train_loader, device).fit(args.epochs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("-i", "--init-method", default="tcp://127.0.0.1:23456")
    parser.add_argument("-r", "--rank", type=int)
    parser.add_argument("-s", "--world-size", type=int)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--no-cuda", action="store_true")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--root", default="data")
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args()
    distributed.init_process_group(backend=args.backend, init_method=args.init_method,
                                   rank=args.rank, world_size=args.world_size)
    run(args)


if __name__ == "__main__":
    main()
