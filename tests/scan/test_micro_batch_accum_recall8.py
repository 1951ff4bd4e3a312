"""grad-accum-without-no-sync (scan-recall8): accumulation written as an inner loop over micro-batches - backward()
on each, the optimizer stepped after the loop - with no no_sync (open_lm#60: ``for ii in range(args.accum_freq):
... local_loss.backward()`` then ``optimizer.step()``; every micro-batch all-reduces). The micro-batches counted by
an option, a literal, or a split of the batch; the loss scaled through a GradScaler or Accelerate's backward. Near
misses that stay quiet: the non-final micro-batches under ``no_sync()`` or a project's own sync toggle (edm's
``misc.ddp_sync``), a count of 1 by default, and an optimizer stepped inside the loop (one update per micro-batch)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "grad-accum-without-no-sync"

DDP_SCRIPT = '''
import argparse
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
{helper}

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum-freq", type=int, default={default})
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    scaler = torch.cuda.amp.GradScaler()
    for step in range(1000):
        batch = torch.randn(32, 64, device="cuda")
        optimizer.zero_grad()
{inner}
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    main()
'''

BY_OPTION = '''        for ii in range(args.accum_freq):
            loss = model(batch[ii::args.accum_freq]).pow(2).mean() / args.accum_freq
            scaler.scale(loss).backward()'''
BY_CHUNKS = '''        for micro in batch.chunk(4):
            loss = model(micro).pow(2).mean()
            scaler.scale(loss).backward()'''
UNDER_NO_SYNC = '''        for ii in range(args.accum_freq):
            ctx = model.no_sync() if ii < args.accum_freq - 1 else contextlib.nullcontext()
            with ctx:
                loss = model(batch[ii::args.accum_freq]).pow(2).mean()
                scaler.scale(loss).backward()'''
OWN_TOGGLE = "from training_utils import ddp_sync  # the project's own no_sync toggle, in another module"
UNDER_OWN_TOGGLE = '''        for ii in range(args.accum_freq):
            with ddp_sync(model, ii == args.accum_freq - 1):
                loss = model(batch[ii::args.accum_freq]).pow(2).mean()
                scaler.scale(loss).backward()'''
STEP_INSIDE = '''        for micro in batch.chunk(4):
            loss = model(micro).pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            optimizer.zero_grad()'''

ACCELERATE_SCRIPT = '''
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

GRADIENT_ACCUMULATE_EVERY = 4


def cycle(loader):
    while True:
        yield from loader


accelerator = Accelerator()
model = nn.Linear(64, 64)
optim = torch.optim.Adam(model.parameters(), lr=1e-4)
loader = DataLoader(TensorDataset(torch.randn(4096, 64)), batch_size=16, shuffle=True)
model, optim, loader = accelerator.prepare(model, optim, loader)
batches = cycle(loader)
for i in range(10000):
    for _ in range(GRADIENT_ACCUMULATE_EVERY):
        (x,) = next(batches)
        loss = model(x).pow(2).mean()
        accelerator.backward(loss / GRADIENT_ACCUMULATE_EVERY)
    accelerator.clip_grad_norm_(model.parameters(), 0.5)
    optim.step()
    optim.zero_grad()
'''

POSITIVE = {"count-by-option": (BY_OPTION, 4), "split-of-the-batch": (BY_CHUNKS, 1)}
QUIET = {"under-no-sync": (UNDER_NO_SYNC, 4), "under-own-toggle": (UNDER_OWN_TOGGLE, 4),
         "count-one-by-default": (BY_OPTION, 1), "optimizer-stepped-inside": (STEP_INSIDE, 1)}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_micro_batch_loop_without_no_sync(tmp_path, name):
    inner, default = POSITIVE[name]
    assert ID in scan_ids(tmp_path, DDP_SCRIPT.format(inner=inner, default=default, helper=""))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_micro_batch_loop_near_misses(tmp_path, name):
    inner, default = QUIET[name]
    helper = OWN_TOGGLE if name == "under-own-toggle" else ""
    assert ID not in scan_ids(tmp_path, DDP_SCRIPT.format(inner=inner, default=default, helper=helper))


def test_accelerate_backward_per_micro_batch(tmp_path):
    assert ID in scan_ids(tmp_path, ACCELERATE_SCRIPT)
