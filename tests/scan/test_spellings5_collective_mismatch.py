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


# A collective under a test on the process's own clock (speechbrain's time-based intra-epoch checkpoint, whose
# run_on_main ends in a barrier): ranks take the test at different moments.
CLOCK = '''
import os
import time
import datetime

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_barrier():
    if dist.is_initialized():
        dist.barrier()


def run_on_main(func):
    if int(os.environ.get("RANK", "0")) == 0:
        func()
    ddp_barrier()


def save():
    torch.save({{}}, "ckpt.pt")


def train(model, batches, interval):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    {setup}
    for step, x in enumerate(batches):
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        {check}


def main():
    dist.init_process_group("gloo")
    model = DDP(nn.Linear(4, 4))
    train(model, [torch.randn(2, 4) for _ in range(100)], 60.0)


main()
'''


@pytest.mark.parametrize("setup, check", [
    ("last = time.time()", "if time.time() - last >= interval:\n            run_on_main(save)\n            last = time.time()"),
    ("start = time.perf_counter()", "elapsed = time.perf_counter() - start\n        if elapsed > interval:\n"
                                    "            dist.all_reduce(loss.detach())"),
    ("t0 = datetime.datetime.now()", "if (datetime.datetime.now() - t0).total_seconds() > interval:\n"
                                     "            ddp_barrier()"),
], ids=["run-on-main-helper", "elapsed-name", "datetime-now"])
def test_collective_under_a_clock_test(tmp_path, setup, check):
    assert ID in scan_ids(tmp_path, CLOCK.format(setup=setup, check=check))


@pytest.mark.parametrize("setup, check", [
    ("last = time.time()", "if step % 100 == 0:\n            run_on_main(save)"),                     # a step count
    ("last = time.time()", "due = torch.tensor(float(time.time() - last >= interval))\n"
                           "        dist.broadcast(due, 0)\n        if due.item():\n            run_on_main(save)"),
    ("last = time.time()", "if time.time() - last >= interval:\n            print(step)\n"
                           "            last = time.time()"),                                          # no collective
    ("last = time.time()", "if dist.get_rank() == 0 and time.time() - last >= interval:\n"
                           "            save()"),                                                      # rank 0 saves
    ("last = time.time()", "over = torch.tensor([time.time() - last > interval])\n"
                           "        dist.all_reduce(over)\n        done = over.item()\n        if done:\n"
                           "            run_on_main(save)"),                                            # Megatron's MAX
    ("last = time.time()", "if time.time() - last > interval:\n            break\n        run_on_main(save)"),
], ids=["step-count", "broadcast-decision", "no-collective", "rank0-save", "all-reduced-decision", "after-exit"])
def test_quiet_without_a_clock_divergent_collective(tmp_path, setup, check):
    assert ID not in scan_ids(tmp_path, CLOCK.format(setup=setup, check=check))
