"""collective-mismatch spellings (scan-recall7b, session 9): an early stop on this rank's own validation metric out of
an epoch loop whose optimizer steps sit in a local helper the loop calls (``train_one_epoch(...)``,
``self.fit_batch(batch)`` in an inner loop): the epoch loop is still the training loop, so the rank that stops leaves
the others in the next gradient all-reduce (speechbrain#1939's family). Near misses that stay quiet: the metric
all-reduced first, the decision broadcast, a stop on the epoch counter alone, and a loop that never trains (the helper
it calls only evaluates)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += F.cross_entropy(model(x.cuda()), y.cuda()).item()
    return total / len(loader)


class Stopper:
    def __init__(self, patience=5):
        self.best, self.bad, self.patience = None, 0, patience

    def should_stop(self, metric):
        if self.best is None or metric < self.best:
            self.best, self.bad = metric, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_set = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    val_set = TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,)))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=16, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=16, sampler=DistributedSampler(val_set, shuffle=False))
    stopper = Stopper()
    best, bad_epochs = float("inf"), 0
{body}
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def _script(body: str) -> str:
    return SCRIPT.format(body="\n".join("    " + line if line else line for line in body.strip("\n").splitlines()))


WARN = {
    "helper_then_patience": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    val_loss = evaluate(model, val_loader)
    if val_loss < best:
        best, bad_epochs = val_loss, 0
    else:
        bad_epochs += 1
    if bad_epochs >= 5:
        break
''',
    "helper_then_stopper_object": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    if stopper.should_stop(evaluate(model, val_loader)):
        break
''',
    "helper_then_threshold": '''
epoch = 0
while epoch < 100:
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    epoch += 1
    if evaluate(model, val_loader) < 0.05:
        break
''',
}

QUIET = {
    "metric_all_reduced": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    val = torch.tensor([evaluate(model, val_loader)], device="cuda")
    dist.all_reduce(val)
    if stopper.should_stop(val.item() / dist.get_world_size()):
        break
''',
    "decision_broadcast": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    flag = [stopper.should_stop(evaluate(model, val_loader))]
    dist.broadcast_object_list(flag, src=0)
    if flag[0]:
        break
''',
    "epoch_counter_only": '''
for epoch in range(1000):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    if epoch >= 100:
        break
''',
    "loop_never_trains": '''
for epoch in range(3):
    if evaluate(model, val_loader) < 0.05:
        break
train_one_epoch(model, loader, optimizer)
''',
}


@pytest.mark.parametrize("name", sorted(WARN))
def test_early_stop_out_of_an_epoch_loop_training_through_a_helper_warns(tmp_path, name):
    assert ID in scan_ids(tmp_path, _script(WARN[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_synchronised_or_non_training_stops_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, _script(QUIET[name]))
