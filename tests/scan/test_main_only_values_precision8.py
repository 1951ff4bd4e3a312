"""Rank guards by meaning: a value that exists on the main process only (None on the others) guards what it tests.

XMem builds its trainer with a TensorBoard logger and a save path only under ``if local_rank == 0:`` (the other ranks
construct it without them: the ``logger=None`` default) and saves checkpoints ``if self.logger is not None:``. The
same idiom is spelled ``writer = SummaryWriter(...) if rank == 0 else None`` / ``if writer is not None:``, and
``tb_writer = None`` then ``if rank in (-1, 0): tb_writer = SummaryWriter(...)`` / ``if tb_writer:``. A name counts
when every value bound to it (assignments, parameter defaults, arguments) is None or made on rank 0, and one is not
None; a value also made off rank 0, or rebound from a broadcast, does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter


class Runner:
    def __init__(self, net, writer=None, out_dir=None):
        self.net, self.writer, self.out_dir = net, writer, out_dir
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def save(self, step):
        if self.out_dir is None:
            return
        torch.save(self.net.module.state_dict(), os.path.join(self.out_dir, "last.pt"))

    def fit(self, steps):
        for step in range(steps):
            loss = self.net(torch.randn(4, 8).cuda()).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            {guarded}


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
{made}
    runner.fit(100)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

CLASS_ARGS = ('    if rank == 0:\n        runner = Runner(net, writer=SummaryWriter("runs"), out_dir="ckpt")\n'
              "    else:\n        runner = Runner(net)")
SPELLINGS = {
    "keyword given on rank 0 only, is not None": (CLASS_ARGS, "if self.writer is not None:\n                self.save(step)"),
    "keyword given on rank 0 only, truthiness": (CLASS_ARGS, "if self.writer:\n                self.save(step)"),
    "early return on a None path": (CLASS_ARGS, "self.save(step)"),
    "conditional expression": ('    writer = SummaryWriter("runs") if rank == 0 else None\n'
                               '    runner = Runner(net, writer, out_dir="ckpt" if rank == 0 else None)',
                               "if self.writer is not None:\n                torch.save(self.net.module.state_dict(), "
                               '"last.pt")'),
    "None first, made under a rank test": ('    tb_writer, ckpt_dir = None, None\n    if rank in (-1, 0):\n'
                                           '        tb_writer = SummaryWriter("runs")\n        ckpt_dir = "ckpt"\n'
                                           "    runner = Runner(net, tb_writer, ckpt_dir)",
                                           "if self.writer:\n                torch.save(self.net.module.state_dict(), "
                                           '"last.pt")'),
    "negated arm": ('    writer = None if rank != 0 else SummaryWriter("runs")\n'
                    '    runner = Runner(net, writer, None if rank != 0 else "ckpt")',
                    "if self.writer is None:\n                continue\n"
                    '            torch.save(self.net.module.state_dict(), "last.pt")'),
}
EVERY_RANK = {
    "made on every rank": ('    runner = Runner(net, SummaryWriter("runs"), out_dir="ckpt")',
                           "if self.writer is not None:\n                self.save(step)"),
    "rebound from a broadcast": ('    out_dir = "ckpt" if rank == 0 else None\n    box = [out_dir]\n'
                                 "    dist.broadcast_object_list(box, src=0)\n    out_dir = box[0]\n"
                                 "    runner = Runner(net, out_dir=out_dir)",
                                 "self.save(step)"),
}


def _hits(tmp_path: Path, made: str, guarded: str) -> set[str]:
    return shown_ids(tmp_path, TEMPLATE.format(made=made, guarded=guarded))


@pytest.mark.parametrize("case", SPELLINGS, ids=list(SPELLINGS))
def test_a_save_guarded_by_a_main_only_value_runs_on_rank_0(tmp_path, case):
    assert "logging-from-all-ranks" not in _hits(tmp_path, *SPELLINGS[case])


@pytest.mark.parametrize("case", EVERY_RANK, ids=list(EVERY_RANK))
def test_a_value_every_rank_holds_guards_nothing(tmp_path, case):
    assert "logging-from-all-ranks" in _hits(tmp_path, *EVERY_RANK[case])


def test_a_collective_under_a_main_only_value_is_one_sided(tmp_path):
    made, _ = SPELLINGS["conditional expression"]
    hits = _hits(tmp_path, made, "if self.writer is not None:\n                dist.all_reduce(loss.detach())")
    assert "collective-mismatch" in hits


OPTION = '''
import argparse
import os
import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    if dist.get_rank() == 0:
        args.output_dir = os.path.join(args.output_dir, "run")
{none}
    if args.output_dir:
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("none, one_sided", [("", False), ("    else:\n        args.output_dir = None", True)],
                         ids=["set on rank 0, bound elsewhere unseen", "None on the other ranks"])
def test_a_value_needs_to_be_seen_none_off_rank_0(tmp_path, none, one_sided):
    assert ("collective-mismatch" in shown_ids(tmp_path, OPTION.format(none=none))) is one_sided
