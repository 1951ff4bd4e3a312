"""A tracker started on every rank only behind a switch the script leaves off by default (``--log-wandb`` as a
``store_true`` option, a module constant or a parameter defaulting to False, ``wandb.init(mode="disabled" unless
...)``) is advice (severity info): the default run starts none. Switched on by default, or behind a test the scan
cannot evaluate, it stays a warning."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel
{prelude}

def train({params}):
    parser = argparse.ArgumentParser()
    {option}
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
{start}
    model = DistributedDataParallel(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        loss = model(torch.randn(4, 8, device="cuda")).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            wandb.log({{"loss": loss.item()}})


if __name__ == "__main__":
    train({call})
'''
STORE_TRUE = 'parser.add_argument("--log-wandb", action="store_true")'
CASES = {
    "store_true option": ("", "", STORE_TRUE, "    if args.log_wandb:\n        wandb.init(project='p')", "", False),
    "option defaulting to False, and a package test": (
        "has_wandb = True", "", 'parser.add_argument("--log_wandb", type=bool, default=False)',
        "    if args.log_wandb and has_wandb:\n        wandb.init(project='p')", "", False),
    "module constant in mode": ("TRACK = False", "", "pass",
                                "    wandb.init(project='p', mode='disabled' if not TRACK else 'online')", "", False),
    "parameter default in mode": ("", "track=False", "pass",
                                  "    wandb.init(project='p', mode='online' if track else 'disabled')", "", False),
    "else arm of a switch on": ("QUIET = True", "", "pass",
                                "    if QUIET:\n        pass\n    else:\n        wandb.init(project='p')", "", False),
    "unconditional": ("", "", "pass", "    wandb.init(project='p')", "", True),
    "store_true defaulting on": ("", "", STORE_TRUE.replace(")", ", default=True)"),
                                 "    if args.log_wandb:\n        wandb.init(project='p')", "", True),
    "parameter a call switches on": ("", "track=False", "pass",
                                     "    wandb.init(project='p', mode='online' if track else 'disabled')",
                                     "track=True", True),
    "a config value": ("", "", "pass", "    if os.environ.get('LOG'):\n        wandb.init(project='p')", "", True),
}


@pytest.mark.parametrize("prelude, params, option, start, call, warns", CASES.values(), ids=CASES.keys())
def test_a_tracker_off_by_default_is_advice(tmp_path, prelude, params, option, start, call, warns):
    code = TEMPLATE.format(prelude=prelude, params=params, option=option, start=start, call=call)
    assert shows(tmp_path, "logging-from-all-ranks", code) is warns
