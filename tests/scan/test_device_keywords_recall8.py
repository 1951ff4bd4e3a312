"""hardcoded-cuda0 (scan-recall8): ``torch.device`` spelled with keywords (``torch.device(type="cuda", index=0)``,
``torch.device("cuda", index=0)``) pins every rank to GPU 0 like ``torch.device("cuda", 0)``; the same call with the
local rank as its index stays quiet."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "hardcoded-cuda0"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
    def __init__(self, local_rank):
        self.device = {device}
        self.model = DDP(nn.Linear(8, 2).to(self.device), device_ids=[local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def fit(self):
        for step in range(100):
            loss = self.model(torch.randn(4, 8, device=self.device)).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    Runner(local_rank).fit()
'''


@pytest.mark.parametrize("device,found", [
    ('torch.device(type="cuda", index=0)', True),
    ('torch.device("cuda", index=0)', True),
    ('torch.device(type="cuda", index=local_rank)', False),
])
def test_torch_device_keywords(tmp_path, device, found):
    assert (ID in scan_ids(tmp_path, SCRIPT.format(device=device))) is found
