"""gradient-checkpointing-conflict across the ways real code spells DDP's find_unused_parameters=True: a literal, a
command-line option whose unchanged default is True (KAIR/VRT's ``find_unused_parameters`` option), a name bound
once; near misses that must stay quiet: an option defaulting to False, an option the file assigns, non-reentrant
checkpointing."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "gradient-checkpointing-conflict"

SCRIPT = '''
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.checkpoint as checkpoint
from torch.nn.parallel import DistributedDataParallel


class Group(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(16, 16) for _ in range(4))

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x{reentrant})
        return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--find_unused_parameters", type=bool, default={default})
    args = parser.parse_args()
{extra}
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = Group().cuda()
    {flag_binding}
    net = DistributedDataParallel(net, device_ids=[local_rank], find_unused_parameters={flag})
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        loss = net(torch.randn(4, 16).cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
'''


def render(reentrant="", default="True", extra="", flag_binding="", flag="args.find_unused_parameters"):
    return SCRIPT.format(reentrant=reentrant, default=default, extra=extra, flag_binding=flag_binding, flag=flag)


@pytest.mark.parametrize("code", [
    render(),                                                            # option default True
    render(flag="True"),                                                 # literal
    render(flag="find_unused", flag_binding="find_unused = True"),       # a name bound once
    render(reentrant=", use_reentrant=True"),                            # explicit reentrant
], ids=["option-default", "literal", "local-name", "explicit-reentrant"])
def test_reentrant_checkpoint_with_find_unused_true(tmp_path, code):
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("code", [
    render(default="False"),                                             # the option defaults to False
    render(extra="    args.find_unused_parameters = False"),             # the file overrides the option
    render(reentrant=", use_reentrant=False"),                           # non-reentrant checkpointing
    render(flag="False"),
], ids=["option-default-false", "option-overridden", "non-reentrant", "literal-false"])
def test_quiet_without_the_conflict(tmp_path, code):
    assert ID not in scan_ids(tmp_path, code)
