"""Rank guards through a helper that calls a function handed to it (speechbrain's ``run_on_main(func)``: the helper
calls ``func`` under its own rank-0 test): the function runs on rank 0 only, so its save is not written by every
rank, and a collective inside it is reached by rank 0 alone. Near misses: a helper that calls the function on every
rank, a function also called directly elsewhere."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def if_main_process():
    return int(os.environ.get("RANK", "0")) == 0


def run_on_main(func, kwargs=None):
    {helper_body}
    if dist.is_initialized():
        dist.barrier()


class Brain:
    def __init__(self, model):
        self.model = model

    def save(self):
        {save_body}

    def fit(self, batches):
        opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        for epoch in range(3):
            for x in batches:
                loss = self.model(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            {call}


def main():
    dist.init_process_group("gloo")
    Brain(DDP(nn.Linear(4, 4))).fit([torch.randn(2, 4)])


main()
'''

GUARDED = "if if_main_process():\n        func(**(kwargs or {}))"
EVERYONE = "func(**(kwargs or {}))"
SAVE = "torch.save(self.model.module.state_dict(), 'ckpt.pt')"
SYNC_SAVE = "dist.barrier()\n        torch.save(self.model.module.state_dict(), 'ckpt.pt')"


def render(helper_body=GUARDED, save_body=SAVE, call="run_on_main(self.save)"):
    return SCRIPT.format(helper_body=helper_body, save_body=save_body, call=call)


@pytest.mark.parametrize("code", [
    render(),
    render(call="run_on_main(func=self.save)"),
], ids=["positional", "keyword"])
def test_function_handed_to_a_rank0_helper_runs_on_rank0(tmp_path, code):
    assert "logging-from-all-ranks" not in scan_ids(tmp_path, code)


@pytest.mark.parametrize("code", [
    render(helper_body=EVERYONE),                                           # the helper calls it on every rank
    render(call="run_on_main(self.save)\n            self.save()"),        # also called directly on every rank
], ids=["helper-calls-everywhere", "also-called-directly"])
def test_every_rank_still_writes(tmp_path, code):
    assert "logging-from-all-ranks" in scan_ids(tmp_path, code)


def test_collective_inside_a_function_run_on_main_is_rank0_only(tmp_path):
    assert "collective-mismatch" in scan_ids(tmp_path, render(save_body=SYNC_SAVE))
    assert "collective-mismatch" in scan_ids(tmp_path, render(save_body=SYNC_SAVE, call="run_on_main(func=self.save)"))
    assert "collective-mismatch" not in scan_ids(tmp_path, render(save_body=SYNC_SAVE, helper_body=EVERYONE))
    assert "collective-mismatch" not in scan_ids(tmp_path, render())  # the handed function runs no collective
