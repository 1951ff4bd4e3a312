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


FABRIC_TRAINER = '''\
import torch
import torch.nn as nn
from lightning import Fabric
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, dataset, grad_accum_every=4):
        self.fabric = Fabric(accelerator="cuda", devices=8, strategy="ddp")
        self.fabric.launch()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        self.model, self.optimizer = self.fabric.setup(model, optimizer)
        self.loader = self.fabric.setup_dataloaders(DataLoader(dataset, batch_size=4, shuffle=True))
        self.grad_accum_every = grad_accum_every

    def fit(self, steps):
        batches = iter(self.loader)
        for _ in range(steps):
{inner}
            self.optimizer.step()
            self.optimizer.zero_grad()


if __name__ == "__main__":
    Trainer(nn.Linear(32, 1), TensorDataset(torch.randn(4096, 32), torch.randn(4096, 1))).fit(1000)
'''

FABRIC_PLAIN = '''\
            for _ in range(self.grad_accum_every):
                x, y = next(batches)
                loss = nn.functional.mse_loss(self.model(x), y)
                self.fabric.backward(loss / self.grad_accum_every)'''
FABRIC_NO_SYNC = '''\
            for i in range(self.grad_accum_every):
                x, y = next(batches)
                with self.fabric.no_backward_sync(self.model, enabled=i < self.grad_accum_every - 1):
                    loss = nn.functional.mse_loss(self.model(x), y)
                    self.fabric.backward(loss / self.grad_accum_every)'''


@pytest.mark.parametrize("inner, flagged", [(FABRIC_PLAIN, True), (FABRIC_NO_SYNC, False)])
def test_fabric_leaves_accumulation_to_the_script(tmp_path, inner, flagged):
    """Fabric shards, places and unwraps like the Lightning Trainer, but skipping the all-reduce while accumulating
    is the script's job (fabric.no_backward_sync): alphafold3-pytorch#23."""
    assert ("grad-accum-without-no-sync" in shown_ids(tmp_path, FABRIC_TRAINER.format(inner=inner))) is flagged


def test_fabric_still_handles_what_it_does_for_the_script(tmp_path):
    code = FABRIC_TRAINER.format(inner=FABRIC_NO_SYNC)
    assert not shown_ids(tmp_path, code) & {"missing-distributed-sampler", "missing-set-epoch", "missing-set-device",
                                            "checkpoint-without-module", "destroy-process-group-missing"}
