"""The scan's work grows linearly with the size of the file: a checker that asks a whole-module question per call,
per wrap or per freeze (quadratic) fails here, not only on the throughput bench.

Work is counted, not timed: the profiler's events (every Python and C function call) while the index is built and
while each checker runs, on a generated training script of N units and of 2N units. The counts do not depend on the
machine's load, so the test is not flaky; a linear scan does about 2x the work for 2x the input, a quadratic one
about 4x. The bar is 3x, for the whole scan and for each checker apart (a small quadratic checker would hide in the
total)."""

from __future__ import annotations

import collections
import sys

import pytest

from troubleshooter.scan import scan_paths, shipped_patterns
from troubleshooter.scan.checkers import all_checkers
from troubleshooter.scan.runner import FileScanner

HEAD = """import os
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
"""


def _unit(i: int, own_wrap: bool) -> str:
    """A model class with a data-dependent layer, a build function that freezes parts of the wrapped model, and a
    training function (loop, backward, step, rank-0 print, collective, checkpoint save and load, GPU 0 pinned)."""
    wrap = f"    ddp_{i} = DDP(model, device_ids=[rank])\n" if own_wrap else ""
    handed = "" if own_wrap else f", ddp_{i}"  # the wrapper built in main, handed down
    return f'''
class Block{i}(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.aux = nn.Linear(d, d)
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        if x.sum() > 0:
            x = self.aux(x)
        return self.head(self.fc(x))


def build_{i}(args, rank{handed}):
    model = Block{i}(8).to("cuda:0")
{wrap}    model_without_ddp_{i} = ddp_{i}.module
    for p in ddp_{i}.module.fc.parameters():
        p.requires_grad = False
    ddp_{i}.module.head.requires_grad_(False)
    return ddp_{i}


def train_{i}(args, rank, loader, ddp):
    ddp = build_{i}(args, rank{", ddp" if handed else ""})
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step, (x, y) in enumerate(loader):
        loss = ddp(x).sum()
        loss.backward()
        opt.step()
        if rank == 0:
            print("step", step, loss.item())
        if step % 10 == 0:
            dist.all_reduce(loss)
    torch.save(ddp.state_dict(), "ckpt_{i}.pt")
    state = torch.load("ckpt_{i}.pt")
    ddp.load_state_dict(state)
'''


def script(units: int, own_wraps: bool) -> str:
    """A DDP training script of ``units`` units: each wrapping its own model (``own_wraps``), or all handed the one
    wrapper built in ``main``."""
    calls = "".join(f"    train_{i}(None, rank, loader, model)\n" for i in range(units))
    return HEAD + "".join(_unit(i, own_wraps) for i in range(units)) + f'''

def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(0)
    loader = DataLoader(list(range(10)), batch_size=2, shuffle=True)
    model = DDP(Block0(8).cuda(), device_ids=[rank])
{calls}

if __name__ == "__main__":
    main()
'''


def _work(data: bytes) -> collections.Counter:
    """Profiler events of one file scan, per phase: "index" (parse, index, the rest) and each checker's id."""
    checkers = all_checkers()
    phase = ["index"]
    counts: collections.Counter = collections.Counter()
    checks = {}
    for checker in checkers:
        def timed(m, check=checker.check, name=checker.id):
            phase[0] = name
            try:
                return list(check(m))
            finally:
                phase[0] = "index"
        checks[checker.id] = checker.check
        checker.check = timed

    def count(frame, event, arg):
        counts[phase[0]] += 1

    scanner = FileScanner(checkers, shipped_patterns())
    sys.setprofile(count)
    try:
        scanner.scan("train.py", data)
    finally:
        sys.setprofile(None)
        for checker in checkers:
            del checker.check  # the instance attribute: the class's check again
    assert set(checks) == {c.id for c in checkers}
    return counts


@pytest.mark.parametrize("own_wraps", [True, False], ids=["a wrap per unit", "one wrapper handed around"])
def test_each_checker_does_linear_work_in_the_size_of_the_file(own_wraps):
    small, large = (_work(script(n, own_wraps).encode()) for n in (25, 50))
    assert large["unused-parameters-error"] and large["hardcoded-cuda0"] and large["checkpoint-without-module"]
    grew = {phase: large[phase] / small[phase] for phase in large if small[phase]}
    assert sum(large.values()) / sum(small.values()) < 3.0
    assert not {phase: round(ratio, 2) for phase, ratio in grew.items() if ratio >= 3.0}


def test_a_directory_scan_does_linear_work_in_the_size_of_the_file(tmp_path):
    def work(units: int) -> int:
        folder = tmp_path / str(units)
        folder.mkdir()
        (folder / "train.py").write_text(script(units, own_wraps=True))
        events = [0]

        def count(frame, event, arg):
            events[0] += 1
        sys.setprofile(count)
        try:
            found = scan_paths([str(folder)])
        finally:
            sys.setprofile(None)
        assert found.hits  # the checkers ran
        return events[0]

    small, large = work(25), work(50)
    assert large / small < 3.0
