"""grad-accum-without-no-sync, scan-recall12: accumulation counted on an object, reached through methods
(ClassyVision#656: ``task.train_step`` -> ``self.run_optimizer(loss)`` with ``if self._should_do_step():``; a helper
accumulator's ``should_update(step)`` predicate; a trainer's ``self.global_step % self.accum_steps`` two calls down)."""

from __future__ import annotations

import textwrap

import pytest

from tests.scan.conftest import shown_ids

SETUP = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

'''

MAIN = '''
def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    model = nn.Linear(16, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    run(model, optimizer, loader, sampler, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

TASK_PREDICATE = '''
class Task:
    def __init__(self, model, optimizer, period=1):
        self.model = model
        self.optimizer = optimizer
        self.period = period
        self.updates = 0

    def _should_step(self):
        return (self.updates + 1) % self.period == 0

    def apply_gradients(self, loss):
        (loss / self.period).backward()
        if self._should_step():
            self.optimizer.step()
            self.optimizer.zero_grad()
        self.updates += 1

    def train_step(self, batch):
        x, y = batch[0].cuda(), batch[1].cuda()
        self.apply_gradients(nn.functional.mse_loss(self.model(x), y))


def run(model, optimizer, loader, sampler, local_rank):
    task = Task(DDP(model, device_ids=[local_rank]), optimizer, period=4)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            task.train_step(batch)
'''

ACCUMULATOR_OBJECT = '''
class Accumulator:
    def __init__(self, steps):
        self.steps = steps

    def should_update(self, step):
        return (step + 1) % self.steps == 0


def run(model, optimizer, loader, sampler, local_rank):
    model = DDP(model, device_ids=[local_rank])
    accumulator = Accumulator(8)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda()) / 8
            loss.backward()
            if accumulator.should_update(step):
                optimizer.step()
                optimizer.zero_grad()
'''

TRAINER_ATTRIBUTES = '''
class Trainer:
    def __init__(self, model, optimizer, grad_accum_steps=4):
        self.model = model
        self.optimizer = optimizer
        self.grad_accum_steps = grad_accum_steps
        self.global_step = 0

    def backward_and_step(self, loss):
        loss.backward()
        self.global_step += 1
        if self.global_step % self.grad_accum_steps == 0:
            self.optimizer.step()
            self.optimizer.zero_grad()

    def fit_batch(self, x, y):
        self.backward_and_step(nn.functional.mse_loss(self.model(x.cuda()), y.cuda()))

    def train_epoch(self, loader):
        for x, y in loader:
            self.fit_batch(x, y)


def run(model, optimizer, loader, sampler, local_rank):
    trainer = Trainer(DDP(model, device_ids=[local_rank]), optimizer)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        trainer.train_epoch(loader)
'''

TASK_NO_SYNC = TASK_PREDICATE.replace(
    '''        x, y = batch[0].cuda(), batch[1].cuda()
        self.apply_gradients(nn.functional.mse_loss(self.model(x), y))''',
    '''        x, y = batch[0].cuda(), batch[1].cuda()
        if self._should_step():
            self.apply_gradients(nn.functional.mse_loss(self.model(x), y))
        else:
            with self.model.no_sync():
                self.apply_gradients(nn.functional.mse_loss(self.model(x), y))''')

TASK_NO_ACCUMULATION = TASK_PREDICATE.replace("optimizer, period=4)", "optimizer)")

LOG_PREDICATE = '''
class Task:
    def __init__(self, model, optimizer, log_every=10):
        self.model = model
        self.optimizer = optimizer
        self.log_every = log_every
        self.updates = 0

    def _should_log(self):
        return self.updates % self.log_every == 0

    def train_step(self, batch):
        loss = nn.functional.mse_loss(self.model(batch[0].cuda()), batch[1].cuda())
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        if self._should_log():
            print(self.updates, loss.item())
        self.updates += 1


def run(model, optimizer, loader, sampler, local_rank):
    task = Task(DDP(model, device_ids=[local_rank]), optimizer)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            task.train_step(batch)
'''


@pytest.mark.parametrize("body, flagged", [
    (TASK_PREDICATE, True),
    (ACCUMULATOR_OBJECT, True),
    (TRAINER_ATTRIBUTES, True),
    (TASK_NO_SYNC, False),
    (TASK_NO_ACCUMULATION, False),
    (LOG_PREDICATE, False),
], ids=["task-predicate", "accumulator-object", "trainer-attributes", "task-no-sync", "task-no-accumulation",
        "log-predicate"])
def test_accumulation_counted_on_an_object(tmp_path, body, flagged):
    code = SETUP + textwrap.dedent(body) + MAIN
    assert ("grad-accum-without-no-sync" in shown_ids(tmp_path, code)) is flagged
