"""checkpoint-without-module across the ways real code reaches the DDP wrapper: returned by a helper, handed to a
trainer class, pickled whole, resumed into the wrapper while an inference function loads into a fresh model; each
with its near miss. Also: a save method called through an instance only on rank 0 runs on rank 0 only."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "checkpoint-without-module"

PRELUDE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)

'''

HELPER = PRELUDE + '''
def build_model(rank):
    net = Net().cuda(rank)
    {ret}


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = build_model(rank)
    if dist.get_rank() == 0:
        torch.save({{"model": model.state_dict()}}, "ckpt.pt")


main()
'''


@pytest.mark.parametrize("ret, found", [
    ("return DDP(net, device_ids=[rank])", True),
    ("net = DDP(net, device_ids=[rank])\n    return net", True),
    ("return net", False),  # the helper hands back the bare model
])
def test_wrapper_returned_by_a_helper(tmp_path, ret, found):
    assert (ID in scan_ids(tmp_path, HELPER.format(ret=ret))) is found


TRAINER = PRELUDE + '''
class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def save(self, path):
        torch.save({{"model": {saved}.state_dict(), "optim": self.optimizer.state_dict()}}, path)


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = DDP(Net().cuda(), device_ids=[rank])
    trainer = Trainer({given}, torch.optim.Adam(model.parameters()))
    if dist.get_rank() == 0:
        trainer.save("ckpt.pt")


main()
'''


@pytest.mark.parametrize("given, saved, found", [
    ("model", "self.model", True),
    ("model=model", "self.model", True),
    ("model", "self.model.module", False),  # unwraps before saving
    ("model.module", "self.model", False),  # the trainer gets the bare module
])
def test_wrapper_handed_to_a_trainer_class(tmp_path, given, saved, found):
    code = TRAINER.format(given=given, saved=saved).replace("Trainer(model=model,", "Trainer(model=model, optimizer=")
    ids = scan_ids(tmp_path, code)
    assert (ID in ids) is found
    assert "logging-from-all-ranks" not in ids  # trainer.save() runs on rank 0 only


PICKLED = PRELUDE + '''
def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = DDP(Net().cuda(), device_ids=[rank])
    {save}


main()
'''


@pytest.mark.parametrize("save, found", [
    ('if rank == 0:\n        torch.save(model, "model.pt")', True),
    ('if rank == 0:\n        torch.save(model.module, "model.pt")', False),
    ('torch.save(model, "init.pt")', False),  # every rank: logging-from-all-ranks reports that line
])
def test_wrapper_object_pickled(tmp_path, save, found):
    assert (ID in scan_ids(tmp_path, PICKLED.format(save=save))) is found


RESUMED = PRELUDE + '''
def train(rank):
    model = DDP(Net().cuda(rank), device_ids=[rank])
    if os.path.exists("last.pt"):
        model.load_state_dict(torch.load("last.pt", map_location="cpu"))
    if rank == 0:
        torch.save(model.state_dict(), "last.pt")


def {name}(path):
    net = Net()
    {load}
    return net


if __name__ == "__main__":
    dist.init_process_group("nccl")
    train(int(os.environ["LOCAL_RANK"]))
'''


@pytest.mark.parametrize("name, load, found", [
    ("test_model", 'net.load_state_dict(torch.load(path, map_location="cpu"))', True),
    ("inference", 'state = torch.load(path)\n    net.load_state_dict(state)', True),
    ("test_model", 'net.load_state_dict({k[len("module."):]: v for k, v in torch.load(path).items()})', False),
    ("test_model", 'net.load_state_dict(net.state_dict())', False),  # nothing read from disk
])
def test_resume_into_the_wrapper_beside_a_fresh_model_load(tmp_path, name, load, found):
    assert (ID in scan_ids(tmp_path, RESUMED.format(name=name, load=load))) is found


KEYED = PRELUDE + '''
class Trainer:
    def __init__(self, model):
        self.model = model

    def save_checkpoint(self, path):
        torch.save({{"generator": {saved}.state_dict()}}, path)

    def load_checkpoint(self, path):
        {load}


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = {{"generator": Net().cuda(), "discriminator": Net().cuda()}}
    model["generator"] = DDP(model["generator"], device_ids=[rank])
    trainer = Trainer(model)
    if rank == 0:
        trainer.save_checkpoint("ckpt.pkl")


main()
'''


@pytest.mark.parametrize("saved, load, found", [
    ('self.model["generator"]', "pass", True),
    ('self.model["generator"].module', "pass", False),  # unwrapped before saving
    ('self.model["discriminator"]', "pass", False),  # that network is not wrapped
    ('self.model["generator"]', 'self.model["generator"].load_state_dict(torch.load(path)["generator"])', False),
])
def test_wrapper_kept_in_a_dict_of_networks(tmp_path, saved, load, found):
    assert (ID in scan_ids(tmp_path, KEYED.format(saved=saved, load=load))) is found
