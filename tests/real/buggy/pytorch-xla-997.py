# expect: missing-distributed-sampler
# source: https://github.com/pytorch/xla/pull/997
# reason: The multi-core TPU training examples (one process per core started by xmp.spawn) built their training DataLoader with shuffle=True and no sampler, so every core iterated the whole dataset each epoch instead of its own shard; the merged fix adds a DistributedSampler over xm.xrt_world_size()/xm.get_ordinal() and the maintainers verified each shard then sees different data (different loss per core).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import DataLoader, TensorDataset


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)


def train_cifar(flags):
    train_dataset = TensorDataset(torch.randn(50000, 3, 32, 32), torch.randint(0, 10, (50000,)))
    test_dataset = TensorDataset(torch.randn(10000, 3, 32, 32), torch.randint(0, 10, (10000,)))
    train_loader = DataLoader(train_dataset, batch_size=flags.batch_size, shuffle=True,
                              num_workers=flags.num_workers, drop_last=True)
    test_loader = DataLoader(test_dataset, batch_size=flags.batch_size, shuffle=False,
                             num_workers=flags.num_workers)

    device = xm.xla_device()
    model = SmallConvNet().to(device)
    optimizer = optim.SGD(model.parameters(), lr=flags.lr * xm.xrt_world_size(), momentum=0.9)

    def train_loop_fn(loader):
        model.train()
        for step, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            xm.optimizer_step(optimizer)
            if step % flags.log_steps == 0:
                xm.master_print(f"step {step} loss {loss.item():.4f}")

    def test_loop_fn(loader):
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for data, target in loader:
                correct += model(data).argmax(dim=1).eq(target).sum().item()
                total += data.size(0)
        return 100.0 * correct / max(total, 1)

    for epoch in range(1, flags.num_epochs + 1):
        train_loop_fn(pl.ParallelLoader(train_loader, [device]).per_device_loader(device))
        accuracy = test_loop_fn(pl.ParallelLoader(test_loader, [device]).per_device_loader(device))
        xm.master_print(f"epoch {epoch} accuracy {accuracy:.2f}")


def _mp_fn(index, flags):
    torch.set_default_tensor_type("torch.FloatTensor")
    train_cifar(flags)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--num_epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--log_steps", type=int, default=20)
    parser.add_argument("--num_cores", type=int, default=8)
    FLAGS = parser.parse_args()
    xmp.spawn(_mp_fn, args=(FLAGS,), nprocs=FLAGS.num_cores)
