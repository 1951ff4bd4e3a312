"""ddp-before-to-device when the CPU module comes from a local builder function (``DDP(get_model(), device_ids=...)``,
``model = build(); DDP(model, device_ids=...)``), with the near misses: a builder that moves the module, one that
names a device, a factory the file does not define."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "ddp-before-to-device"

SCRIPT = '''
import os
import timm
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)


def get_model(rank):
{builder}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
{wrap}


main()
'''


@pytest.mark.parametrize("builder, wrap", [
    ("    return nn.Sequential(nn.Linear(4, 4), nn.ReLU())", "    model = DDP(get_model(local_rank), device_ids=[local_rank])"),
    ("    net = Net()\n    return net", "    model = get_model(local_rank)\n    model = DDP(model, device_ids=[local_rank])"),
])
def test_cpu_module_from_a_local_builder(tmp_path, builder, wrap):
    assert ID in scan_ids(tmp_path, SCRIPT.format(builder=builder, wrap=wrap))


@pytest.mark.parametrize("builder, wrap", [
    ("    return Net().cuda(rank)", "    model = DDP(get_model(local_rank), device_ids=[local_rank])"),
    ("    net = Net()\n    net.to(rank)\n    return net", "    model = get_model(local_rank)\n    model = DDP(model, device_ids=[local_rank])"),
    ("    return nn.Linear(4, 2, device=f'cuda:{rank}')", "    model = DDP(get_model(local_rank), device_ids=[local_rank])"),
    ("    return timm.create_model('resnet50')", "    model = DDP(get_model(local_rank), device_ids=[local_rank])"),
    ("    return Net()", "    model = get_model(local_rank).cuda()\n    model = DDP(model, device_ids=[local_rank])"),
])
def test_moved_or_unknown_modules_are_quiet(tmp_path, builder, wrap):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(builder=builder, wrap=wrap))
