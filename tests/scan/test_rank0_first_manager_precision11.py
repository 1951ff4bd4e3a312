"""A context manager that lets rank 0 through first is known by what it does, not by its name: a
``@contextmanager`` that waits at a barrier under a test before its ``yield`` and releases under a test after it
(yolov5's ``torch_distributed_zero_first`` under any name, in the script or in a helper module). A cache written
inside it has one writer at a time; a manager with unconditional barriers lets every rank in at once."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

MANAGER = '''import contextlib
import torch.distributed as dist


@{decorator}
def {name}(rank):
{before}
    yield
{after}
'''
SCRIPT = '''import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
{manager}

class Labels(Dataset):
    def __init__(self, path):
        cache = path + ".cache"
        self.labels = torch.load(cache) if os.path.exists(cache) else self.build(cache)

    def build(self, cache):
        labels = torch.zeros(100, dtype=torch.long)
        torch.save(labels, cache)
        return labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.randn(4), self.labels[i]


def main():
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    with {name}(rank):
        data = Labels("train")
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
    model = DDP(nn.Linear(4, 4).cuda(), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = model(x.cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''
ZERO_FIRST = ("    if rank not in [-1, 0]:\n        dist.barrier()", "    if rank == 0:\n        dist.barrier()")
CASES = {
    "renamed, in the script": ("contextmanager", "first_on_zero", *ZERO_FIRST, False, False),
    "qualified decorator": ("contextlib.contextmanager", "serial_build", "    if rank > 0:\n        dist.barrier()",
                            "    if rank == 0:\n        dist.barrier()", False, False),
    "in a helper module": ("contextlib.contextmanager", "leader_first", *ZERO_FIRST, True, False),
    "unconditional barriers": ("contextlib.contextmanager", "in_step", "    dist.barrier()", "    dist.barrier()",
                               False, True),
}


@pytest.mark.parametrize("decorator, name, before, after, helper, warns", CASES.values(), ids=CASES.keys())
def test_a_rank0_first_manager_is_known_by_its_shape(tmp_path, decorator, name, before, after, helper, warns):
    manager = MANAGER.format(decorator=decorator, name=name, before=before, after=after)
    if helper:
        code, siblings = SCRIPT.format(manager=f"from dist_utils import {name}\n", name=name), {"dist_utils": manager}
    else:
        code, siblings = SCRIPT.format(manager=manager.replace("import torch.distributed as dist\n", ""), name=name), {}
    assert shows(tmp_path, "logging-from-all-ranks", code, **siblings) is warns
