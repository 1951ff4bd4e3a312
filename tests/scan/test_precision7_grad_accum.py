"""grad-accum-without-no-sync when the loop lives in a trainer class (issue 11, scan-precision7).

The checker stays quiet when the accumulation count is 1 in the usual configuration (bound to 1 and raised only as
a fallback, or an option defaulting to 1): then no extra all-reduce runs as shipped, nothing measurably slower.
Moving the loop into a class (``self.k`` set in the constructor or a set-up method from a parameter) must not hide
where the count comes from: the caller's value decides, whatever the spelling of the hand-over. A count that does
accumulate by default (``max(round(64 / batch), 1)``, an option defaulting to 4) still warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

ID = "grad-accum-without-no-sync"

TEMPLATE = '''
import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
{init}

    def fit(self, batches):
        for i, (x, y) in enumerate(batches):
            loss = nn.functional.mse_loss(self.net(x.cuda()), y.cuda()) / self.k
            loss.backward()
            if (i + 1) % self.k == 0:
                self.opt.step()
                self.opt.zero_grad()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--accum", type=int, default={option_default})
    o = p.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
{count}
    batches = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(8)]
{make}
    runner.fit(batches)


if __name__ == "__main__":
    main()
'''
INITS = {
    "positional constructor": ("    def __init__(self, net, opt, k):\n        self.net, self.opt = net, opt\n"
                               "        self.k = k", "    runner = Runner(net, opt, steps)"),
    "keyword constructor": ("    def __init__(self, net, opt, k=1):\n        self.net = net\n        self.opt = opt\n"
                            "        self.k = k", "    runner = Runner(net=net, opt=opt, k=steps)"),
    "set-up method": ("    def __init__(self, net, opt):\n        self.net, self.opt = net, opt\n\n"
                      "    def configure(self, k):\n        self.k = k",
                      "    runner = Runner(net, opt)\n    runner.configure(steps)"),
}
QUIET_COUNTS = {
    "fallback for a big batch": "    steps = 1\n    if o.batch > 16:\n        steps = o.batch // 16",
    "option defaulting to 1": "    steps = o.accum",
}
LOUD_COUNTS = {
    "nominal batch": "    steps = max(round(64 / o.batch), 1)",
    "option defaulting to 4": "    steps = o.accum",
}


def _warned(tmp_path: Path, init: str, count: str, option_default: int) -> bool:
    body, make = INITS[init]
    path = tmp_path / "train.py"
    path.write_text(TEMPLATE.format(init=body, make=make, count=count, option_default=option_default))
    return ID in shown_findings([str(path)])[0]


@pytest.mark.parametrize("init", INITS, ids=list(INITS))
@pytest.mark.parametrize("count", QUIET_COUNTS, ids=list(QUIET_COUNTS))
def test_count_of_one_by_default_handed_to_a_trainer_class_is_quiet(tmp_path, init, count):
    assert not _warned(tmp_path, init, QUIET_COUNTS[count], option_default=1)


@pytest.mark.parametrize("init", INITS, ids=list(INITS))
@pytest.mark.parametrize("count", LOUD_COUNTS, ids=list(LOUD_COUNTS))
def test_count_that_accumulates_by_default_still_warns(tmp_path, init, count):
    assert _warned(tmp_path, init, LOUD_COUNTS[count], option_default=4)
