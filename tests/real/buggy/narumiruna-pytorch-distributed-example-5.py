# expect: missing-distributed-sampler
# source: https://github.com/narumiruna/pytorch-distributed-example/issues/5
# reason: The training loader built in get_dataloader() shuffles the whole dataset in every process, so each rank trains on the same images; the maintainer's fix (commit 3cfcb96) builds it with a DistributedSampler.
import argparse

import torch
import torch.nn.functional as F
from torch import distributed, nn
from torch.utils import data
from torchvision import datasets, transforms


class Trainer:
    def __init__(self, net, optimizer, train_loader, device):
        self.net = net
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.device = device

    def train(self):
        self.net.train()
        total = 0.0
        for images, labels in self.train_loader:
            images, labels = images.to(self.device), labels.to(self.device)
            loss = F.cross_entropy(self.net(images), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.average_gradients()
            self.optimizer.step()
            total += loss.item()
        return total

    def average_gradients(self):
        world_size = distributed.get_world_size()
        for param in self.net.parameters():
            grad = param.grad.data.cpu()
            distributed.all_reduce(grad, op=distributed.ReduceOp.SUM)
            grad /= float(world_size)
            param.grad.data = grad.to(self.device)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


def get_dataloader(root, batch_size):
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_loader = data.DataLoader(
        datasets.MNIST(root, train=True, transform=transform, download=True),
        batch_size=batch_size,
        shuffle=True)
    return train_loader


def solve(args):
    device = torch.device("cuda" if args.cuda else "cpu")
    net = Net().to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    train_loader = get_dataloader(args.root, args.batch_size)
    trainer = Trainer(net, optimizer, train_loader, device)
    for _ in range(args.epochs):
        trainer.train()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--init-method", default="tcp://127.0.0.1:23456")
    parser.add_argument("--rank", type=int)
    parser.add_argument("--world-size", type=int)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--no-cuda", action="store_true")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--root", default="data")
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args()
    args.cuda = torch.cuda.is_available() and not args.no_cuda
    distributed.init_process_group(backend=args.backend, init_method=args.init_method,
                                   rank=args.rank, world_size=args.world_size)
    solve(args)


if __name__ == "__main__":
    main()
