"""ddp-before-to-device: a conversion of the module keeps the device it was moved to (issue 11, scan-precision7).

glue-factory builds its model already moved (``model = get_model(name)(conf).to(device)``) and, when distributed,
converts it (``model = SyncBatchNorm.convert_sync_batchnorm(model)``) right before ``DDP(model, device_ids=...)``.
A call handed the module itself (``convert_sync_batchnorm``, apex's ``convert_syncbn_model``, ``torch.compile``)
converts the module it was given: whether it is on the GPU is decided by the binding that built it. A module built
on the CPU and only converted is still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

ID = "ddp-before-to-device"

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))

    def forward(self, x):
        return self.body(x)


MODELS = {{"net": Net}}


def get_model(name):
    return MODELS[name]


def main():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    device = local
{build}
    model = DDP(model, device_ids=[device])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 8).cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''

QUIET = {
    "factory chain moved, then sync BN": "    model = get_model('net')().to(device)\n"
                                          "    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
    "moved, compiled, converted": "    model = Net().cuda(device)\n    model = torch.compile(model)\n"
                                  "    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)",
    "converted under a flag": "    model = Net().to(device)\n    if os.environ.get('SYNC_BN'):\n"
                              "        model = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=None)",
    "other names, keyword": "    net = Net().to(f'cuda:{device}')\n    model = net\n"
                            "    model = torch.compile(model=model, mode='max-autotune')",
}

LOUD = {
    "built on the CPU, only converted": "    model = Net()\n"
                                        "    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
    "built on the CPU, compiled": "    model = Net()\n    model = torch.compile(model)",
}


def _flagged(tmp_path: Path, build: str) -> bool:
    return ID in shown_ids(tmp_path, TEMPLATE.format(build=build))


@pytest.mark.parametrize("case", QUIET, ids=list(QUIET))
def test_conversion_of_a_moved_module_is_quiet(tmp_path, case):
    assert not _flagged(tmp_path, QUIET[case])


@pytest.mark.parametrize("case", LOUD, ids=list(LOUD))
def test_conversion_of_a_cpu_module_is_still_reported(tmp_path, case):
    assert _flagged(tmp_path, LOUD[case])
