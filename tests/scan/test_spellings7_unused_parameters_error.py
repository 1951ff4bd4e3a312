"""unused-parameters-error spellings (scan-recall7b): parameters of the wrapped model frozen after the DDP wrap
(ClassyVision#398: the trunk frozen for fine-tuning once the model was wrapped). DDP registers every parameter that
requires a gradient when it is built and then waits for all of them. Spelled over ``.parameters()`` /
``.named_parameters()`` with a filter, ``.requires_grad_(False)``, through ``model.module`` or a ``model_without_ddp``
alias, in the wrapping function or in a method called after the one that wraps. Near misses that stay quiet: frozen
before the wrap (in place or through a method called first), find_unused_parameters=True, static_graph=True, an
unfreeze or a toggle (a GAN's per-step switch), another model (a teacher) frozen after the wrap, a part already frozen
before it, the whole model frozen (a feature extractor from then on), a wrap built again after the freeze, and DDP
options passed as ``**kwargs``."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "unused-parameters-error"

FLAT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build():
    return nn.ModuleDict({{"backbone": nn.Linear(32, 32), "head": nn.Linear(32, 4)}})


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = build().cuda()
    teacher = build().cuda()
    ddp_options = {{"find_unused_parameters": True}}
{before}
    model = DDP(model, device_ids=[local_rank]{options})
{after}
    data = TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            out = model.module["head"](model.module["backbone"](x.cuda()))
            loss = nn.functional.cross_entropy(out, y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''


def indent(code: str) -> str:
    return "\n".join("    " + line if line else line for line in code.strip("\n").splitlines())


FREEZE_MODULE = '''
for p in model.module.backbone.parameters():
    p.requires_grad = False
'''
FREEZE_ALIAS = '''
model_without_ddp = model.module
model_without_ddp.backbone.requires_grad_(False)
'''
FREEZE_NAMED = '''
for name, param in model.module.named_parameters():
    if name.startswith("backbone"):
        param.requires_grad = False
'''
FREEZE_BARE_BEFORE = '''
for p in model.backbone.parameters():
    p.requires_grad = False
'''
UNFREEZE = '''
for p in model.module.backbone.parameters():
    p.requires_grad = True
'''
FREEZE_TEACHER = '''
for p in teacher.parameters():
    p.requires_grad = False
'''
FREEZE_ALREADY_FROZEN = '''
model.module.backbone.requires_grad_(False)
'''
FREEZE_WHOLE = '''
model.module.requires_grad_(False)
'''
FREEZE_THEN_REWRAP = '''
for p in model.module.backbone.parameters():
    p.requires_grad = False
model = DDP(model.module, device_ids=[local_rank])
'''
TOGGLE = '''
model.module.backbone.requires_grad_(False)
for p in model.module.backbone.parameters():
    p.requires_grad = True
'''


@pytest.mark.parametrize("after", [FREEZE_MODULE, FREEZE_ALIAS, FREEZE_NAMED], ids=["module", "alias", "named"])
def test_frozen_after_the_wrap(tmp_path, after):
    assert ID in scan_ids(tmp_path, FLAT.format(before="", options="", after=indent(after)))


@pytest.mark.parametrize("before,options,after", [
    (FREEZE_BARE_BEFORE, "", ""),
    ("", ", find_unused_parameters=True", FREEZE_MODULE),
    ("", ", static_graph=True", FREEZE_MODULE),
    ("", "", UNFREEZE),
    ("", "", FREEZE_TEACHER),
    (FREEZE_BARE_BEFORE, "", FREEZE_ALREADY_FROZEN),
    ("", "", FREEZE_WHOLE),
    ("", "", FREEZE_THEN_REWRAP),
    ("", "", TOGGLE),
    ("", ", **ddp_options", FREEZE_MODULE),
], ids=["frozen-before", "find-unused", "static-graph", "unfreeze", "teacher", "already-frozen", "whole-model",
        "wrapped-again", "toggled", "options-unknown"])
def test_quiet(tmp_path, before, options, after):
    code = FLAT.format(before=indent(before) if before else "", options=options, after=indent(after) if after else "")
    assert ID not in scan_ids(tmp_path, code)


TASK = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(16, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(self.trunk(x))


class Task:
    def __init__(self):
        self.base_model = Net()
        self.distributed_model = None

    def wrap(self):
        local_rank = int(os.environ["LOCAL_RANK"])
        self.base_model = self.base_model.cuda(local_rank)
        self.distributed_model = DistributedDataParallel(self.base_model, device_ids=[local_rank])

    def freeze_trunk(self):
        for param in self.base_model.trunk.parameters():
            param.requires_grad = False

    def prepare(self):
{order}

    def run(self):
        data = TensorDataset(torch.randn(64, 16), torch.randint(0, 2, (64,)))
        sampler = DistributedSampler(data)
        opt = torch.optim.SGD(self.distributed_model.parameters(), lr=0.1)
        for x, y in DataLoader(data, batch_size=8, sampler=sampler):
            loss = nn.functional.cross_entropy(self.distributed_model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    task = Task()
    task.prepare()
    task.run()
'''


def test_frozen_in_a_method_called_after_the_wrapping_one(tmp_path):
    assert ID in scan_ids(tmp_path, TASK.format(order="        self.wrap()\n        self.freeze_trunk()"))
    assert ID not in scan_ids(tmp_path, TASK.format(order="        self.freeze_trunk()\n        self.wrap()"))
