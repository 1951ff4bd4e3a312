"""collective-mismatch across more spellings of a collective: the DeepSpeed engine by what built it, whatever its
name (``self.deepspeed, opt, _, sched = deepspeed.initialize(...)``, ``engine = deepspeed.initialize(...)[0]``), under
a rank-0 guard spelled as a method; near misses that must stay quiet: every rank saves, the optimizer (second element)
is not the engine, a rank-0 ``torch.save`` of the engine's module."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

ENGINE_IN_CLASS = '''
import deepspeed
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, args):
        self.args = args
        {unpack} = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())

    def is_world_process_zero(self):
        return torch.distributed.get_rank() == 0

    def save(self, step):
        {save}

    def train(self, batches):
        for step, (x, y) in enumerate(batches):
            loss = nn.functional.mse_loss(self.ds(x), y)
            self.ds.backward(loss)
            self.ds.step()
            self.save(step)
'''

ENGINE_FLAT = '''
import deepspeed
import torch
import torch.distributed as dist
import torch.nn as nn

deepspeed.init_distributed()
net = nn.Linear(8, 8)
ds_model = deepspeed.initialize(model=net, model_parameters=net.parameters(), config="ds.json")[{index}]
for step in range(100):
    loss = ds_model(torch.randn(4, 8)).sum()
    ds_model.backward(loss)
    ds_model.step()
    if dist.get_rank() == 0 and step % 10 == 0:
        {save}
'''


@pytest.mark.parametrize("code", [
    ENGINE_IN_CLASS.format(unpack="self.ds, self.optimizer, _, self.lr_scheduler",
                           save="if self.is_world_process_zero():\n            self.ds.save_checkpoint('out')"),
    ENGINE_IN_CLASS.format(unpack="self.ds, self.optimizer, _, self.lr_scheduler",
                           save="if torch.distributed.get_rank() == 0:\n            self.ds.load_checkpoint('out')"),
    ENGINE_FLAT.format(index="0", save="ds_model.save_checkpoint('out', tag=str(step))"),
], ids=["unpacked-attribute-method-guard", "unpacked-attribute-load", "indexed-first-element"])
def test_engine_checkpoint_on_rank0_only(tmp_path, code):
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("code", [
    ENGINE_IN_CLASS.format(unpack="self.ds, self.optimizer, _, self.lr_scheduler",
                           save="self.ds.save_checkpoint('out')"),                       # every rank saves
    ENGINE_IN_CLASS.format(unpack="self.ds, self.optimizer, _, self.lr_scheduler",
                           save="if self.is_world_process_zero():\n            "
                                "torch.save(self.ds.module.state_dict(), 'w.pt')"),     # a plain rank-0 save
    ENGINE_FLAT.format(index="1", save="ds_model.save_checkpoint('out')"),                # element 1: not the engine
], ids=["every-rank", "rank0-torch-save", "second-element"])
def test_quiet_when_every_rank_calls_or_not_the_engine(tmp_path, code):
    assert ID not in scan_ids(tmp_path, code)
