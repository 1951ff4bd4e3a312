"""A local predicate taking no argument whose tests and returns read only the distributed state
(``dist.is_available()``, ``dist.is_initialized()``, the world size) is a "distributed or not" flag whatever its
name: DataParallel in its ``else`` arm is the one-process path. A predicate reading anything else is not."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import torch
import torch.distributed as dist
import torch.nn as nn


{predicate}


def main():
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        dist.init_process_group("nccl")
    model = nn.Linear(8, 8).cuda()
    if ready():
        model = nn.parallel.DistributedDataParallel(model)
    else:
        model = nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 8).cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''
CASES = {
    "nested tests, literal returns": ("def ready():\n    if dist.is_available():\n        if dist.is_initialized():\n"
                                      "            return True\n    return False", False),
    "one boolean return": ("def ready():\n    return dist.is_available() and dist.is_initialized()", False),
    "the world size": ("def ready():\n    return dist.get_world_size() > 1", False),
    "something else": ("def ready():\n    return torch.cuda.device_count() > 1", True),
}


@pytest.mark.parametrize("predicate, warns", CASES.values(), ids=CASES.keys())
def test_a_predicate_on_the_distributed_state_is_a_distributed_flag(tmp_path, predicate, warns):
    assert shows(tmp_path, "dataparallel", TEMPLATE.format(predicate=predicate)) is warns
