"""collective-mismatch under rank guards spelled every way real scripts spell them: a module constant
(``rank == MAIN_RANK``, ``rank != SPARE_RANK``), a walrus, ``is_main = not rank``, ``if not dist.get_rank():``,
``local_rank in (-1, 0)``, a flag derived once, ``rank % ngpus == 0``, a predicate helper, an early return in
the helper that runs the collective; near misses that must stay quiet: both arms call it, the guard only prints,
"distributed or not" tests (``local_rank != -1``, ``rank is not None``), a constant that is not a rank."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

MAIN_RANK = 0
SPARE_RANK = 3
NUM_CLASSES = 10


def is_primary():
    return dist.get_rank() == 0


def sync_metric(value):
    dist.all_reduce(value)
    return value / dist.get_world_size()


def train(local_rank, args):
    rank = dist.get_rank()
    ngpus = torch.cuda.device_count()
    master = rank == 0
    is_main = not rank
    model = DDP(nn.Linear(8, NUM_CLASSES).cuda(local_rank), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        loss = model(torch.randn(4, 8, device="cuda")).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        metric = loss.detach()
{guarded}


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train(local_rank, None)
'''


def guarded(test: str, body: str) -> str:
    return f"        if {test}:\n            {body}"


@pytest.mark.parametrize("test", [
    "rank == MAIN_RANK",
    "rank != SPARE_RANK",
    "(is_lead := rank == 0)",
    "is_main",
    "not dist.get_rank()",
    "local_rank in (-1, 0)",
    "master",
    "rank % ngpus == 0",
    "is_primary()",
])
@pytest.mark.parametrize("body", ["dist.barrier()", "metric = sync_metric(metric)"], ids=["direct", "helper"])
def test_collective_under_a_rank_guard(tmp_path, test, body):
    assert ID in scan_ids(tmp_path, SCRIPT.format(guarded=guarded(test, body)))


EARLY_RETURN = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def report(loss, step):
    if dist.get_rank() != 0:
        return
    dist.all_reduce(loss)
    print(step, loss.item())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        loss = model(torch.randn(4, 8, device="cuda")).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        report(loss.detach(), step)


main()
'''


def test_collective_after_a_rank_early_return_in_a_helper(tmp_path):
    assert ID in scan_ids(tmp_path, EARLY_RETURN)


@pytest.mark.parametrize("guarded_code", [
    "        if rank == MAIN_RANK:\n            dist.barrier()\n        else:\n            dist.barrier()",
    "        if rank == MAIN_RANK:\n            print(step, metric.item())\n        metric = sync_metric(metric)",
    "        if local_rank != -1:\n            dist.barrier()",
    "        if rank is not None:\n            metric = sync_metric(metric)",
    "        if NUM_CLASSES == 10:\n            dist.barrier()",
    "        metric = sync_metric(metric)\n        if master:\n            print(metric.item())",
], ids=["both-arms", "guard-prints-only", "distributed-or-not", "rank-is-set", "constant-not-rank", "sync-then-print"])
def test_quiet_when_every_rank_joins(tmp_path, guarded_code):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(guarded=guarded_code))


# ---- a rank skipping the DDP backward on its own data (a per-rank ``continue`` before ``loss.backward()``) ----

LOOP = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, local_rank):
        self.local_rank = local_rank
        self.model = {wrap}
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def compute_loss(self, batch):
        return self.model(batch).pow(2).mean()

    def fit(self, loader, start_step=0):
        for step, batch in enumerate(loader):
            batch = batch[0].cuda(self.local_rank)
{skip}
            self.opt.zero_grad()
            {backward}
            self.opt.step()


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(512, 8))
    Trainer(local_rank).fit(DataLoader(data, batch_size=8, sampler=DistributedSampler(data)))
'''
DDP_WRAP = "DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])"
PLAIN = "nn.Linear(8, 1).cuda(local_rank)"


def skip(lines: str) -> str:
    return "\n".join("            " + line for line in lines.splitlines())


@pytest.mark.parametrize("code", [
    "loss = self.compute_loss(batch)\nif torch.isnan(loss):\n    continue",
    "loss = self.compute_loss(batch)\nif not torch.isfinite(loss).all():\n    continue",
    "try:\n    loss = self.compute_loss(batch)\nexcept ValueError:\n    continue",
    "out = self.model(batch)\nif out is None:\n    continue\nloss = out.pow(2).mean()",
    "if batch.numel() == 0:\n    continue\nloss = self.compute_loss(batch)",
], ids=["isnan", "not-isfinite", "except-continue", "output-none", "empty-batch"])
def test_backward_skipped_on_this_ranks_data(tmp_path, code):
    src = LOOP.format(wrap=DDP_WRAP, skip=skip(code), backward="loss.backward()")
    assert ID in scan_ids(tmp_path, src)


@pytest.mark.parametrize("wrap, code, backward", [
    (DDP_WRAP, "loss = self.compute_loss(batch)\nbad = torch.isnan(loss).float()\ndist.all_reduce(bad)\n"
               "if bad.item() > 0:\n    continue", "loss.backward()"),
    (DDP_WRAP, "if step < start_step:\n    continue\nloss = self.compute_loss(batch)", "loss.backward()"),
    (PLAIN, "loss = self.compute_loss(batch)\nif torch.isnan(loss):\n    continue", "loss.backward()"),
    (DDP_WRAP, "loss = self.compute_loss(batch)", "loss.backward()\n            if torch.isnan(loss):\n"
                                                  "                continue"),
    (DDP_WRAP, "loss = self.compute_loss(batch)\nif torch.isnan(loss):\n    continue",
     "with self.model.no_sync():\n                loss.backward()"),
    (DDP_WRAP, "loss = self.compute_loss(batch)\nlosses = [torch.zeros_like(loss) for _ in range(2)]\n"
               "dist.all_gather(losses, loss)\nif torch.stack(losses).isnan().any():\n    continue", "loss.backward()"),
], ids=["flag-all-reduced", "resume-counter", "not-distributed", "after-backward", "no-sync", "gathered-losses"])
def test_quiet_when_the_skip_is_shared_or_harmless(tmp_path, wrap, code, backward):
    src = LOOP.format(wrap=wrap, skip=skip(code), backward=backward)
    assert ID not in scan_ids(tmp_path, src)


# ---- a shape-bound collective given a tensor whose length depends on this rank's data ----

RAGGED = '''
import os

import torch
import torch.distributed as dist
from accelerate import Accelerator

accelerator = Accelerator()


def keep_top(scores, labels, world):
{body}


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    for _ in range(10):
        scores = torch.rand(64, device="cuda")
        keep_top(scores, (scores > 0.5).long(), dist.get_world_size())


main()
'''


def ragged(lines: str) -> str:
    return RAGGED.format(body="\n".join("    " + line for line in lines.splitlines()))


@pytest.mark.parametrize("code", [
    "kept = scores[labels > 0]\nreturn accelerator.gather(kept)",
    "mask = labels.bool()\nkept = scores[mask]\nparts = [torch.zeros_like(kept) for _ in range(world)]\n"
    "dist.all_gather(parts, kept)",
    "idx = labels.nonzero()\ndist.all_reduce(idx)",
    "kept = torch.masked_select(scores, labels > 0)\nreturn accelerator.gather_for_metrics(kept)",
], ids=["gather-mask", "all-gather-named-mask", "all-reduce-nonzero", "masked-select"])
def test_collective_of_a_data_dependent_length(tmp_path, code):
    assert ID in scan_ids(tmp_path, ragged(code))


@pytest.mark.parametrize("code", [
    "kept = accelerator.pad_across_processes(scores[labels > 0])\nreturn accelerator.gather(kept)",
    "out = [None] * world\ndist.all_gather_object(out, scores[labels > 0].tolist())",
    "first = scores[:8]\nreturn accelerator.gather(first)",
    "total = (scores * labels).sum()\ndist.all_reduce(total)",
], ids=["padded", "gather-object", "fixed-slice", "reduced-sum"])
def test_quiet_for_fixed_shapes(tmp_path, code):
    assert ID not in scan_ids(tmp_path, ragged(code))
