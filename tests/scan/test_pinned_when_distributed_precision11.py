"""A test decided by a value the distributed arm pins to a literal (``if args.distributed: args.num_gpu = 1`` then
``if args.num_gpu > 1: model = DataParallel(model)``, timm's 2020 train.py and its copies) tells the one-process path
from the distributed one, like the flag itself: DataParallel there is not on the distributed path. A test that holds
in a distributed run too (``or torch.cuda.device_count() > 1``) or a value not pinned still warns."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import argparse
import os
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-gpu", type=int, default=1)
    args = parser.parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if args.distributed:
        args.local_rank = int(os.environ["LOCAL_RANK"])
        args.num_gpu = {pinned}
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group("nccl")
    model = nn.Linear(8, 8)
    if {test}:
        model = nn.DataParallel(model, device_ids=list(range(args.num_gpu))).cuda()
    else:
        model.cuda()
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 8).cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''
CASES = {
    "pinned count compared": ("1", "args.num_gpu > 1", False),
    "pinned count and another test": ("1", "args.num_gpu > 1 and torch.cuda.is_available()", False),
    "pinned count or the device count": ("1", "args.num_gpu > 1 or torch.cuda.device_count() > 1", True),
    "count not pinned": ("torch.cuda.device_count()", "args.num_gpu > 1", True),
}


@pytest.mark.parametrize("pinned, test, warns", CASES.values(), ids=CASES.keys())
def test_a_value_pinned_by_the_distributed_arm_decides_the_path(tmp_path, pinned, test, warns):
    assert shows(tmp_path, "dataparallel", TEMPLATE.format(pinned=pinned, test=test)) is warns
