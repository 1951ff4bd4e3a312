"""hardcoded-cuda0: a constant device that a local set-up call rebinds per rank is the one-process default.

timm's train.py (and poolformer, fastvit, MambaVision, FasterViT that copy it) sets ``args.device = "cuda:0"`` and
hands ``args`` to its distributed set-up, which rebinds ``args.device`` from the local rank. The set-up may be any
local function or method, whatever its name (``DistributedSetup().build(args)``, ``prepare(cfg)``); what counts is
that its body rebinds the same attribute of the parameter it receives to a rank-derived value. A callee that rebinds
it to another constant, or leaves it alone, does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from types import SimpleNamespace
from torch.nn.parallel import DistributedDataParallel as DDP


{helper}


def main():
    args = SimpleNamespace(local_rank=int(os.environ.get("LOCAL_RANK", 0)), world_size=int(os.environ["WORLD_SIZE"]))
    args.device = "cuda:0"
    {call}
    model = nn.Linear(8, 2).to(args.device)
    model = DDP(model, device_ids=[args.local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(4, 8, device=args.device)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''

METHOD = '''class Launch:
    def build(self, opts):
        dist.init_process_group("nccl")
        opts.device = {value}
        torch.cuda.set_device(opts.device)'''
FUNCTION = '''def prepare(cfg, verbose=False):
    if cfg.world_size > 1:
        dist.init_process_group("nccl")
        cfg.device = {value}
    torch.cuda.set_device(cfg.device)'''

REBOUND = {
    "method of a local class": (METHOD.format(value='f"cuda:{opts.local_rank}"'), "Launch().build(args)"),
    "function, keyword": (FUNCTION.format(value='torch.device("cuda", cfg.local_rank)'), "prepare(cfg=args)"),
    "function, positional": (FUNCTION.format(value='"cuda:%d" % cfg.local_rank'), "prepare(args, True)"),
}
NOT_REBOUND = {
    "rebound to a constant": (FUNCTION.format(value='"cuda:1"'), "prepare(args)"),
    "object not handed over": (FUNCTION.format(value='f"cuda:{cfg.local_rank}"'), "prepare(SimpleNamespace())"),
}


def _flagged(tmp_path: Path, helper: str, call: str) -> bool:
    return "hardcoded-cuda0" in shown_ids(tmp_path, TEMPLATE.format(helper=helper, call=call))


@pytest.mark.parametrize("case", REBOUND, ids=list(REBOUND))
def test_a_device_the_callee_rebinds_per_rank_is_a_default(tmp_path, case):
    assert not _flagged(tmp_path, *REBOUND[case])


@pytest.mark.parametrize("case", NOT_REBOUND, ids=list(NOT_REBOUND))
def test_a_device_nothing_rebinds_per_rank_pins_gpu_0(tmp_path, case):
    assert _flagged(tmp_path, *NOT_REBOUND[case])
