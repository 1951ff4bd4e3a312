"""ddp-before-to-device (session 6): a module built inside the DDP call, the WRAPPER moved to the GPU afterwards.

narumiruna/pytorch-distributed-example#11 wrapped the CPU network first and moved it afterwards; the same construct
is spelled with the module built in the call and the wrapper held by an attribute or a name: ``self.model =
DDP(Net())`` then ``self.model.to(self.device)``. DDP has already built its buckets (and broadcast the parameters)
on the CPU. Quiet when the module is moved inside the call, built on its device, or the wrapper moved to the CPU.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "ddp-before-to-device"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
    def __init__(self):
        dist.init_process_group("nccl")
        self.rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.rank)
        self.device = torch.device("cuda", self.rank)
{build}
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, x, y):
        self.opt.zero_grad()
        nn.functional.cross_entropy(self.model(x.to(self.device)), y.to(self.device)).backward()
        self.opt.step()


runner = Runner()
for _ in range(10):
    runner.step(torch.randn(8, 4), torch.randint(0, 2, (8,)))
'''


def script(build: str) -> str:
    return SCRIPT.format(build="\n".join("        " + line for line in build.strip().splitlines()))


@pytest.mark.parametrize("build", [
    "self.model = DDP(nn.Linear(4, 2))\nself.model.to(self.device)",
    "model = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))\nmodel.cuda()\nself.model = model",
])
def test_the_wrapper_of_a_fresh_module_moved_after_wrapping(tmp_path, build):
    assert ID in scan_ids(tmp_path, script(build))


@pytest.mark.parametrize("build", [
    "self.model = DDP(nn.Linear(4, 2).to(self.device), device_ids=[self.rank])\nself.model.to(self.device)",
    "self.model = DDP(nn.Linear(4, 2, device=self.device), device_ids=[self.rank])",
    "self.model = DDP(nn.Linear(4, 2))\nself.model.to('cpu')",
])
def test_quiet_when_the_module_is_on_its_device_before_wrapping_or_stays_on_the_cpu(tmp_path, build):
    assert ID not in scan_ids(tmp_path, script(build))
