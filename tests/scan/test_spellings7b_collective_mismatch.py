"""collective-mismatch spellings (scan-recall7b, second session): a collective in an ``except`` handler of a step run
in a loop. Only the rank whose batch raised (an out-of-memory error, a bad sample) runs the handler, so it waits in
that collective while the others go on to the next step's gradient all-reduce (pytorch#44353's family: recover from an
OOM on one rank). Spelled as a direct ``dist.barrier()`` / ``all_reduce``, through a local helper, in a bare
``except``. Near misses that stay quiet: a handler that re-raises, the end of a shard (StopIteration: every rank gets
there at the same step), a ``finally`` block (every rank runs it), the collective after the try on every rank, a try
body that runs the same collective (both paths join it), a try outside any loop (set-up)."""

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
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def average(value):
    t = torch.tensor([value], device="cuda")
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def train(model, loader, optimizer):
{body}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        train(model, loader, optimizer)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

STEP = '''
loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
optimizer.zero_grad()
loss.backward()
optimizer.step()'''


def body(text: str) -> str:
    return SCRIPT.format(body="\n".join("    " + line if line else line for line in text.strip("\n").splitlines()))


def indent(text: str, depth: int) -> str:
    return "\n".join(" " * (4 * depth) + line for line in text.strip("\n").splitlines())


POSITIVE = {
    "barrier-after-oom": f'''
for x, y in loader:
    try:
{indent(STEP, 2)}
    except RuntimeError as err:
        if "out of memory" not in str(err):
            raise
        torch.cuda.empty_cache()
        dist.barrier()
''',
    "helper-in-handler": f'''
for x, y in loader:
    try:
{indent(STEP, 2)}
    except ValueError:
        print("bad batch, mean skipped", average(1.0))
        continue
''',
    "all-reduce-in-bare-except": f'''
for x, y in loader:
    try:
{indent(STEP, 2)}
    except Exception:
        flag = torch.ones(1, device="cuda")
        dist.all_reduce(flag)
''',
}

QUIET = {
    "handler-reraises": f'''
for x, y in loader:
    try:
{indent(STEP, 2)}
    except RuntimeError:
        dist.barrier()
        raise
''',
    "finally-block": f'''
for x, y in loader:
    try:
{indent(STEP, 2)}
    finally:
        dist.barrier()
''',
    "flag-reduced-after-try": f'''
for x, y in loader:
    failed = torch.zeros(1, device="cuda")
    try:
{indent(STEP, 2)}
    except RuntimeError:
        failed += 1
    dist.all_reduce(failed)
    if failed.item() > 0:
        break
''',
    "same-collective-in-try": f'''
for x, y in loader:
    ok = torch.ones(1, device="cuda")
    try:
{indent(STEP, 2)}
        dist.all_reduce(ok)
    except RuntimeError:
        ok.zero_()
        dist.all_reduce(ok)
''',
    "end-of-shard": f'''
it = iter(loader)
while True:
    try:
        x, y = next(it)
{indent(STEP, 2)}
    except StopIteration:
        dist.barrier()
        break
''',
    "try-outside-loop": f'''
try:
    dist.barrier()
except RuntimeError:
    dist.barrier()
for x, y in loader:
{indent(STEP, 1)}
''',
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_collective_in_an_except_handler_of_a_step(tmp_path, name):
    assert ID in scan_ids(tmp_path, body(POSITIVE[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_every_rank_joins(tmp_path, name):
    assert ID not in scan_ids(tmp_path, body(QUIET[name]))


OPTIMIZER_WINDOWS = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Solver:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.last_iter = 0
        self.schedules = {{
            "warmup": {{"optimizer": torch.optim.SGD(model.parameters(), lr=0.1), "start": 0, "end": 100}},
            "main": {{"optimizer": torch.optim.AdamW(model.parameters(), lr=1e-3), "start": 100, "end": -1}},
        }}

    def step(self, batch):
        x, y = batch
        for name, sched in self.schedules.{entries}:
            if {test}:
                continue
            loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
            sched["optimizer"].zero_grad()
            loss.backward()
            sched["optimizer"].step()

    def train(self):
        for batch in self.loader:
            self.step(batch)
            self.last_iter += 1


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    Solver(model, DataLoader(data, batch_size=16, sampler=DistributedSampler(data))).train()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("entries", ["items()", "values()"])
def test_a_loop_over_a_mapping_of_optimizers_holds_no_batch_data(tmp_path, entries):
    """VQ-Diffusion's Solver.step: each optimizer runs only inside its window of iterations, a test on counters and
    settings that is the same on every rank, not on this rank's batch."""
    test = 'sched["start"] > self.last_iter' if entries == "items()" else 'name["start"] > self.last_iter'
    code = OPTIMIZER_WINDOWS.format(entries=entries, test=test)
    if entries == "values()":
        code = code.replace("for name, sched in", "for sched in").replace('name["start"]', 'sched["start"]')
    assert ID not in scan_ids(tmp_path, code)
