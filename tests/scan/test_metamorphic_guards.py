"""Rank guards the scanner reads by meaning whatever their spelling (fixes found by bench/scan_metamorphic.py):
an early exit in the else arm, the literal on the left of a comparison, a flag that is true OFF the main process."""

from __future__ import annotations

import textwrap

import pytest

from tests.scan.quality import shown_findings

HEAD = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    rank = int(os.environ["RANK"])
    ngpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % ngpus)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(2, 2).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        loss = model(torch.randn(4, 2).cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        save(rank, ngpus, model, epoch)
    dist.destroy_process_group()


def save(rank, ngpus, model, epoch):
'''
TAIL = '''

if __name__ == "__main__":
    main()
'''

GUARDED = {
    "plain": "if rank == 0:\n    torch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
    "else arm returns": "if rank == 0:\n    pass\nelse:\n    return\ntorch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
    "body returns, else runs on": "if rank != 0:\n    return\nelse:\n    print('saving')\n"
                                  "torch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
    "literal on the left": "if 0 == rank % ngpus:\n    torch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
    "off-main flag": "skip = rank != 0\nif skip:\n    return\ntorch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
    "off-main flag, inverted": "follower = dist.get_rank() > 0\nif not follower:\n"
                               "    torch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
}
UNGUARDED = {
    "no guard": "torch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
    "flag true on every rank": "skip = rank < 0\nif skip:\n    return\ntorch.save(model.module.state_dict(), f'ckpt{epoch}.pt')",
}


def scan(tmp_path, body: str) -> set[str]:
    path = tmp_path / "train.py"
    path.write_text(HEAD + textwrap.indent(body, "    ") + TAIL, encoding="utf-8")
    return set(shown_findings([str(path)])[0])


@pytest.mark.parametrize("spelling", GUARDED)
def test_checkpoint_saved_on_rank_zero_only(tmp_path, spelling):
    assert "logging-from-all-ranks" not in scan(tmp_path, GUARDED[spelling])


@pytest.mark.parametrize("spelling", UNGUARDED)
def test_checkpoint_saved_by_every_rank_still_warns(tmp_path, spelling):
    assert "logging-from-all-ranks" in scan(tmp_path, UNGUARDED[spelling])


DATAPARALLEL = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    rank = int(os.environ.get("RANK", -1))
    model = torch.nn.Linear(2, 2).cuda()
    {flag} = {test}
    if {flag}:
        model = torch.nn.DataParallel(model)
    if rank != -1:
        dist.init_process_group("nccl")
        torch.cuda.set_device(rank % torch.cuda.device_count())
        model = DDP(model)
    return model


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("flag", ["single_process_multi_gpu", "is_lead2"])
def test_dataparallel_under_a_flag_bound_to_the_one_process_test_is_the_non_distributed_path(tmp_path, flag):
    path = tmp_path / "train.py"
    path.write_text(DATAPARALLEL.format(flag=flag, test="rank == -1 and torch.cuda.device_count() > 1"), encoding="utf-8")
    assert "dataparallel" not in shown_findings([str(path)])[0]


def test_dataparallel_under_a_flag_of_something_else_still_warns(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(DATAPARALLEL.format(flag="many_gpus", test="torch.cuda.device_count() > 1"), encoding="utf-8")
    assert "dataparallel" in shown_findings([str(path)])[0]


CACHE_BUILDER = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def load_split(local_rank, split="train"):
    {waits}
    data = torch.randn(256, 16)
    {releases}
    return data


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    train = load_split(local_rank)
    model = DDP(torch.nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    if local_rank == 0:
        print(load_split(local_rank, split="dev").shape)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("waits, releases", [
    ("if local_rank != 0 and split == 'train':\n        dist.barrier()",
     "if local_rank == 0 and split == 'train':\n        dist.barrier()"),
    ("waiting = local_rank != 0 and split == 'train'\n    if waiting:\n        dist.barrier()",
     "releasing = local_rank == 0 and split == 'train'\n    if releasing:\n        dist.barrier()"),
])
def test_barrier_a_literal_argument_never_reaches_is_not_a_rank_0_collective(tmp_path, waits, releases):
    path = tmp_path / "train.py"
    path.write_text(CACHE_BUILDER.format(waits=waits, releases=releases), encoding="utf-8")
    assert "collective-mismatch" not in shown_findings([str(path)])[0]


GATHER = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def gather(local_metrics):
    {exit}
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, local_metrics)
    return gathered


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    monitored = {{"layer0"}} if dist.get_rank() % 2 == 0 else set()
    for step in range(100):
        loss = model(torch.randn(2, 4).cuda()).sum()
        loss.backward()
        if step % 10 == 0:
            print(gather({{name: loss.item() for name in monitored}}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("exit", ["if not local_metrics:\n        return {}",
                                  "nothing = not local_metrics\n    if nothing:\n        return {}"])
def test_collective_after_an_exit_on_this_rank_s_data_is_found_through_a_flag(tmp_path, exit):
    path = tmp_path / "train.py"
    path.write_text(GATHER.format(exit=exit), encoding="utf-8")
    assert "collective-mismatch" in shown_findings([str(path)])[0]


PREDICATE = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def {name}(args, local=False):
    return args.local_rank == 0 if local else args.rank == 0


class Args:
    pass


def main():
    args = Args()
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    args.rank = dist.get_rank()
    model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[args.local_rank])
    saving = {name}(args)
    for epoch in range(3):
        model(torch.randn(2, 4).cuda()).sum().backward()
        if saving:
            torch.save(model.module.state_dict(), "latest.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("name", ["is_master", "lead", "f3"])
def test_predicate_returning_a_rank_0_test_in_either_arm_is_a_main_process_test_whatever_its_name(tmp_path, name):
    path = tmp_path / "train.py"
    path.write_text(PREDICATE.format(name=name), encoding="utf-8")
    assert "logging-from-all-ranks" not in shown_findings([str(path)])[0]
