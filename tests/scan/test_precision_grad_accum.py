"""grad-accum-without-no-sync precision (scan-precision): the ways besides DDP's no_sync() to skip the all-reduce on
non-final micro-steps (Fabric, Accelerate, FSDP2) are known; accumulation without any of them still warns."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

ID = "grad-accum-without-no-sync"

DDP_LOOP = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum_steps = 4
for i in range(100):
    is_last = (i + 1) % accum_steps == 0
{skip}
    loss = model(torch.randn(4, 8).cuda()).sum() / accum_steps
    loss.backward()
    if is_last:
        optimizer.step()
        optimizer.zero_grad()
'''

# The raw group below makes the scan judge the Fabric loop itself (as in a project that also has raw DDP code).
FABRIC_LOOP = '''
import torch
import torch.distributed as dist
import torch.nn as nn
import lightning as L

dist.init_process_group("nccl")

fabric = L.Fabric(strategy="ddp", devices=2)
fabric.launch()
model = fabric.setup(nn.Linear(8, 1))
optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
for i in range(100):
    is_accumulating = i % 4 != 0
{body}
    if not is_accumulating:
        optimizer.step()
        optimizer.zero_grad()
'''


def _warned(tmp_path: Path, code: str) -> bool:
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    return ID in shown_findings([str(path)])[0]


def test_fsdp2_requires_gradient_sync_switch_skips_the_all_reduce(tmp_path):
    assert not _warned(tmp_path, DDP_LOOP.format(skip="    model.set_requires_gradient_sync(is_last)"))
    assert _warned(tmp_path, DDP_LOOP.format(skip="    pass"))


def test_fabric_no_backward_sync_skips_the_all_reduce(tmp_path):
    inside = ("    with fabric.no_backward_sync(model, enabled=is_accumulating):\n"
              "        loss = model(torch.randn(4, 8)).sum()\n"
              "        fabric.backward(loss)")
    assert not _warned(tmp_path, FABRIC_LOOP.format(body=inside))
    bare = "    loss = model(torch.randn(4, 8)).sum()\n    fabric.backward(loss)"
    assert _warned(tmp_path, FABRIC_LOOP.format(body=bare))
