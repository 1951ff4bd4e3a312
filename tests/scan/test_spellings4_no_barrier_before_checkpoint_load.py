"""no-barrier-before-checkpoint-load when both sides go through plain helpers: ``save_ckpt(model, path)`` called
under ``if rank == 0:`` (the helper itself has no rank test), then ``load_ckpt(model, path)`` on every rank.
Near misses: a barrier between them (directly or through a ``synchronize()`` helper), or different files."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "no-barrier-before-checkpoint-load"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_ckpt(model, path):
    torch.save(model.module.state_dict(), path)


def load_ckpt(model, path):
    model.module.load_state_dict(torch.load(path, map_location="cpu"))


def synchronize():
    if dist.is_initialized():
        dist.barrier()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    if dist.get_rank() == 0:
        save_ckpt(model, "init.pt")
{between}
    load_ckpt(model, {load_path})
    for step in range(10):
        model(torch.randn(4, 8).cuda()).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def test_plain_save_helper_under_rank_zero_then_load_helper(tmp_path):
    assert ID in scan_ids(tmp_path, SCRIPT.format(between="", load_path='"init.pt"'))


@pytest.mark.parametrize("between, load_path", [
    ("    dist.barrier()", '"init.pt"'),
    ("    synchronize()", '"init.pt"'),
    ("", '"pretrained.pt"'),
])
def test_near_misses_stay_quiet(tmp_path, between, load_path):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(between=between, load_path=load_path))
