"""collective-mismatch (scan-recall8): a DeepSpeed engine kept as ``self.<name>`` (unpacked from
``deepspeed.initialize(...)`` or taken as its ``[0]``) in the constructor, and its ``save_checkpoint`` called on rank 0
only from another method (DeepSpeed's docs: every process must call it; deepspeed#797/#801). Quiet when every rank
calls it."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import argparse

import deepspeed
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, args):
        net = nn.Linear(8, 8)
        {bind}

    def save(self, step):
{save}

    def fit(self):
        for step in range(100):
            loss = self.net(torch.randn(4, 8, device=self.net.device)).pow(2).mean()
            self.net.backward(loss)
            self.net.step()
            if step % 10 == 0:
                self.save(step)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    Trainer(parser.parse_args()).fit()
'''

UNPACKED = "self.net, self.optimizer, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())"
INDEXED = "self.net = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())[0]"
ON_RANK0 = '''        if torch.distributed.get_rank() == 0:
            self.net.save_checkpoint("checkpoints", tag=f"step{step}")'''
EVERY_RANK = '''        self.net.save_checkpoint("checkpoints", tag=f"step{step}")
        if torch.distributed.get_rank() == 0:
            print("saved", step)'''


@pytest.mark.parametrize("bind", [UNPACKED, INDEXED], ids=["unpacked", "indexed"])
def test_engine_save_on_rank0(tmp_path, bind):
    assert ID in scan_ids(tmp_path, SCRIPT.format(bind=bind, save=ON_RANK0))


@pytest.mark.parametrize("bind", [UNPACKED, INDEXED], ids=["unpacked", "indexed"])
def test_engine_save_on_every_rank(tmp_path, bind):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(bind=bind, save=EVERY_RANK))
