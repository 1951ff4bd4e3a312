"""Spellings of the device / checkpoint family (scan-device): each case with the near miss that must stay silent."""

from __future__ import annotations

from .conftest import scan_ids


PREPARED = '''
import torch
import torch.nn as nn
from ray import train
from ray.train import Checkpoint


def loop(config):
    net = train.torch.prepare_model(nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(3):
        opt.step()
        {save}
'''


def test_a_model_ray_train_prepared_is_the_ddp_wrapper(tmp_path):
    for save in ("torch.save({'net': net.state_dict()}, 'ckpt.pt')",
                 "train.report({}, checkpoint=Checkpoint.from_dict({'net': net.state_dict()}))"):
        assert "checkpoint-without-module" in scan_ids(tmp_path, PREPARED.format(save=save)), save
    unwrapped = "torch.save({'net': net.module.state_dict()}, 'ckpt.pt')"
    assert "checkpoint-without-module" not in scan_ids(tmp_path, PREPARED.format(save=unwrapped))


PINNED = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
{pick}
model = DDP(nn.Linear(8, 8).to(device))
'''


def test_any_constant_gpu_for_every_rank_is_pinned(tmp_path):
    for pick in ("torch.cuda.set_device(1)\ndevice = torch.device('cuda')",
                 "device = torch.device('cuda:2')\ntorch.cuda.set_device(device)",
                 "device = torch.device('cuda', 3)"):
        assert "hardcoded-cuda0" in scan_ids(tmp_path, PINNED.format(pick=pick)), pick
    for pick in ("torch.cuda.set_device(local_rank)\ndevice = torch.device('cuda', local_rank)",
                 "dev1 = torch.device('cuda:1')\ndev2 = torch.device('cuda:2')\ndevice = dev1"):
        assert "hardcoded-cuda0" not in scan_ids(tmp_path, PINNED.format(pick=pick)), pick


OPTION = '''
import argparse
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--{option}", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("nccl")
{extra}
torch.cuda.set_device(args.{option})
model = DDP(nn.Linear(8, 8).cuda())
'''


def test_a_gpu_option_the_launcher_does_not_fill_pins_every_rank(tmp_path):
    assert "hardcoded-cuda0" in scan_ids(tmp_path, OPTION.format(option="gpu", extra=""))
    reassigned = "args.gpu = dist.get_rank() % torch.cuda.device_count()"
    assert "hardcoded-cuda0" not in scan_ids(tmp_path, OPTION.format(option="gpu", extra=reassigned))
    assert "hardcoded-cuda0" not in scan_ids(tmp_path, OPTION.format(option="local_rank", extra=""))


CONTAINER = '''
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner(nn.Module):
    def __init__(self, rank):
        super().__init__()
        self.net = nn.Linear(8, 8).to(rank)
        self.net = DDP(self.net, device_ids=[rank])
{override}

def main(rank):
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    runner = Runner(rank)
    torch.save(runner.state_dict(), "runner.pt")
'''


def test_a_module_holding_the_ddp_wrapper_saves_module_keys(tmp_path):
    assert "checkpoint-without-module" in scan_ids(tmp_path, CONTAINER.format(override=""))
    own = "    def state_dict(self, *args, **kwargs):\n        return self.net.module.state_dict(*args, **kwargs)\n"
    assert "checkpoint-without-module" not in scan_ids(tmp_path, CONTAINER.format(override=own))


TRACKER = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
{imports}

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
{start}
'''


def test_any_experiment_tracker_started_on_every_rank(tmp_path):
    for imports, start in (("import neptune", "run = neptune.init_run(project='p')"),
                           ("from comet_ml import Experiment", "experiment = Experiment(project_name='p')"),
                           ("from aim import Run", "run = Run(experiment='p')")):
        code = TRACKER.format(imports=imports, start=start)
        assert "logging-from-all-ranks" in scan_ids(tmp_path, code), start
        guarded = TRACKER.format(imports=imports, start=f"if dist.get_rank() == 0:\n    {start}")
        assert "logging-from-all-ranks" not in scan_ids(tmp_path, guarded), start
