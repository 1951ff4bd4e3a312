"""collective-mismatch for a forward of the DDP model on some ranks only when the model has buffers to broadcast:
besides BatchNorm statistics, a buffer the model registers itself (open_clip's non-persistent ``attn_mask``,
open_clip#1155), reached through an evaluation helper after ``if not is_master(args): return``. Near misses: no
buffer at all, ``broadcast_buffers=False``, and a rank-0 forward of the bare model before the line that wraps it
(llm.c writes reference tensors on the master before ``model = DDP(model)``)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
{buffer}

    def forward(self, x):
        return self.fc(x)


def zero_shot(model, x):
    with torch.no_grad():
        return model(x)


def evaluate(model, rank):
    if rank != 0:
        return {{}}
    return {{"acc": zero_shot(model, torch.randn(4, 8).cuda()).mean().item()}}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = DistributedDataParallel(Net().cuda(), device_ids=[local_rank]{options})
    for epoch in range(3):
        model(torch.randn(4, 8).cuda()).sum().backward()
        evaluate(model, rank)
        dist.barrier()


if __name__ == "__main__":
    main()
'''

BUFFER = '        self.register_buffer("attn_mask", torch.ones(4, 4).triu_(1), persistent=False)'


def test_registered_buffer_makes_a_rank0_forward_a_collective(tmp_path):
    assert ID in scan_ids(tmp_path, SCRIPT.format(buffer=BUFFER, options=""))


def test_batchnorm_statistics_still_count(tmp_path):
    code = SCRIPT.format(buffer="        self.bn = nn.BatchNorm1d(2)", options="")
    assert ID in scan_ids(tmp_path, code)


def test_no_buffer_stays_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(buffer="        pass", options=""))


def test_broadcast_buffers_off_stays_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(buffer=BUFFER, options=", broadcast_buffers=False"))


def test_rank0_forward_before_the_wrap_stays_quiet(tmp_path):
    code = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("bias", torch.tril(torch.ones(8, 8)))

    def forward(self, x):
        return self.fc(x)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    master_process = dist.get_rank() == 0
    model = GPT().cuda()
    if master_process:
        logits = model(torch.randn(2, 8).cuda())
        torch.save(logits, "reference.pt")
    model = DDP(model, device_ids=[local_rank])
    for step in range(10):
        model(torch.randn(2, 8).cuda()).sum().backward()


if __name__ == "__main__":
    main()
'''
    assert ID not in scan_ids(tmp_path, code)


GUARDED = '''
import os
import torch
import torch.distributed as dist


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    {guard}
        dist.all_reduce(torch.ones(1).cuda())


if __name__ == "__main__":
    main()
'''



@pytest.mark.parametrize("guard", [
    "if (r := dist.get_rank()) == 0:",
    "if (is_main := rank == 0):",
    "if 0 == (r := rank):",
    "if not rank:",
    "if local_rank in (-1, 0):",
    "if rank == 0 or os.environ.get('DEBUG'):",
])
def test_rank_guard_spellings(tmp_path, guard):
    assert ID in scan_ids(tmp_path, GUARDED.format(guard=guard))


def test_walrus_on_a_rank_free_value_stays_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, GUARDED.format(guard="if (n := torch.cuda.device_count()) > 0:"))


def test_method_of_an_object_built_in_the_call(tmp_path):
    """``Evaluator(model).run()`` under a rank test, ``run`` reducing through a helper."""
    code = GUARDED.format(guard="if rank == 0:").replace(
        "        dist.all_reduce(torch.ones(1).cuda())", "        Evaluator(None).run()").replace(
        "\n\ndef main():", "\n\ndef reduce_mean(t):\n    dist.all_reduce(t)\n    return t / dist.get_world_size()\n\n\n"
        "class Evaluator:\n    def __init__(self, model):\n        self.model = model\n\n    def run(self):\n"
        "        return reduce_mean(torch.ones(1).cuda())\n\n\ndef main():")
    assert ID in scan_ids(tmp_path, code)


LIT = '''
import torch
import torch.nn as nn
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 2)

    def validation_step(self, batch, batch_idx):
        loss = self.net(batch).sum()
        {body}
        return loss


if __name__ == "__main__":
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp")
    trainer.validate(Model(), torch.utils.data.DataLoader(torch.randn(16, 8), batch_size=4))
'''


def test_lightning_all_gather_on_rank_zero(tmp_path):
    assert ID in scan_ids(tmp_path, LIT.format(body="if self.global_rank == 0:\n            self.all_gather(loss)"))


def test_lightning_all_gather_on_every_rank_stays_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, LIT.format(body="gathered = self.all_gather(loss)"))


TORCHMETRICS = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import torchmetrics
from torch.nn.parallel import DistributedDataParallel as DDP


class Stats:
    def compute(self):
        return 1


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    acc = torchmetrics.Accuracy(task="multiclass", num_classes=2).cuda()
    stats = Stats()
    for step in range(10):
        out = model(torch.randn(4, 8).cuda())
        out.sum().backward()
        acc.update(out.argmax(-1), torch.zeros(4, dtype=torch.long).cuda())
{tail}


if __name__ == "__main__":
    main()
'''


def test_torchmetrics_compute_on_rank_zero(tmp_path):
    """Metric.compute() gathers every process's state: on rank 0 only it waits for the others for ever."""
    assert ID in scan_ids(tmp_path, TORCHMETRICS.format(tail="    if dist.get_rank() == 0:\n        print(acc.compute())"))


@pytest.mark.parametrize("tail", [
    "    value = acc.compute()\n    if dist.get_rank() == 0:\n        print(value)",
    "    if dist.get_rank() == 0:\n        print(stats.compute())",
])
def test_compute_on_every_rank_or_of_a_local_class_stays_quiet(tmp_path, tail):
    assert ID not in scan_ids(tmp_path, TORCHMETRICS.format(tail=tail))
