"""batch-size-mismatch (scan-recall8): a function parameter its docstring documents as the global batch, handed to
each rank's DataLoader unchanged (lightly-train#194: ``train_task(batch_size=...)`` documented "Global batch size",
the loader built with it under Fabric DDP). The docstring in Google (with or without a type), Sphinx or NumPy style,
the loader in the documented function or in a helper it calls; or an argument dataclass / pydantic field whose help
says so (HfArgumentParser-style ``field(metadata={"help": ...})``, ``Field(description=...)``). Near misses that stay quiet: a parameter documented
per device (its first sentence), one divided by the world size before the loader, or divided at the helper's call."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "batch-size-mismatch"

SCRIPT = '''
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset), drop_last=True)


def train(epochs=10, batch_size=256, lr=0.1):
    """Train the classifier.

{doc}
    """
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    model = DDP(nn.Linear(32, 10).cuda(), device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    dataset = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
{body}
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    train()
'''

GOOGLE = '''    Args:
        epochs: Number of epochs.
        batch_size: Global batch size. The batch size per device is the global batch size divided by the
            number of devices.
        lr: Learning rate.'''
GOOGLE_TYPED = '''    Args:
        epochs (int): Number of epochs.
        batch_size (int): Total batch size across all GPUs.
        lr (float): Learning rate.'''
SPHINX = '''    :param epochs: number of epochs
    :param int batch_size: the global batch size of one optimizer step
    :param lr: learning rate'''
NUMPY = '''    Parameters
    ----------
    epochs : int
        Number of epochs.
    batch_size : int
        Effective batch size, over all devices.
    lr : float
        Learning rate.'''
PER_DEVICE = '''    Args:
        batch_size: Batch size per GPU. The global batch size is batch_size * world_size.'''

IN_PLACE = '''    loader = DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset), drop_last=True)'''
THROUGH_HELPER = '''    loader = make_loader(dataset, batch_size)'''
DIVIDED_FIRST = '''    batch_size = batch_size // dist.get_world_size()
    loader = DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset), drop_last=True)'''
DIVIDED_AT_CALL = '''    loader = make_loader(dataset, batch_size // dist.get_world_size())'''

POSITIVE = {
    "google-in-place": (GOOGLE, IN_PLACE),
    "google-typed-through-helper": (GOOGLE_TYPED, THROUGH_HELPER),
    "sphinx-in-place": (SPHINX, IN_PLACE),
    "numpy-through-helper": (NUMPY, THROUGH_HELPER),
}

QUIET = {
    "documented-per-device": (PER_DEVICE, IN_PLACE),
    "divided-before-the-loader": (GOOGLE, DIVIDED_FIRST),
    "divided-at-the-helper-call": (GOOGLE, DIVIDED_AT_CALL),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_documented_global_batch_per_rank(tmp_path, name):
    doc, body = POSITIVE[name]
    assert ID in scan_ids(tmp_path, SCRIPT.format(doc=doc, body=body))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_documented_global_batch_near_misses(tmp_path, name):
    doc, body = QUIET[name]
    assert ID not in scan_ids(tmp_path, SCRIPT.format(doc=doc, body=body))


FIELD_SCRIPT = '''
import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
import torch.nn as nn
from pydantic import BaseModel, Field
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import HfArgumentParser


{config}


def main():
    (args,) = HfArgumentParser(TrainArgs).parse_args_into_dataclasses()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(1000, 8), torch.randint(0, 2, (1000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

DATACLASS_GLOBAL = '''@dataclass
class TrainArgs:
    batch_size: int = field(default=256, metadata={"help": "Total batch size across all GPUs."})'''
PYDANTIC_GLOBAL = '''class TrainArgs(BaseModel):
    batch_size: int = Field(256, description="Global batch size of one optimizer step")'''
DATACLASS_PER_DEVICE = '''@dataclass
class TrainArgs:
    batch_size: int = field(default=32, metadata={"help": "Batch size per GPU (the global batch is x world size)."})'''


@pytest.mark.parametrize("config,found", [(DATACLASS_GLOBAL, True), (PYDANTIC_GLOBAL, True),
                                          (DATACLASS_PER_DEVICE, False)], ids=["dataclass-global", "pydantic-global",
                                                                               "dataclass-per-device"])
def test_field_help_declares_global_batch(tmp_path, config, found):
    assert (ID in scan_ids(tmp_path, FIELD_SCRIPT.format(config=config))) is found
