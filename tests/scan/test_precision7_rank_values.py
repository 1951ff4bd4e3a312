"""Rank guards known by what the values are, not by their names (issue 11, scan-precision7).

The metamorphic bench renames a script's own names (``rank`` -> ``r``, ``is_master`` -> ``lead``, or opaque
``v1, v2``): a guard that was recognised only through its spelling turns into a false alarm. Three meanings the
scanner missed under other names:
- ranks unpacked from a tuple: ``r, lr = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])``, or
  ``r, lr = setup()`` where the module's ``setup`` returns ``dist.get_rank(), local_rank``;
- a predicate whose rank test has a one-process arm: ``return dist.get_rank() == 0 if is_dist() else True``
  (read as ``not dist or rank == 0``);
- the one-process arm (``local_rank == -1``: no launcher, one process) held by a flag or a walrus, and a rank
  parameter of any name.
Each case also has its unguarded twin, which must still warn.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

ID = "logging-from-all-ranks"

HEAD = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
'''

LOOP = '''
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[{local}])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        objective = net(torch.randn(4, 8).cuda()).pow(2).mean()
        opt.zero_grad()
        objective.backward()
        opt.step()
'''


def _warned(tmp_path: Path, text: str) -> bool:
    path = tmp_path / "train.py"
    path.write_text(HEAD + text)
    return ID in shown_findings([str(path)])[0]


# --- ranks unpacked from a tuple ------------------------------------------------------------------

TUPLE_SETUPS = {
    "env tuple": ('    dist.init_process_group("nccl")\n'
                  '    r, lr = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])\n'),
    "env tuple in parentheses": ('    dist.init_process_group("nccl")\n'
                                 '    (r, lr) = (int(os.environ.get("RANK", 0)), int(os.getenv("LOCAL_RANK", 0)))\n'),
    "helper returning a tuple": '    r, lr = prepare()\n',
    "helper with a one-process return": '    r, lr = prepare_or_single()\n',
}
HELPERS = '''
def prepare():
    lr = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(lr)
    dist.init_process_group("nccl")
    return dist.get_rank(), lr


def prepare_or_single():
    if "RANK" not in os.environ:
        return 0, 0
    dist.init_process_group("nccl")
    return dist.get_rank(), int(os.environ["LOCAL_RANK"])

'''
TUPLE_GUARDS = {
    "compare": ("if r == 0:", True),
    "derived flag": ("lead = r == 0\n    if lead:", True),
    "derived off-main flag": ("quiet = r != 0\n    if not quiet:", True),
    "no guard": ("if True:", False),
}


@pytest.mark.parametrize("setup", TUPLE_SETUPS, ids=list(TUPLE_SETUPS))
@pytest.mark.parametrize("guard", TUPLE_GUARDS, ids=list(TUPLE_GUARDS))
def test_rank_unpacked_from_a_tuple_guards_the_tracker(tmp_path, setup, guard):
    test, guarded = TUPLE_GUARDS[guard]
    text = HELPERS + "def run():\n" + TUPLE_SETUPS[setup] + f"    {test}\n        wandb.init(project='p')\n" \
        + LOOP.format(local="lr") + "\n\nif __name__ == '__main__':\n    run()\n"
    assert _warned(tmp_path, text) is not guarded


def test_a_tuple_of_non_rank_values_is_no_guard(tmp_path):
    text = ("def run():\n    dist.init_process_group('nccl')\n    r, lr = 0, int(os.environ['LOCAL_RANK'])\n"
            "    if lr == lr:\n        wandb.init(project='p')\n" + LOOP.format(local="lr")
            + "\n\nif __name__ == '__main__':\n    run()\n")
    assert _warned(tmp_path, text)


# --- predicates with a one-process arm ----------------------------------------------------------

PREDICATES = {
    "rank test if distributed else True": "return dist.get_rank() == 0 if dist.is_initialized() else True",
    "True if not distributed else rank test": "return True if not dist.is_initialized() else dist.get_rank() == 0",
    "local helper": "return fetch_rank() == 0 if is_dist() else True",
    "env rank": "return int(os.environ['RANK']) == 0 if 'RANK' in os.environ else True",
}


@pytest.mark.parametrize("body", PREDICATES.values(), ids=list(PREDICATES))
@pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "unguarded"])
def test_predicate_with_a_one_process_arm_is_a_main_process_test(tmp_path, body, guarded):
    text = f'''
def is_dist():
    return dist.is_available() and dist.is_initialized()


def fetch_rank():
    return dist.get_rank() if is_dist() else 0


def lead():
    {body}


def fit():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    if {"lead()" if guarded else "is_dist()"}:
        wandb.init(project="p")
''' + LOOP.format(local="local") + "\n\nif __name__ == '__main__':\n    fit()\n"
    assert _warned(tmp_path, text) is not guarded


def test_predicate_with_a_constant_false_arm_is_a_main_process_test_too(tmp_path):
    text = '''
def lead():
    return dist.get_rank() == 0 if dist.is_initialized() else False


def fit():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    if lead():
        wandb.init(project="p")
''' + LOOP.format(local="local") + "\n\nif __name__ == '__main__':\n    fit()\n"
    assert not _warned(tmp_path, text)


# --- the one-process arm held by a flag, a walrus, or a parameter of any name ----------------------

ARMS = {
    "direct": "if which == -1:",
    "flag": "alone = which == -1\n    if alone:",
    "walrus": "if (alone := which == -1):",
    "negated flag": "launched = which != -1\n    if not launched:",
}


@pytest.mark.parametrize("arm", ARMS.values(), ids=list(ARMS))
def test_one_file_in_the_one_process_arm_and_one_per_rank_otherwise(tmp_path, arm):
    text = f'''
import argparse


def keep(folder, which):
    state = torch.random.get_rng_state()
    {arm}
        torch.save(state, os.path.join(folder, "rng.pth"))
    else:
        torch.save(state, os.path.join(folder, f"rng_{{which}}.pth"))


def go():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    o = p.parse_args()
    if o.local_rank != -1:
        torch.cuda.set_device(o.local_rank)
        dist.init_process_group("nccl")
    net = nn.Linear(8, 1).cuda()
    if o.local_rank != -1:
        net = DDP(net, device_ids=[o.local_rank])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        objective = net(torch.randn(4, 8).cuda()).pow(2).mean()
        opt.zero_grad()
        objective.backward()
        opt.step()
        keep("out", o.local_rank)


if __name__ == "__main__":
    go()
'''
    assert not _warned(tmp_path, text)
    assert _warned(tmp_path, text.replace(f"rng_{{which}}.pth", "rng.pth"))  # both arms write one shared file
