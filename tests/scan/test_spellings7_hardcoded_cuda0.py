"""hardcoded-cuda0 (session 7): a training script reading its own checkpoint back with no map_location.

``torch.load`` restores every tensor onto the device it was saved from (GPU 0 for a checkpoint rank 0 wrote), so with
no ``map_location`` every rank puts a copy on GPU 0. The file is the script's own checkpoint however its path is
spelt: ``str(path)`` / ``Path(path)`` wrappers, ``os.path.join(dir, NAME)``, ``directory / f"{name}_state.pt"``, or a
resume option (``args.resume``, ``opt.ckpt``, ``cfg.RESUME``) in a script that writes model or optimizer state.
``save_on_master(obj, path)`` (a local helper around torch.save) writes the checkpoint too; ``map_location=None`` places
nothing. Quiet with map_location, for files holding only host state (an LR scheduler's, a grad scaler's), for files the script
does not write (downloaded weights), and when only rank 0 reads.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "hardcoded-cuda0"

SCRIPT = '''
import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

CKPT_NAME = "model_state.pt"
SCHED_NAME = "scheduler.pt"


def save(model, optimizer, scheduler, path, out_dir):
{save}


def load(model, optimizer, scheduler, path, out_dir, args):
{load}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt", default="")
    parser.add_argument("--pretrained", default="")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    load(model, optimizer, scheduler, "ckpt.pt", "out", args)
    ddp = DDP(model, device_ids=[local_rank])
    for _ in range(10):
        optimizer.zero_grad()
        ddp(torch.randn(8, 4).cuda()).sum().backward()
        optimizer.step()
        scheduler.step()
    if dist.get_rank() == 0:
        save(model, optimizer, scheduler, "ckpt.pt", "out")


if __name__ == "__main__":
    main()
'''

SAVE_PATH = "    torch.save({'model': model.state_dict(), 'optim': optimizer.state_dict()}, str(path))"
SAVE_JOIN = "    torch.save(model.state_dict(), os.path.join(out_dir, CKPT_NAME))"
SAVE_DIV = "    torch.save(model.state_dict(), Path(out_dir) / f'{path}_model_state.pt')"
SAVE_SCHED = "    torch.save(scheduler.state_dict(), os.path.join(out_dir, SCHED_NAME))"
SAVE_NUMBERED = "    state = dict(model=model.state_dict(), optim=optimizer.state_dict())\n" \
                "    torch.save(state, f'checkpoint/{path}.pt')"
RESTORE = "    model.load_state_dict(state['model'] if 'model' in state else state)"


@pytest.mark.parametrize("save,load", [
    (SAVE_PATH, "    state = torch.load(str(path))\n" + RESTORE),            # imagen-pytorch#132
    (SAVE_PATH, "    state = torch.load(Path(path))\n" + RESTORE),
    (SAVE_JOIN, "    state = torch.load(os.path.join(out_dir, CKPT_NAME))\n" + RESTORE),
    (SAVE_DIV, "    state = torch.load(Path(out_dir) / f'{path}_model_state.pt')\n" + RESTORE),  # neuraloperator#324
    (SAVE_NUMBERED, "    if args.ckpt:\n        state = torch.load(args.ckpt)\n" + "    " + RESTORE),  # stylegan2-pytorch#36
    (SAVE_NUMBERED, "    if args.resume:\n        state = torch.load(args.resume)\n" + "    " + RESTORE),
])
def test_own_checkpoint_read_back_without_map_location(tmp_path, save, load):
    assert ID in scan_ids(tmp_path, SCRIPT.format(save=save, load=load))


@pytest.mark.parametrize("save,load", [
    (SAVE_PATH, "    state = torch.load(str(path), map_location='cpu')\n" + RESTORE),
    (SAVE_JOIN, "    state = torch.load(os.path.join(out_dir, CKPT_NAME), map_location=f'cuda:{dist.get_rank()}')\n"
     + RESTORE),
    (SAVE_SCHED, "    scheduler.load_state_dict(torch.load(os.path.join(out_dir, SCHED_NAME)))"),  # numbers only
    (SAVE_NUMBERED, "    if args.pretrained:\n        state = torch.load(args.pretrained)\n" + "    " + RESTORE),
    (SAVE_NUMBERED, "    state = torch.load(f'checkpoint/{path}.pt')\n" + RESTORE),  # a bare '.pt' tail names nothing
    (SAVE_PATH, "    if dist.get_rank() == 0:\n        state = torch.load(str(path))\n" + "    " + RESTORE),
    ("    pass", "    state = torch.load(args.resume)\n" + RESTORE),  # the script writes no checkpoint
])
def test_quiet_when_placed_host_only_foreign_or_rank0(tmp_path, save, load):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(save=save, load=load))


HELPER = '''
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_on_master(*args, **kwargs):
    if dist.get_rank() == 0:
        torch.save(*args, **kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = nn.Linear(8, 1).cuda()
    ddp = DDP(model, device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.resume:
        checkpoint = torch.load(args.resume{placement})
        model.load_state_dict(checkpoint["model"])
    for epoch in range(10):
        ddp(torch.randn(4, 8).cuda()).sum().backward()
        opt.step()
        save_on_master({{"model": model.state_dict(), "optimizer": opt.state_dict()}},
                       os.path.join(args.output_dir, "checkpoint.pth"))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("placement", ["", ", map_location=None"])
def test_resume_written_through_a_local_save_helper(tmp_path, placement):  # DeiT / DETR / torchvision references
    assert ID in scan_ids(tmp_path, HELPER.format(placement=placement))


@pytest.mark.parametrize("placement", [", map_location='cpu'", ", map_location=lambda s, loc: s"])
def test_quiet_when_the_helper_checkpoint_is_mapped(tmp_path, placement):
    assert ID not in scan_ids(tmp_path, HELPER.format(placement=placement))
