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
