"""checkpoint-without-module (session 7): a plain checkpoint loaded into the DDP wrapper.

The wrapper's ``state_dict`` keys all start with ``module.``, so ``ddp_model.load_state_dict(state)`` of a plain
checkpoint (the script saves ``ddp_model.module.state_dict()``, or pretrained weights) fails with "Missing key(s) in
state_dict: module.…" (microsoft/MASS#16, wolny/pytorch-3dunet#134). The wrapper is known after the wrap in its
function, or as ``self.model`` bound to the wrap in ``__init__`` and loaded in another method. Quiet when loaded into
``.module``, with ``strict=False``, before the wrap (also in a method ``__init__`` runs before wrapping), for an
in-memory copy, and when the script round-trips the wrapper's own state dict.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "checkpoint-without-module"

FUNCTION = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = nn.Linear(8, 8).cuda()
{before}
    model = DDP(model, device_ids=[local_rank])
{after}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        model(torch.randn(4, 8).cuda()).sum().backward()
        opt.step()
    if dist.get_rank() == 0:
{save}


if __name__ == "__main__":
    main()
'''

SAVE_PLAIN = "        torch.save({'model': model.module.state_dict()}, 'ckpt.pt')"
SAVE_WRAPPER = "        torch.save({'model': model.state_dict()}, 'ckpt.pt')"
LOAD = "    state = torch.load('ckpt.pt', map_location='cpu')\n"


@pytest.mark.parametrize("after,save", [
    (LOAD + "    model.load_state_dict(state['model'])", SAVE_PLAIN),
    ("    model.load_state_dict(torch.load('pretrained.pth', map_location='cpu'))", SAVE_PLAIN),
    (LOAD + "    model.load_state_dict(state['model'], True)", SAVE_PLAIN),
])
def test_plain_state_loaded_into_the_wrapper(tmp_path, after, save):
    assert ID in scan_ids(tmp_path, FUNCTION.format(before="", after=after, save=save))


@pytest.mark.parametrize("before,after,save", [
    ("", LOAD + "    model.module.load_state_dict(state['model'])", SAVE_PLAIN),
    ("", LOAD + "    model.load_state_dict(state['model'], strict=False)", SAVE_PLAIN),
    (LOAD + "    model.load_state_dict(state['model'])", "", SAVE_PLAIN),
    ("", LOAD + "    model.load_state_dict(state['model'])", SAVE_WRAPPER),
    ("    ema = DDP(nn.Linear(8, 8).cuda(), device_ids=[local_rank])",
     "    ema.load_state_dict(model.state_dict())", SAVE_PLAIN),
])
def test_quiet_for_module_non_strict_bare_round_trip_or_copy(tmp_path, before, after, save):
    assert ID not in scan_ids(tmp_path, FUNCTION.format(before=before, after=after, save=save))


CLASS = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, snapshot_path):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.gpu_id)
{early}
        self.model = DDP(self.model, device_ids=[self.gpu_id])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def load_snapshot(self, path):
        snapshot = torch.load(path, map_location=f"cuda:{{self.gpu_id}}")
        self.model.load_state_dict(snapshot["MODEL_STATE"])

    def save_snapshot(self, path):
        torch.save({{"MODEL_STATE": self.model.module.state_dict()}}, path)

    def train(self, steps):
        for _ in range(steps):
            self.model(torch.randn(4, 8).to(self.gpu_id)).sum().backward()
            self.opt.step()
        if self.gpu_id == 0:
            self.save_snapshot("snapshot.pt")


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    trainer = Trainer(nn.Linear(8, 8), "snapshot.pt")
{late}
    trainer.train(10)


if __name__ == "__main__":
    main()
'''


def test_a_method_loading_into_the_wrapper_after_init(tmp_path):
    code = CLASS.format(early="", late="    if os.path.exists('snapshot.pt'):\n        trainer.load_snapshot('snapshot.pt')")
    assert ID in scan_ids(tmp_path, code)


def test_quiet_when_init_loads_before_wrapping(tmp_path):  # the DDP tutorial series' Trainer
    code = CLASS.format(early="        if os.path.exists(snapshot_path):\n            self.load_snapshot(snapshot_path)",
                        late="")
    assert ID not in scan_ids(tmp_path, code)
