# expect: missing-distributed-sampler
# source: https://github.com/kubeflow/trainer/pull/2012
# reason: The PyTorchJob MNIST examples initialised the process group and wrapped the model in DistributedDataParallel on every worker but built the training DataLoader with shuffle=True and no DistributedSampler, so each worker trained on the whole dataset; the merged fix passes DistributedSampler(dataset) so each worker processes its own chunk.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

WORLD_SIZE = int(os.environ.get("WORLD_SIZE", 1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5, 1)
        self.conv2 = nn.Conv2d(20, 50, 5, 1)
        self.fc1 = nn.Linear(4 * 4 * 50, 500)
        self.fc2 = nn.Linear(500, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
        x = F.relu(self.fc1(x.view(-1, 4 * 4 * 50)))
        return F.log_softmax(self.fc2(x), dim=1)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}]\tloss={loss.item():.4f}")


def should_distribute():
    return dist.is_available() and WORLD_SIZE > 1


def is_distributed():
    return dist.is_available() and dist.is_initialized()


def main():
    parser = argparse.ArgumentParser(description="PyTorchJob MNIST example")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--no-cuda", action="store_true", default=False)
    parser.add_argument("--log-interval", type=int, default=10)
    parser.add_argument("--backend", type=str, default=dist.Backend.GLOO,
                        choices=[dist.Backend.GLOO, dist.Backend.NCCL, dist.Backend.MPI])
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")

    if should_distribute():
        print(f"Using distributed PyTorch with {args.backend} backend")
        dist.init_process_group(backend=args.backend)

    kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
    train_set = TensorDataset(torch.randn(60000, 1, 28, 28), torch.randint(0, 10, (60000,)))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, **kwargs)

    model = Net().to(device)
    if is_distributed():
        model = nn.parallel.DistributedDataParallel(model)

    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)


if __name__ == "__main__":
    main()
