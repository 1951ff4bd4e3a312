"""missing-set-epoch: a validation loader handed to a local evaluation function is read without autograd (issue 11).

UniMatch builds ``DistributedSampler(valset)`` (shuffle on by default) and hands its loader to ``evaluate(model,
loader, ...)``, whose loop runs under ``torch.no_grad()``: the order of an evaluation pass does not matter, so no
``set_epoch`` is needed. The loader may be handed by position or keyword, under any parameter name, to a function
that is decorated gradient-free or holds the block itself. Handed to a local function that trains on it (steps an
optimizer), the missing ``set_epoch`` still warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

ID = "missing-set-epoch"

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

{reader}


def main():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    train_set, val_set = TensorDataset(torch.randn(64, 8)), TensorDataset(torch.randn(32, 8))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=4, sampler=train_sampler)
    val_sampler = DistributedSampler(val_set)
    val_loader = DataLoader(val_set, batch_size=4, sampler=val_sampler)
    for epoch in range(10):
        train_sampler.set_epoch(epoch)
        net.train()
        for (x,) in train_loader:
            loss = net(x.cuda()).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        {call}
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

NO_GRAD_BLOCK = '''
def evaluate(model, loader, mode):
    model.eval()
    total = torch.zeros(1).cuda()
    with torch.no_grad():
        for (x,) in loader:
            total += model(x.cuda()).sum()
    dist.all_reduce(total)
    return total.item()'''
DECORATED = '''
@torch.no_grad()
def score(net, batches):
    net.eval()
    outs = []
    for (x,) in batches:
        outs.append(net(x.cuda()))
    return outs'''
INFERENCE_LOOP = '''
def run_validation(model, data_iter):
    model.eval()
    scores = []
    with torch.inference_mode():
        for step, (x,) in enumerate(data_iter):
            scores.append(model(x.cuda()).mean())
    return scores'''

QUIET = {
    "positional, no_grad block": (NO_GRAD_BLOCK, "evaluate(net, val_loader, 'original')"),
    "keyword": (NO_GRAD_BLOCK, "evaluate(net, loader=val_loader, mode='original')"),
    "inference_mode, enumerate": (INFERENCE_LOOP, "run_validation(net, val_loader)"),
    "decorated, other names": (DECORATED, "score(net, val_loader)"),
    "result kept": (NO_GRAD_BLOCK, "miou = evaluate(net, val_loader, 'sliding_window')"),
}

TRAINS_ON_IT = '''
def extra_epoch(model, loader, optimizer):
    for (x,) in loader:
        loss = model(x.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()'''

LOUD = {
    "handed to a function that trains on it": (TRAINS_ON_IT, "extra_epoch(net, val_loader, opt)"),
    "keyword, trains on it": (TRAINS_ON_IT, "extra_epoch(net, optimizer=opt, loader=val_loader)"),
}


def _warned(tmp_path: Path, reader: str, call: str) -> bool:
    return ID in shown_ids(tmp_path, TEMPLATE.format(reader=reader, call=call))


@pytest.mark.parametrize("case", QUIET, ids=list(QUIET))
def test_loader_handed_to_a_gradient_free_evaluation_is_quiet(tmp_path, case):
    assert not _warned(tmp_path, *QUIET[case])


@pytest.mark.parametrize("case", LOUD, ids=list(LOUD))
def test_loader_handed_to_a_training_function_still_warns(tmp_path, case):
    assert _warned(tmp_path, *LOUD[case])
