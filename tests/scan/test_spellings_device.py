"""hardcoded-cuda0 in the spellings real scripts use for "GPU 0": the availability fallback
(``"cuda:0" if torch.cuda.is_available() else "cpu"``) and ``device="cuda:0"`` given to a tensor factory, with the
near misses (a rank- or distributed-dependent choice, the single-GPU branch) that must stay quiet."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "hardcoded-cuda0"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = nn.Linear(8, 2)
    {line}
    model = DDP(model, device_ids=[local_rank])
    for step in range(10):
        model(torch.randn(4, 8).cuda()).sum().backward()


if __name__ == "__main__":
    main(None)
'''


@pytest.mark.parametrize("line", [
    'device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n    model.to(device)',
    'device = "cuda:0" if torch.cuda.is_available() else "cpu"\n    model.to(device)',
    'model.to("cpu" if not torch.cuda.is_available() else "cuda:0")',
    'class_weights = torch.ones(2, device="cuda:0")\n    model.cuda()',
    'noise = torch.randn(4, 8, device="cuda:0")\n    model.cuda()',
])
def test_gpu_zero_spellings(tmp_path, line):
    assert ID in scan_ids(tmp_path, SCRIPT.format(line=line))


@pytest.mark.parametrize("line", [
    'device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")\n    model.to(device)',
    'device = "cuda:0" if local_rank == 0 else f"cuda:{local_rank}"\n    model.to(device)',  # rank-dependent
    'device = "cuda:0" if not args.distributed else f"cuda:{local_rank}"\n    model.to(device)',
    'class_weights = torch.ones(2, device=f"cuda:{local_rank}")\n    model.cuda()',
    'class_weights = torch.ones(2, device="cuda")\n    model.cuda()',  # the current device: set_device chose it
])
def test_rank_or_current_device_is_quiet(tmp_path, line):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(line=line))
