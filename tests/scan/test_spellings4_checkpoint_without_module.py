"""checkpoint-without-module when the DDP wrapper comes back from a method of a hand-written accelerator / engine
class of the file (``model = accelerator.prepare(model)`` whose every return is the wrap), the way small projects
spell Accelerate; near misses: the method returns the bare module, or the save uses ``.module``."""

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


class Accelerator:
    def __init__(self):
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
        if self.distributed:
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group("nccl")

    @property
    def is_main_process(self):
        return not self.distributed or dist.get_rank() == 0

    def prepare(self, model):
        model = model.cuda()
        if self.distributed:
            model = DDP(model, device_ids=[self.local_rank])
{ret}


def main():
    acc = Accelerator()
    model = acc.prepare(nn.Linear(8, 2))
    for step in range(10):
        model(torch.randn(4, 8).cuda()).sum().backward()
    if acc.is_main_process:
        torch.save({save}, "model.pt")


if __name__ == "__main__":
    main()
'''


def test_wrapper_returned_by_a_local_method(tmp_path):
    assert ID in scan_ids(tmp_path, SCRIPT.format(ret="        return model", save="model.state_dict()"))


@pytest.mark.parametrize("ret, save", [
    ("        return model", "model.module.state_dict()"),
    ("        return model.module if self.distributed else model", "model.state_dict()"),
])
def test_near_misses_stay_quiet(tmp_path, ret, save):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(ret=ret, save=save))


AGENT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Agent:
    saved_attributes = ("model", "optimizer")

    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def save(self, dirname):
{save}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    q_func = DistributedDataParallel(nn.Linear(4, 2).cuda(), device_ids=[local_rank])
    agent = Agent(q_func, torch.optim.Adam(q_func.parameters()))
    for step in range(10):
        q_func(torch.randn(8, 4).cuda()).sum().backward()
    if dist.get_rank() == 0:
        agent.save("out")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("save", [
    "        for attr in self.saved_attributes:\n"
    "            torch.save(getattr(self, attr).state_dict(), os.path.join(dirname, attr + '.pt'))",
    "        for name in ['model', 'optimizer']:\n"
    "            torch.save(getattr(self, name).state_dict(), os.path.join(dirname, name + '.pt'))",
])
def test_wrapper_saved_through_getattr_over_names(tmp_path, save):
    """pfrl#55: an agent saves ``getattr(self, attr).state_dict()`` for each of its saved attributes."""
    assert ID in scan_ids(tmp_path, AGENT.format(save=save))


@pytest.mark.parametrize("save", [
    "        for attr in ('optimizer',):\n"
    "            torch.save(getattr(self, attr).state_dict(), os.path.join(dirname, attr + '.pt'))",
    "        for attr in self.saved_attributes:\n"
    "            obj = getattr(self, attr)\n"
    "            obj = obj.module if hasattr(obj, 'module') else obj\n"
    "            torch.save(obj.state_dict(), os.path.join(dirname, attr + '.pt'))",
])
def test_names_without_the_wrapper_or_unwrapped_stay_quiet(tmp_path, save):
    assert ID not in scan_ids(tmp_path, AGENT.format(save=save))


NESTED = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Engine:
    def __init__(self, model, optimizer):
{keep}


class Trainer:
    def __init__(self, engine, hooks):
        self.engine = engine
        self.hooks = hooks
        self.epoch = 0


def save_checkpoint(path, model):
    torch.save({{"model": model.state_dict()}}, path)


class SaveHook:
    def after_epoch(self, trainer):
        if dist.get_rank() == 0:
            save_checkpoint("ckpt.pt", {chain})


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    engine = Engine(model, torch.optim.Adam(model.parameters()))
    trainer = Trainer(engine, [SaveHook()])
    for hook in trainer.hooks:
        hook.after_epoch(trainer)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("keep", [
    "        self.model = model\n        self.optimizer = optimizer",
    "        self.model, self.optimizer = model, optimizer",
])
def test_wrapper_kept_two_objects_deep(tmp_path, keep):
    """ColossalAI#768: a hook saves ``trainer.engine.model`` through a helper; the engine keeps the DDP wrapper."""
    assert ID in scan_ids(tmp_path, NESTED.format(keep=keep, chain="trainer.engine.model"))


def test_other_attribute_of_the_chain_stays_quiet(tmp_path):
    code = NESTED.format(keep="        self.model = model\n        self.optimizer = optimizer",
                         chain="trainer.engine.optimizer")
    assert ID not in scan_ids(tmp_path, code)
