"""A set-up helper inlined where it is called keeps its rank guards when its locals are renamed.

The scan reads a local module's set-up function as if its body stood at the call (inline.py); a local of the helper
that the caller also has (``rank``) is renamed there (``rank_setup``). Large-DiT's set-up, moved into a helper
module, starts its SummaryWriter under ``if rank == 0:``: what the inlined statements bind is learnt like the
module's own, so the renamed ``rank`` still holds a rank, scanned with its directory or alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

HELPER = '''
import os
import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def setup(args):
    dist.init_process_group("nccl")
    {rank} = dist.get_rank()
    torch.cuda.set_device({rank} % torch.cuda.device_count())
    if {rank} == 0:
        writer = SummaryWriter(os.path.join(args.out, "tb"))
    else:
        writer = None
    return writer
'''

ENTRY = '''
import argparse
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from ddp_helpers import setup


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="results")
    args = parser.parse_args()
    writer = setup(args)
    rank = dist.get_rank()
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[rank % torch.cuda.device_count()])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        loss = net(torch.randn(4, 8).cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if writer is not None:
            writer.add_scalar("loss", loss.item(), step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("rank", ["rank", "global_rank", "my_rank"])
@pytest.mark.parametrize("alone", [False, True], ids=["with its directory", "entry alone"])
def test_a_renamed_helper_rank_still_guards(tmp_path: Path, rank, alone):
    (tmp_path / "ddp_helpers.py").write_text(HELPER.format(rank=rank))
    (tmp_path / "train.py").write_text(ENTRY.replace("rank = dist.get_rank()", f"{rank} = dist.get_rank()")
                                       .replace("[rank %", f"[{rank} %"))
    paths = [str(tmp_path / "train.py")] if alone else [str(tmp_path)]
    assert "logging-from-all-ranks" not in shown_findings(paths)[0]
