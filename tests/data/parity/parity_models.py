"""User model and data factories for the parity probe's tests: one healthy, each other injecting one fault.

Used as ``--model parity_models:NAME`` / ``--data parity_models:NAME`` with this folder on PYTHONPATH.
"""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


class Mlp(nn.Module):
    """A small regression MLP with dropout; its output's mean is the loss."""

    def __init__(self, norm: nn.Module | None = None):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.norm = norm or nn.Identity()
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(32, 1)
        self.example_input_array = torch.randn(8, 16)

    def forward(self, x):
        return self.out(self.drop(torch.relu(self.norm(self.inp(x))))) ** 2


def healthy():
    """Same seed, every parameter created before the wrap, mean loss: nothing to report."""
    return Mlp()


class LazyHead(Mlp):
    """Creates its output layer at the first forward, after DDP has wrapped (and broadcast) the model."""

    def __init__(self):
        super().__init__()
        del self.out

    def forward(self, x):
        if not hasattr(self, "head"):
            self.head = nn.Linear(32, 1)
        return self.head(torch.relu(self.inp(x))) ** 2


def created_after_wrap():
    """Per-rank seed (``manual_seed(rank)``) plus a layer created after the wrap."""
    model = LazyHead()
    torch.manual_seed(rank())
    return model


def batchnorm():
    """Plain BatchNorm1d under DDP: per-rank statistics."""
    return Mlp(nn.BatchNorm1d(32))


class Ema(Mlp):
    """Keeps a running mean of its input in a buffer, updated in place from the rank's own batch."""

    def __init__(self):
        super().__init__()
        self.register_buffer("input_ema", torch.zeros(16))

    def forward(self, x):
        with torch.no_grad():
            self.input_ema.mul_(0.9).add_(0.1 * x.mean(0))
        return super().forward(x)


def buffer_inplace():
    """A buffer changed in place outside DDP's broadcast."""
    return Ema()


def buffer_declared():
    """The same per-rank buffer, declared legitimate by the user."""
    model = Ema()
    model.parity_may_differ = ["input_ema"]
    return model


class WorldScaledLoss(Mlp):
    """Divides its loss by the world size "because DDP sums gradients" (it averages them)."""

    def forward(self, x):
        world = dist.get_world_size() if dist.is_initialized() else 1
        return {"loss": super().forward(x).mean() / world}


def loss_scaled_by_world():
    return WorldScaledLoss()


class LayerDrop(Mlp):
    """Skips its hidden layer at random (LayerDrop) with a per-rank random stream."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(32, 32)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        if torch.rand(()) < 0.5:
            h = torch.relu(self.hidden(h))
        return self.out(h) ** 2


def layerdrop_per_rank_rng():
    model = LayerDrop()
    torch.manual_seed(1000 + rank())
    return model


def _corrupt_on_rank1(state, bucket):
    """A DDP communication hook that averages, then adds 1 on rank 1: the all-reduce result differs by rank."""
    tensor = bucket.buffer().div_(dist.get_world_size())
    work = dist.all_reduce(tensor, async_op=True)

    def done(fut):
        out = fut.value()[0]
        return out + 1 if dist.get_rank() == 1 else out
    return work.get_future().then(done)


def corrupt_allreduce():
    """Every DDP built in this process gets the corrupting hook (stands in for a faulty link)."""
    if not getattr(DistributedDataParallel, "_parity_test_patched", False):
        original = DistributedDataParallel.__init__

        def patched(self, *args, **kwargs):
            original(self, *args, **kwargs)
            self.register_comm_hook(None, _corrupt_on_rank1)
        DistributedDataParallel.__init__ = patched
        DistributedDataParallel._parity_test_patched = True
    return Mlp()


def _dataset():
    g = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randn(64, 16, generator=g), torch.randn(64, 1, generator=g))


def loader_sharded():
    """DistributedSampler with shuffling: disjoint shards covering the data."""
    data = _dataset()
    return DataLoader(data, batch_size=8, sampler=DistributedSampler(data, shuffle=True))


def loader_no_sampler():
    """No DistributedSampler: every rank draws every sample."""
    return DataLoader(_dataset(), batch_size=8, shuffle=True)


class FrozenShuffle(torch.utils.data.Sampler):
    """Shards by rank and shuffles, but with a fixed seed and no set_epoch: the same order every epoch."""

    def __init__(self, size):
        self.size = size

    def __iter__(self):
        order = torch.randperm(self.size, generator=torch.Generator().manual_seed(0)).tolist()
        return iter(order[dist.get_rank()::dist.get_world_size()])

    def __len__(self):
        return self.size // dist.get_world_size()


def loader_frozen_order():
    data = _dataset()
    return DataLoader(data, batch_size=8, sampler=FrozenShuffle(len(data)))


class UnusedHead(Mlp):
    """Builds an auxiliary head that forward never calls."""

    def __init__(self):
        super().__init__()
        self.aux = nn.Linear(32, 4)


def unused_branch():
    return UnusedHead()


class SumLoss(Mlp):
    """A loss summed over the batch (reduction="sum"): its size grows with the batch."""

    def forward(self, x):
        return {"loss": super().forward(x).sum()}


def loss_sum_reduced():
    return SumLoss()


def dropout_per_rank_seed():
    """Healthy, with a per-rank seed after building: dropout masks differ by rank (normal under DDP)."""
    model = Mlp()
    torch.manual_seed(1000 + rank())
    return model
