"""missing-distributed-sampler: a loader a helper module builds and returns, handed by the entry to the framework's
sharder (``accelerator.prepare``, ``fabric.setup_dataloaders``), is sharded there.

open-instruct and diffusers' examples build loaders in one module and prepare them in another; the project also runs
raw torch.distributed (an evaluation loader sharded by hand), so the framework does not cover the whole project and
each loader is judged: the one whose builder's result reaches the sharder needs no sampler, one that never reaches it
still does. Under Accelerate alone, a builder that prepares another loader itself but returns the training loader
to a caller that prepares it is not "a loader never handed to prepare()".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

DATA = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_rows(n):
    return TensorDataset(torch.randn(n, 16), torch.randint(0, 2, (n,)))


{builder}


def eval_loader(rank, world):
    rows = make_rows(64)
    return DataLoader(rows, batch_size=8, sampler={eval_sampler})
'''

TRAIN = '''
import torch
import torch.nn as nn
from accelerate import Accelerator
from lightning.fabric import Fabric

from data import eval_loader, {imported}


def main():
    accelerator = Accelerator()
    fabric = Fabric()
    model = nn.Linear(16, 2)
    opt = torch.optim.AdamW(model.parameters())
{prepared}
    for x, y in train_loader:
        loss = nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    print(len(eval_loader(accelerator.process_index, accelerator.num_processes)))


if __name__ == "__main__":
    main()
'''

BUILT = ("def build_train(batch):\n    loader = DataLoader(make_rows(512), batch_size=batch, shuffle=True)\n"
         "    return loader, 512")
DIRECT = "def build_train(batch):\n    return DataLoader(make_rows(512), batch_size=batch, shuffle=True)"
PREPARES_ANOTHER = ("def build_train(batch, accelerator):\n    samples = DataLoader(make_rows(32), batch_size=4)\n"
                    "    samples = accelerator.prepare(samples)\n"
                    "    loader = DataLoader(make_rows(512), batch_size=batch, shuffle=True)\n    return samples, loader")
PREPARED = {
    "builder prepares another loader itself": (
        PREPARES_ANOTHER, "    samples, train_loader = build_train(32, accelerator)\n"
                          "    model, opt, train_loader = accelerator.prepare(model, opt, train_loader)"),
    "tuple result, then prepare": (BUILT, "    train_loader, size = build_train(32)\n"
                                          "    model, opt, train_loader = accelerator.prepare(model, opt, train_loader)"),
    "prepare of the call": (DIRECT, "    model, opt, train_loader = accelerator.prepare(model, opt, build_train(32))"),
    "fabric setup_dataloaders": (DIRECT, "    train_loader = fabric.setup_dataloaders(build_train(32))"),
}
NOT_PREPARED = {
    "builder prepares another loader, the entry none": (
        PREPARES_ANOTHER, "    samples, train_loader = build_train(32, accelerator)\n"
                          "    model, opt = accelerator.prepare(model, opt)"),
    "never prepared": (DIRECT, "    train_loader = build_train(32)\n    model, opt = accelerator.prepare(model, opt)"),
}


def _flagged(tmp_path: Path, builder: str, prepared: str) -> bool:
    raw = "DistributedSampler(rows, num_replicas=world, rank=rank)"  # hand-sharded: the project is raw too
    framework_only = "None"  # the evaluation loader prepared by nothing: Accelerate alone runs the project
    (tmp_path / "data.py").write_text(DATA.format(builder=builder,
                                                  eval_sampler=framework_only if "samples" in prepared else raw))
    (tmp_path / "train.py").write_text(TRAIN.format(imported="build_train", prepared=prepared))
    return "missing-distributed-sampler" in shown_findings([str(tmp_path / "train.py"), str(tmp_path / "data.py")])[0]


@pytest.mark.parametrize("case", PREPARED, ids=list(PREPARED))
def test_a_loader_returned_to_a_sharder_in_another_module_needs_no_sampler(tmp_path, case):
    assert not _flagged(tmp_path, *PREPARED[case])


@pytest.mark.parametrize("case", NOT_PREPARED, ids=list(NOT_PREPARED))
def test_a_returned_loader_no_sharder_receives_still_needs_one(tmp_path, case):
    assert _flagged(tmp_path, *NOT_PREPARED[case])
