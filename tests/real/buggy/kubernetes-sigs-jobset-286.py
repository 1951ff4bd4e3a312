# expect: shuffle-with-sampler
# source: https://github.com/kubernetes-sigs/jobset/issues/286
# reason: The JobSet PyTorch MNIST example failed on every worker with "ValueError: sampler option is mutually exclusive with shuffle": the CUDA loader options dict carries 'shuffle': True and is unpacked into the training DataLoader together with sampler=DistributedSampler(...); the maintainers labelled it a bug in the example.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.log_softmax(self.fc2(x), dim=1)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in tqdm(enumerate(train_loader)):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}]\tLoss: {loss.item():.6f}")


def main():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--no-cuda", action="store_true", default=False)
    parser.add_argument("--log-interval", type=int, default=10)
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()

    torch.distributed.init_process_group(backend="gloo")
    device = "cpu" if not torch.cuda.is_available() else "cuda"

    train_kwargs = {"batch_size": args.batch_size}
    if use_cuda:
        cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
        train_kwargs.update(cuda_kwargs)

    model = torch.nn.parallel.DistributedDataParallel(CNN().to(device))

    train_set = TensorDataset(torch.rand(60000, 1, 28, 28), torch.randint(0, 10, (60000,)))
    train_sampler = DistributedSampler(dataset=train_set)
    train_loader = torch.utils.data.DataLoader(train_set, **train_kwargs, sampler=train_sampler)

    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train_sampler.set_epoch(epoch)
        train(args, model, device, train_loader, optimizer, epoch)
        scheduler.step()


if __name__ == "__main__":
    main()
