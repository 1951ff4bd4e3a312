"""A function defined inside another exists only in the processes that ran its ``def``: defined after a rank-0 early
return, or in a rank-0 arm, it runs on rank 0 only, wherever it is later called or handed (a forward hook through
``functools.partial``). Defined on every rank, its writes still warn."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import functools
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self):
        dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DistributedDataParallel(nn.Linear(4, 4).cuda(), device_ids=[self.local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.trace_steps = None

    def trace_hooks(self, step, micro_batch):
        if self.trace_steps is None or step not in self.trace_steps:
            return []
{guard}
        folder = f"traces/step{{step}}"
        if os.path.exists(folder):
            raise RuntimeError("traces exist")

{define}
        return [m.register_forward_hook(functools.partial(save_output, name))
                for name, m in self.model.named_modules()]

    def fit(self):
        for step in range(10):
            for micro_batch in range(2):
                handles = self.trace_hooks(step, micro_batch)
                loss = self.model(torch.randn(2, 4).cuda()).sum()
                loss.backward()
                for h in handles:
                    h.remove()
            self.opt.step()


if __name__ == "__main__":
    Trainer().fit()
'''
HOOK = '''        def save_output(name, module, args, output):
            torch.save(output, f"{folder}/{name}_output.pt")
'''
RANK0_HOOK = '''        if dist.get_rank() == 0:
            def save_output(name, module, args, output):
                torch.save(output, f"{folder}/{name}_output.pt")
        else:
            save_output = None
'''
CASES = {
    "after an early return off rank 0": ("        if micro_batch != 0 or dist.get_rank() != 0:\n            return []",
                                         HOOK, False),
    "after a not-main early return": ("        if not dist.get_rank() == 0:\n            return []", HOOK, False),
    "in a rank-0 arm": ("", RANK0_HOOK, False),
    "after a non-rank early return": ("        if micro_batch != 0:\n            return []", HOOK, True),
    "on every rank": ("", HOOK, True),
}


@pytest.mark.parametrize("guard, define, warns", CASES.values(), ids=CASES.keys())
def test_a_closure_runs_where_it_was_defined(tmp_path, guard, define, warns):
    code = TEMPLATE.format(guard=guard, define=define)
    assert shows(tmp_path, "logging-from-all-ranks", code) is warns
