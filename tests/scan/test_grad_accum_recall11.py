"""grad-accum-without-no-sync, scan-recall11: DDP's own sync flag (``model.require_backward_grad_sync``), the
nanoGPT-family switch, counts only when it is set before the forward pass that reads it (build-nanogpt#30)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

SCRIPT = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{{local_rank}}"
    torch.cuda.set_device(device)
else:
    local_rank, device = 0, "cuda"
model = nn.Linear(128, 128).to(device)
if ddp:
    model = DDP(model, device_ids=[local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
accum_steps = 8

for step in range(5000):
    optimizer.zero_grad()
    for micro_step in range(accum_steps):
        x = torch.randn(16, 128, device=device)
{body}
    optimizer.step()
if ddp:
    dist.destroy_process_group()
'''

FLAG = "model.require_backward_grad_sync = (micro_step == accum_steps - 1)"
FORWARD = "loss = model(x).pow(2).mean() / accum_steps"
BACKWARD = "loss.backward()"


def _body(*lines: str) -> str:
    return "\n".join(" " * 8 + line for line in lines)


@pytest.mark.parametrize("body, flagged", [
    (_body(FORWARD, FLAG, BACKWARD), True),  # build-nanogpt#30 before its fix
    (_body(FORWARD, "if ddp:", "    " + FLAG, BACKWARD), True),
    (_body(FORWARD, "with torch.no_grad():", "    pass", "if ddp:",
           "    model.require_backward_grad_sync = (", "        micro_step == accum_steps - 1", "    )", BACKWARD), True),
    (_body(FLAG, FORWARD, BACKWARD), False),  # nanoGPT's train.py: set before the forward
    (_body("if ddp:", "    " + FLAG, "with torch.autocast('cuda', dtype=torch.bfloat16):", "    " + FORWARD, BACKWARD),
     False),
    (_body("update = micro_step == accum_steps - 1", "model.require_backward_grad_sync = update", FORWARD, BACKWARD),
     False),
])
def test_the_sync_flag_counts_only_before_the_forward(tmp_path, body, flagged):
    assert ("grad-accum-without-no-sync" in shown_ids(tmp_path, SCRIPT.format(body=body))) is flagged
