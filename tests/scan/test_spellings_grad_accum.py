"""grad-accum-without-no-sync when the accumulation gate skips the rest of the loop body
(``if (i + 1) % k != 0: continue`` before ``optimizer.step()``), with its near misses."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "grad-accum-without-no-sync"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
model = DDP(nn.Linear(4, 2).cuda(), device_ids=[rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
accumulation_steps = 4
for i, x in enumerate(torch.randn(100, 2, 4)):
{body}
'''


@pytest.mark.parametrize("body", [
    "    loss = model(x.cuda()).sum() / accumulation_steps\n    loss.backward()\n"
    "    if (i + 1) % accumulation_steps != 0:\n        continue\n    optimizer.step()\n    optimizer.zero_grad()",
    "    scaler.scale(model(x.cuda()).sum()).backward()\n"
    "    if (i + 1) % accumulation_steps:\n        continue\n    scaler.step(optimizer)\n    scaler.update()",
])
def test_gate_that_skips_the_step(tmp_path, body):
    assert ID in scan_ids(tmp_path, SCRIPT.format(body=body))


@pytest.mark.parametrize("body", [
    # no_sync on the skipped micro-steps
    "    ctx = model.no_sync() if (i + 1) % accumulation_steps else torch.enable_grad()\n"
    "    with ctx:\n        model(x.cuda()).sum().backward()\n"
    "    if (i + 1) % accumulation_steps != 0:\n        continue\n    optimizer.step()",
    # the continue skips data, not the step: every iteration steps
    "    if i % 10 == 0:\n        continue\n    model(x.cuda()).sum().backward()\n    optimizer.step()",
])
def test_gate_near_misses(tmp_path, body):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(body=body))
