"""checkpoint-without-module through save helpers: the wrapper kept as ``self.model`` (bound in ``__init__`` only) and
handed from another method to a local function that saves ``model.state_dict()``, by position or by keyword; near
misses that must stay quiet: the helper gets ``.module``, the helper unwraps before saving."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "checkpoint-without-module"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def is_main_process():
    return dist.get_rank() == 0

__HELPERS__

class Trainer:
    def __init__(self, local_rank):
        self.local_rank = local_rank
        self.model = DDP(nn.Linear(8, 2).cuda(local_rank), device_ids=[local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

__METHODS__

    def fit(self, epochs=3):
        data = TensorDataset(torch.randn(64, 8))
        sampler = DistributedSampler(data)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for (x,) in DataLoader(data, batch_size=8, sampler=sampler):
                loss = self.model(x.cuda()).sum()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
__AFTER__


def export_for_inference(path):
    net = nn.Linear(8, 2)
    net.load_state_dict(torch.load(path, map_location="cpu"))
    return net


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Trainer(local_rank).fit()
    dist.destroy_process_group()
'''


def script(helpers: str, methods: str, after: str) -> str:
    return SCRIPT.replace("__HELPERS__\n", helpers).replace("__METHODS__\n", methods).replace("__AFTER__\n", after)


SAVE_FN = "def save_checkpoint(model, path):\n    torch.save(model.state_dict(), path)\n"
SAVE_KW = ("def save_checkpoint(path, model=None, optimizer=None):\n"
           "    torch.save({'model': model.state_dict(), 'opt': optimizer.state_dict()}, path)\n")
UNWRAP = ("def unwrap(m):\n    return m.module if hasattr(m, 'module') else m\n\n"
          "def save_checkpoint(model, path):\n    torch.save(unwrap(model).state_dict(), path)\n")


@pytest.mark.parametrize("helpers, methods, after", [
    (SAVE_FN, "", "            if is_main_process():\n                save_checkpoint(self.model, 'ckpt.pt')\n"),
    (SAVE_KW, "", "            if is_main_process():\n"
                  "                save_checkpoint('ckpt.pt', model=self.model, optimizer=self.opt)\n"),
    ("", "    def save(self, path):\n        if is_main_process():\n            torch.save(self.model.state_dict(), path)\n",
     "            self.save('ckpt.pt')\n"),
    ("", "", "            state = self.model.state_dict()\n            if is_main_process():\n"
             "                torch.save(state, 'ckpt.pt')\n"),
], ids=["helper-positional", "helper-keyword", "own-method", "state-variable"])
def test_wrapper_state_saved_through_a_helper(tmp_path, helpers, methods, after):
    assert ID in scan_ids(tmp_path, script(helpers, methods, after))


@pytest.mark.parametrize("helpers, after", [
    (SAVE_FN, "            if is_main_process():\n                save_checkpoint(self.model.module, 'ckpt.pt')\n"),
    (UNWRAP, "            if is_main_process():\n                save_checkpoint(self.model, 'ckpt.pt')\n"),
], ids=["hands-module", "helper-unwraps"])
def test_quiet_when_the_helper_gets_the_bare_model(tmp_path, helpers, after):
    assert ID not in scan_ids(tmp_path, script(helpers, "", after))
