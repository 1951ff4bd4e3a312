"""hardcoded-cuda0 for a checkpoint the script writes from its own GPU state and reads back with ``torch.load``
and no ``map_location``: every rank restores it onto GPU 0 (pytorch/examples#1084, imagen-pytorch#190). Spellings
of the save/load pair (a snapshot dict bound first, a trainer's save/load methods, ``torch.serialization.load``);
near misses that stay quiet: a map_location in any spelling, a file the script does not write (downloaded
weights, cached features), a payload without a state_dict, a load on rank 0 only."""

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


class Trainer:
    def __init__(self, snapshot_path):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = nn.Linear(8, 2).to(self.local_rank)
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            self.load(snapshot_path)
        self.model = DDP(self.model, device_ids=[self.local_rank])

    def save(self, path):
{save}

    def load(self, path):
{load}

    def train(self):
        for step in range(10):
            self.model(torch.randn(4, 8).cuda()).sum().backward()
        if self.local_rank == 0:
            self.save(self.snapshot_path)


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    Trainer("snapshot.pt").train()


if __name__ == "__main__":
    main()
'''

SAVE = '        torch.save({"model": self.model.module.state_dict()}, path)'
SAVE_BOUND = '        snapshot = {"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": 3}\n' \
             '        torch.save(snapshot, path)'


@pytest.mark.parametrize("save, load", [
    (SAVE, '        state = torch.load(path)\n        self.model.load_state_dict(state["model"])'),
    (SAVE_BOUND, '        snapshot = torch.load(path)\n        self.model.load_state_dict(snapshot["MODEL_STATE"])'),
    (SAVE, '        self.model.load_state_dict(torch.load(f=path)["model"])'),
    (SAVE, '        self.model.load_state_dict(torch.serialization.load(path)["model"])'),
])
def test_own_checkpoint_read_back_without_placement(tmp_path, save, load):
    assert ID in scan_ids(tmp_path, SCRIPT.format(save=save, load=load))


@pytest.mark.parametrize("save, load", [
    (SAVE, '        self.model.load_state_dict(torch.load(path, map_location="cpu")["model"])'),
    (SAVE, '        self.model.load_state_dict(torch.load(path, f"cuda:{self.local_rank}")["model"])'),
    (SAVE, '        kwargs = {"map_location": "cpu"}\n        self.model.load_state_dict(torch.load(path, **kwargs)["model"])'),
    # a file the script does not write: downloaded / pretrained weights are CPU tensors
    (SAVE, '        self.model.load_state_dict(torch.load("pretrained_weights.pth"))'),
    # a payload without a state_dict (features, a queue)
    ('        torch.save({"queue": torch.zeros(3)}, path)', '        self.queue = torch.load(path)["queue"]'),
])
def test_near_misses_stay_quiet(tmp_path, save, load):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(save=save, load=load))


def test_load_on_rank_zero_only_stays_quiet(tmp_path):
    code = SCRIPT.format(save=SAVE, load='        self.model.load_state_dict(torch.load(path)["model"])').replace(
        "        if os.path.exists(snapshot_path):\n            self.load(snapshot_path)",
        "        if self.local_rank == 0 and os.path.exists(snapshot_path):\n            self.load(snapshot_path)")
    assert ID not in scan_ids(tmp_path, code)


BARE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
{setup}
    dist.init_process_group({init})
    model = nn.Linear(8, 2)
    {line}
    model = DDP(model)
    for step in range(10):
        model(torch.randn(4, 8).to(device)).sum().backward()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("line", [
    'device = torch.device("cuda")\n    model.to(device)',
    'device = "cuda"\n    model.to(device)',
    'model.to("cuda")\n    device = model.weight.device',
])
def test_bare_cuda_with_no_device_setup(tmp_path, line):
    """hkchengrex/MMAudio#57: every process placed its work on plain "cuda" (GPU 0). Plain "cuda" is GPU 0 only
    because nothing selects the rank's device: one defect, reported once, as missing-set-device (session 5)."""
    ids = scan_ids(tmp_path, BARE.format(setup="", init='"nccl"', line=line))
    assert "missing-set-device" in ids and ID not in ids


@pytest.mark.parametrize("setup, init", [
    ("    torch.cuda.set_device(local_rank)", '"nccl"'),
    ('    torch.set_default_device(f"cuda:{local_rank}")', '"nccl"'),
    ('    os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)', '"nccl"'),
    ("", '"nccl", device_id=torch.device("cuda", local_rank)'),
    ("", '"gloo"'),
])
def test_bare_cuda_after_device_setup_stays_quiet(tmp_path, setup, init):
    code = BARE.format(setup=setup, init=init, line='device = torch.device("cuda")\n    model.to(device)')
    assert ID not in scan_ids(tmp_path, code)


def test_set_default_device_is_device_setup(tmp_path):
    code = BARE.format(setup='    torch.set_default_device(f"cuda:{local_rank}")', init='"nccl"',
                       line='device = torch.device("cuda", local_rank)\n    model.to(device)')
    assert "missing-set-device" not in scan_ids(tmp_path, code)


def test_set_default_device_to_gpu_zero_is_pinned(tmp_path):
    code = BARE.format(setup='    torch.set_default_device("cuda:0")', init='"nccl"',
                       line='device = torch.device("cuda", local_rank)\n    model.to(device)')
    assert ID in scan_ids(tmp_path, code)


def test_bare_cuda_kept_on_the_trainer(tmp_path):
    """A trainer class that reads LOCAL_RANK but keeps ``self.device = torch.device("cuda")`` (stable-pretraining#50
    spelling): every rank places its model on GPU 0."""
    code = BARE.format(setup="", init='"nccl"', line="model = Holder().place(model)\n    device = torch.device(\"cuda\", local_rank)").replace(
        "\n\ndef main():", '\n\nclass Holder:\n    def __init__(self):\n        self.device = torch.device("cuda")\n\n'
        '    def place(self, module):\n        return module.to(self.device)\n\n\ndef main():')
    ids = scan_ids(tmp_path, code)
    assert "missing-set-device" in ids and ID not in ids


def test_bare_cuda_handed_to_a_library_helper_stays_quiet(tmp_path):
    """``utils.get_device(device="cuda")`` (torchtune) picks the rank's GPU itself: not a placement."""
    code = BARE.format(setup="", init='"nccl"', line='device_type = "cuda"\n    device = get_device(device=device_type)\n'
                       '    model.to(device)').replace("import torch.nn as nn", "import torch.nn as nn\nfrom torchtune.utils import get_device")
    ids = scan_ids(tmp_path, code)
    assert ID not in ids and "missing-set-device" not in ids


OPTION = '''
import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()


def main():
    dist.init_process_group("nccl")
{body}
    for step in range(10):
        model(torch.randn(4, 8).to(device)).sum().backward()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("body", [
    "    device = f'cuda:{args.gpu}'\n    model = DDP(nn.Linear(8, 2).to(device))",
    "    device = torch.device(f'cuda:{args.gpu}')\n    model = DDP(nn.Linear(8, 2).to(device))",
    "    model = DDP(nn.Linear(8, 2).to(f'cuda:{args.gpu}'))\n    device = 'cpu'",
])
def test_formatted_gpu_option_every_rank_shares(tmp_path, body):
    """``--gpu`` defaults to 0 and nothing sets it per process: ``f"cuda:{args.gpu}"`` is GPU 0 on every rank."""
    assert ID in scan_ids(tmp_path, OPTION.format(body=body))


def test_formatted_gpu_option_set_from_local_rank_stays_quiet(tmp_path):
    body = ("    args.gpu = int(os.environ['LOCAL_RANK'])\n    torch.cuda.set_device(args.gpu)\n"
            "    device = f'cuda:{args.gpu}'\n    model = DDP(nn.Linear(8, 2).to(device), device_ids=[args.gpu])")
    assert ID not in scan_ids(tmp_path, OPTION.format(body=body))
