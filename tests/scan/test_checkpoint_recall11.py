"""checkpoint-without-module, scan-recall11: in the method that wraps ``self.model`` in DDP, a ``state_dict()``
taken before the wrap is the bare model's (no ``module.`` prefix); after the wrap, or in another method, it is the
wrapper's."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

SCRIPT = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, local_rank, path="ckpt/init.pt"):
        self.path = path
        self.model = nn.Linear(32, 10).cuda()
{before}
        self.model = DDP(self.model, device_ids=[local_rank])
{after}

    def save(self):
        if dist.get_rank() == 0:
{save}


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    trainer = Trainer(local_rank)
    trainer.save()
    dist.destroy_process_group()
'''
SAVE_HERE = "        if dist.get_rank() == 0:\n            torch.save(self.model.state_dict(), self.path)"
SAVE_BARE = "            torch.save(self.model.module.state_dict(), 'last.pt')"
SAVE_WRAPPER = "            torch.save(self.model.state_dict(), 'last.pt')"


@pytest.mark.parametrize("before, after, save, flagged", [
    (SAVE_HERE, "", SAVE_BARE, False),  # saved before the wrap: the bare model's keys
    ("", SAVE_HERE, SAVE_BARE, True),  # saved after the wrap in the same method
    ("", "", SAVE_WRAPPER, True),  # another method saves the wrapper's state dict
])
def test_a_state_dict_before_the_wrap_is_the_bare_models(tmp_path, before, after, save, flagged):
    code = SCRIPT.format(before=before, after=after, save=save)
    assert ("checkpoint-without-module" in shown_ids(tmp_path, code)) is flagged
