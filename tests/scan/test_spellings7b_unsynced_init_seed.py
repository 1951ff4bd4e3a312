"""unsynced-init-seed spellings (scan-recall7b, second session): a second model (an EMA, a momentum or key encoder)
copied from the model before DDP wraps it, with no seed anywhere (bl0/moco#4). DDP's constructor broadcasts rank 0's
weights into the model it wraps only, so each rank's copy keeps its own random initialisation: a defect shown as a
warning (the finding's generic advice stays info). Spelled ``ema.load_state_dict(model.state_dict())`` and
``ema = copy.deepcopy(model)``. Near misses that stay quiet: a seed set, the copy made after the wrap, weights
loaded into the model first (a checkpoint, pretrained weights), the copy wrapped too."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

ID = "unsynced-init-seed"

SCRIPT = '''
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(32, 16)

    def forward(self, x):
        return self.net(x)

    @classmethod
    def from_pretrained(cls, path):
        model = cls()
        model.load_state_dict(torch.load(path, map_location="cpu"))
        return model


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
{seed}    model = {build}
{before}    model = DDP(model, device_ids=[local_rank])
{after}    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        x = torch.randn(8, 32, device="cuda")
        with torch.no_grad():
            target = ema(x)
        loss = (model(x) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for p, q in zip(model.module.parameters(), ema.parameters()):
                q.mul_(0.99).add_(p.detach(), alpha=0.01)


if __name__ == "__main__":
    main()
'''

LOAD = "    ema = Encoder().cuda()\n    ema.load_state_dict(model.state_dict())\n"
DEEPCOPY = "    ema = copy.deepcopy(model)\n"


def script(before: str = "", after: str = "", seed: str = "", build: str = "Encoder().cuda()") -> str:
    return SCRIPT.format(before=before, after=after, seed=seed, build=build)


def shown(tmp_path, code: str) -> bool:
    return ID in shown_ids(tmp_path, code)


POSITIVE = {
    "load-state-dict-copy": script(before=LOAD),
    "deepcopy": script(before=DEEPCOPY),
}

QUIET = {
    "seeded": script(before=LOAD, seed="    torch.manual_seed(0)\n"),
    "copied-after-wrap": script(after="    ema = copy.deepcopy(model.module)\n"),
    "checkpoint-loaded-first": script(before="    model.load_state_dict(torch.load('init.pt', map_location='cpu'))\n"
                                             + LOAD),
    "pretrained": script(before=DEEPCOPY, build="Encoder.from_pretrained('init.pt').cuda()"),
    "copy-wrapped-too": script(before=DEEPCOPY + "    ema = DDP(ema, device_ids=[local_rank])\n"),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_copy_before_the_wrap_without_a_seed(tmp_path, name):
    assert shown(tmp_path, POSITIVE[name])


@pytest.mark.parametrize("name", sorted(QUIET))
def test_seeded_synced_or_loaded_copies_stay_quiet(tmp_path, name):
    assert not shown(tmp_path, QUIET[name])
