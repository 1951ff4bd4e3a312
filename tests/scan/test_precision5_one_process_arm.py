"""``local_rank == -1`` is the one-process arm (issue 11, scan-precision5).

The launcher convention of torch.distributed.launch, apex and the HF examples/Trainer: ``--local_rank`` defaults to
-1 when no launcher started the process, so ``if args.local_rank == -1:`` (and the ``else`` of ``!= -1``) runs only
in a single-process run. A checkpoint written there is written by one process (transformers' own
``Trainer._save_rng_state``: one file alone, one file per rank otherwise); the distributed arm is judged as before.
"""

from __future__ import annotations

import pytest

from tests.scan.quality import shown_findings

SCRIPT = '''
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
    model = torch.nn.Linear(8, 1).cuda()
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 8).cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
{save}


if __name__ == "__main__":
    main()
'''

ONE_PROCESS = {
    "eq_minus_one": '''    if args.local_rank == -1:
        torch.save(model.state_dict(), "final.pt")
    else:
        torch.save(model.module.state_dict(), f"final_{args.local_rank}.pt")''',
    "else_of_not_minus_one": '''    local_rank = args.local_rank
    if local_rank != -1:
        torch.save(model.module.state_dict(), "final_%d.pt" % local_rank)
    else:
        torch.save(model.state_dict(), "final.pt")''',
    "environment_variable": '''    state = {"rng": torch.get_rng_state()}
    if int(os.environ.get("LOCAL_RANK", -1)) == -1:
        torch.save(state, "rng_state.pth")''',
}


def _hits(tmp_path, save: str) -> dict:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(save=save))
    return shown_findings([str(path)])[0]


@pytest.mark.parametrize("save", ONE_PROCESS.values(), ids=ONE_PROCESS.keys())
def test_a_write_in_the_one_process_arm_is_not_from_all_ranks(tmp_path, save):
    hits = _hits(tmp_path, save)
    assert "logging-from-all-ranks" not in hits, hits


@pytest.mark.parametrize("save", [
    '''    if args.local_rank != -1:
        torch.save(model.module.state_dict(), "final.pt")''',
    '''    if args.local_rank == -1:
        pass
    else:
        torch.save(model.module.state_dict(), "final.pt")''',
    '''    if args.epoch == -1:
        torch.save(model.module.state_dict(), "final.pt")''',
], ids=["distributed_arm", "else_of_eq_minus_one", "not_a_rank"])
def test_the_distributed_arm_still_writes_from_every_rank(tmp_path, save):
    assert "logging-from-all-ranks" in _hits(tmp_path, save)
