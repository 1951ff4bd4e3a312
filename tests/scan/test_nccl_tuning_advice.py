"""NCCL tuning set in code is advice from the scan alone: it is reported, never shown as a warning."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids, shows

SCRIPT = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

{setting}

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    model(torch.randn(1, 4).cuda()).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("setting", [
    'os.environ["NCCL_ALGO"] = "Tree"',
    'os.environ.setdefault("NCCL_NSOCKS_PERTHREAD", "8")',
    'os.environ.update(NCCL_NVLS_ENABLE="0")',
    'os.putenv("NCCL_P2P_LEVEL", "NVL")',
])
def test_nccl_tuning_in_code_is_reported_as_advice(tmp_path, setting):
    code = SCRIPT.format(setting=setting)
    assert "nccl-tuning-before-profiling" in scan_ids(tmp_path, code)
    assert not shows(tmp_path, "nccl-tuning-before-profiling", code)


def test_debugging_variables_are_not_tuning(tmp_path):
    code = SCRIPT.format(setting='os.environ["NCCL_DEBUG"] = "INFO"')
    assert "nccl-tuning-before-profiling" not in scan_ids(tmp_path, code)
