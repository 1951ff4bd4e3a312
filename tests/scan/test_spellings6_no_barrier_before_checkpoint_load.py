"""no-barrier-before-checkpoint-load when the save closes one pass of the loop and the load opens the next (a stage
switch reloading the best checkpoint), through a save-on-master helper or a rank-guarded torch.save and a load method,
the paths spelled differently (``str(out / "best.pth")`` vs ``out / "best.pth"``, a name chosen between two
literals); near misses that must stay quiet: a barrier before the load, every rank writing its own file."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "no-barrier-before-checkpoint-load"

SCRIPT = '''
import os
from pathlib import Path
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


def is_main_process():
    return get_rank() == 0


def save_on_master(obj, path):
    if is_main_process():
        torch.save(obj, path)


def load_checkpoint(path):
    return torch.load(path, map_location="cpu")


class Solver:
    def __init__(self, out):
        self.out = Path(out)
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        self.model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        data = TensorDataset(torch.randn(64, 8))
        self.sampler = DistributedSampler(data)
        self.loader = DataLoader(data, batch_size=8, sampler=self.sampler)

    def state_dict(self):
        return {"model": self.model.module.state_dict()}

    def load_resume_state(self, path):
        state = __LOAD__
        self.model.module.load_state_dict(state["model"])

    def train_one_epoch(self):
        for (x,) in self.loader:
            loss = self.model(x.cuda()).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

    def fit(self, epochs=10, stop=5):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            if epoch == stop:
__BEFORE__
                self.load_resume_state(str(self.out / "best.pth"))
            self.train_one_epoch()
__SAVE__


if __name__ == "__main__":
    Solver("out").fit()
'''

LOAD = "torch.load(path, map_location='cpu')"
HELPER_SAVE = "            save_on_master(self.state_dict(), self.out / 'best.pth')\n"
GUARDED_SAVE = "            if dist.get_rank() == 0:\n                torch.save(self.state_dict(), self.out / 'best.pth')\n"
CHOSEN_NAME = ("            name = 'best.pth' if epoch < stop else 'last.pth'\n"
               "            save_on_master(self.state_dict(), self.out / name)\n")


def script(before: str, save: str) -> str:
    return SCRIPT.replace("__LOAD__", LOAD).replace("__BEFORE__\n", before).replace("__SAVE__\n", save)


@pytest.mark.parametrize("save", [HELPER_SAVE, GUARDED_SAVE, CHOSEN_NAME], ids=["helper", "guarded", "chosen-name"])
def test_load_at_the_next_pass_after_a_rank0_save(tmp_path, save):
    assert ID in scan_ids(tmp_path, script("", save))


@pytest.mark.parametrize("before, save", [
    ("                dist.barrier()\n", HELPER_SAVE),
    ("", "            torch.save(self.state_dict(), self.out / f'best_{dist.get_rank()}.pth')\n"),
    ("", "            save_on_master(self.state_dict(), self.out / 'other.pth')\n"),
], ids=["barrier-before-load", "every-rank-own-file", "another-file"])
def test_quiet_when_synced_or_not_the_same_file(tmp_path, before, save):
    assert ID not in scan_ids(tmp_path, script(before, save))
