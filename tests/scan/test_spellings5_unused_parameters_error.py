"""unused-parameters-error for data-dependent forwards, as real models spell them: stochastic depth inside a block
class kept in ``nn.Sequential(*[...])``, layer drop by ``continue`` in a loop over ``self.layers``, a layer a
submodule uses only when an optional argument (``residual=None``) is passed, the model converted by
``SyncBatchNorm.convert_sync_batchnorm`` or prepared by Accelerate. Near misses stay quiet: find_unused_parameters=True
(also through Accelerate's DistributedDataParallelKwargs), a random draw or an optional argument that only changes
parameter-free work, a skip decided by the configuration."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "unused-parameters-error"

BLOCKS = '''
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, p):
        super().__init__()
        self.p = p
        self.fc = nn.Linear(dim, dim)
        self.extra = nn.Linear(dim, dim)

    def forward(self, x, residual=None):
{block_body}


class Net(nn.Module):
    def __init__(self, dim=16, depth=4):
        super().__init__()
        self.layers = {container}
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
{net_body}
        return self.head(x)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = {build}
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank]{flag})
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 16).cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
'''

STOCHASTIC = ("        if self.training and torch.rand(1).item() < self.p:\n            return x\n"
              "        return x + self.extra(self.fc(x))")
OPTIONAL = ("        if residual is not None:\n            x = x + self.extra(residual)\n        return self.fc(x)")
PLAIN = "        return x + self.extra(self.fc(x))"
LOOP = "        for layer in self.layers:\n            x = layer(x)"
LOOP_DROP = ("        for layer in self.layers:\n            if self.training and random.random() < 0.2:\n"
             "                continue\n            x = layer(x)")
LOOP_FUSE = ("        fused = None\n        for layer in self.layers:\n"
             "            fused = layer(x) if fused is None else layer(fused, x)\n        x = fused")
SEQ = "nn.Sequential(*[Block(dim, 0.1 * i) for i in range(depth)])"
MODLIST = "nn.ModuleList(Block(dim, 0.1) for _ in range(depth))"
BUILD = "Net().cuda()"


def render(block_body=PLAIN, net_body=LOOP, container=MODLIST, build=BUILD, flag=""):
    return BLOCKS.format(block_body=block_body, net_body=net_body, container=container, build=build, flag=flag)


ACCELERATE = '''
import random

import torch
import torch.nn as nn
from accelerate import Accelerator
{kwargs_import}


class Encoder(nn.Module):
    def __init__(self, dim=16, depth=4):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            if self.training and random.random() < 0.2:
                continue
            x = layer(x)
        return x


accelerator = Accelerator({accel_args})
model = Encoder()
opt = torch.optim.AdamW(model.parameters())
model, opt = accelerator.prepare(model, opt)
for step in range(10):
    loss = model(torch.randn(4, 16)).sum()
    accelerator.backward(loss)
    opt.step()
'''


@pytest.mark.parametrize("code", [
    render(block_body=STOCHASTIC, container=SEQ, net_body="        x = self.layers(x)"),  # stochastic depth blocks
    render(block_body=STOCHASTIC),                                                         # in a ModuleList
    render(net_body=LOOP_DROP),                                                            # layer drop by continue
    render(block_body=OPTIONAL, net_body=LOOP_FUSE),                                       # optional residual
    render(block_body=STOCHASTIC, build="nn.SyncBatchNorm.convert_sync_batchnorm(Net()).cuda()"),
    ACCELERATE.format(kwargs_import="", accel_args=""),                                    # Accelerate-prepared
], ids=["sequential-stochastic-depth", "modulelist-stochastic-depth", "layer-drop-continue", "optional-residual",
        "convert-sync-batchnorm", "accelerate-layer-drop"])
def test_data_dependent_forward_without_find_unused(tmp_path, code):
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("code", [
    render(block_body=STOCHASTIC, flag=", find_unused_parameters=True"),
    render(net_body=LOOP_DROP, flag=", find_unused_parameters=True"),
    ACCELERATE.format(kwargs_import="from accelerate import DistributedDataParallelKwargs",
                      accel_args="kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)]"),
    render(block_body="        if self.training and random.random() < self.p:\n            x = x.flip(-1)\n"
                      "        return x + self.extra(self.fc(x))"),                       # the draw skips no layer
    render(block_body="        if residual is not None:\n            x = x * residual\n"
                      "        return x + self.extra(self.fc(x))"),                        # optional input, no layer
    render(net_body="        for layer in self.layers:\n            x = layer(x)\n"
                    "            if self.training and random.random() < 0.5:\n                continue\n"
                    "            x = x.relu()"),                                        # the draw skips after the layer
    render(),                                                                              # every layer every time
], ids=["find-unused", "find-unused-layer-drop", "accelerate-kwargs", "draw-without-layer", "optional-without-layer",
        "skip-after-use", "plain"])
def test_quiet_when_every_parameter_is_used_or_ddp_is_told(tmp_path, code):
    assert ID not in scan_ids(tmp_path, code)


# One entry of a block's container picked per call (architecture search's sampled candidate, a task's head), the
# model wrapped by a helper that receives it as a parameter.
PICKED = '''
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn


class MixedOp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.candidates = nn.ModuleList([nn.Linear(c, c), nn.Linear(c, c), nn.Linear(c, c)])

    def forward(self, x, task=0):
{body}


class SuperNet(nn.Module):
    def __init__(self, c=8, depth=3):
        super().__init__()
        self.cells = nn.Sequential(*[MixedOp(c) for _ in range(depth)])
        self.head = nn.Linear(c, 2)

    def forward(self, x):
        return self.head(self.cells(x))


def wrap_ddp(model):
    local_rank = int(os.environ["LOCAL_RANK"])
    return nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = wrap_ddp(SuperNet().cuda())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 8).cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
'''


@pytest.mark.parametrize("body", [
    "        choice = random.randrange(len(self.candidates))\n        return self.candidates[choice](x)",
    "        return self.candidates[task](x)",
], ids=["random-candidate", "argument-picks"])
def test_one_entry_picked_per_call(tmp_path, body):
    assert ID in scan_ids(tmp_path, PICKED.format(body=body))


@pytest.mark.parametrize("body", [
    "        for i in range(len(self.candidates)):\n            x = self.candidates[i](x)\n        return x",
    "        n = len(self.candidates)\n        for i in range(n):\n            x = self.candidates[i](x)\n        return x",
    "        return sum(layer(x) for layer in self.candidates)",
], ids=["loop-index", "loop-index-through-name", "every-entry"])
def test_quiet_when_every_entry_runs(tmp_path, body):
    assert ID not in scan_ids(tmp_path, PICKED.format(body=body))
