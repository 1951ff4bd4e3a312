"""collective-mismatch (scan-recall8): the forward of a DDP-wrapped model with buffers, reached on rank 0 only through
a method or helper (velog scyonggg: ``if get_rank() == 0: self.validation()`` where ``validation`` calls the wrapped
``self.encoder``; DDP's forward broadcasts the BatchNorm statistics, a collective the other ranks never join). The
wrapped model held by ``self``, by a module-level name, reached one or two calls deep, or after an early return on
the other ranks. Near misses that stay quiet: the unwrapped ``.module`` evaluated, ``broadcast_buffers=False``, a
model without buffers, and every rank validating."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

TRAINER = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_net():
    return nn.Sequential(nn.Conv2d(3, 8, 3), {norm}, nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))


class Runner:
    def __init__(self):
        self.rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        self.model = DDP(make_net().cuda(), device_ids=[local_rank]{wrap_kw})
        data = TensorDataset(torch.randn(64, 3, 16, 16), torch.randint(0, 4, (64,)))
        self.sampler = DistributedSampler(data)
        self.loader = DataLoader(data, batch_size=8, sampler=self.sampler)
        self.val_loader = DataLoader(data, batch_size=8)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train_epoch(self):
        for x, y in self.loader:
            loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

{methods}

    def fit(self, epochs=3):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            self.train_epoch()
{epoch_end}
            dist.barrier()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    Runner().fit()
'''

VALIDATE = '''
    @torch.no_grad()
    def validate(self):
        correct = 0
        for x, y in self.val_loader:
            correct += ({model}(x.cuda()).argmax(1) == y.cuda()).sum().item()
        return correct
'''

NESTED = '''
    def evaluate(self):
        return self._run_eval(self.val_loader)

    @torch.no_grad()
    def _run_eval(self, loader):
        return sum(self.model(x.cuda()).sum().item() for x, _ in loader)
'''

EARLY_RETURN = VALIDATE.format(model="self.model") + '''
    def on_epoch_end(self):
        if self.rank != 0:
            return
        print("val", self.validate())
'''

POSITIVE = {
    "self-attribute-method": (VALIDATE.format(model="self.model"),
                              "            if dist.get_rank() == 0:\n                print(self.validate())"),
    "two-calls-deep": (NESTED, "            if self.rank == 0:\n                print(self.evaluate())"),
    "early-return-on-other-ranks": (EARLY_RETURN, "            self.on_epoch_end()"),
}

QUIET = {
    "unwrapped-module": (VALIDATE.format(model="self.model.module"), "nn.BatchNorm2d(8)", ""),
    "broadcast-buffers-off": (VALIDATE.format(model="self.model"), "nn.BatchNorm2d(8)", ", broadcast_buffers=False"),
    "no-buffers": (VALIDATE.format(model="self.model"), "nn.Identity()", ""),
}


def trainer(methods: str, epoch_end: str, norm: str = "nn.BatchNorm2d(8)", wrap_kw: str = "") -> str:
    return TRAINER.format(methods=methods, epoch_end=epoch_end, norm=norm, wrap_kw=wrap_kw)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_wrapped_forward_reached_on_rank0(tmp_path, name):
    methods, epoch_end = POSITIVE[name]
    assert ID in scan_ids(tmp_path, trainer(methods, epoch_end))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_wrapped_forward_near_misses(tmp_path, name):
    methods, norm, wrap_kw = QUIET[name]
    code = trainer(methods, "            if dist.get_rank() == 0:\n                print(self.validate())", norm, wrap_kw)
    assert ID not in scan_ids(tmp_path, code)


def test_every_rank_validating_is_quiet(tmp_path):
    code = trainer(VALIDATE.format(model="self.model"), "            print(self.validate())")
    assert ID not in scan_ids(tmp_path, code)


MODULE_LEVEL = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("nccl")
rank = dist.get_rank()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
net = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1)).cuda()
model = DistributedDataParallel(net, device_ids=[local_rank])
optimizer = torch.optim.Adam(model.parameters())


@torch.no_grad()
def validate():
    return model(torch.randn(8, 16, device="cuda")).mean().item()


for step in range(100):
    loss = model(torch.randn(8, 16, device="cuda")).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 0 and rank == 0:
        print(step, validate())
'''


def test_module_level_model_in_helper(tmp_path):
    assert ID in scan_ids(tmp_path, MODULE_LEVEL)
