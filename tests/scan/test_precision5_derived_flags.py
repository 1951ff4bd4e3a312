"""A flag derived from a rank test with another condition has one side known (issue 11, scan-precision5).

nanochat: ``use_dummy_wandb = args.run == "dummy" or not master_process`` then ``wandb_run = DummyWandb() if
use_dummy_wandb else wandb.init(...)``. The flag is false only on the main process, so its else side runs there
alone, whatever the other condition. The guard logic kept only flags true exactly off the main process; a flag with
one side known is now learnt with that side (``RankLogic.flag_sides``), in an ``if`` or a conditional expression.
"""

from __future__ import annotations

import pytest

from tests.scan.quality import shown_findings

SCRIPT = '''
import argparse
import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


class DummyRun:
    def log(self, *args, **kwargs):
        pass


parser = argparse.ArgumentParser()
parser.add_argument("--run", default="dummy")
args = parser.parse_args()
dist.init_process_group("nccl")
ddp_rank = int(os.environ["RANK"])
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
master_process = ddp_rank == 0
{tracker}
model = DDP(torch.nn.Linear(4, 1).cuda(), device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    loss = model(torch.randn(2, 4).cuda()).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    run.log({{"loss": loss.item()}})
'''

RANK0_ONLY = {
    "or_not_master_ifexp": '''use_dummy = args.run == "dummy" or not master_process
run = DummyRun() if use_dummy else wandb.init(project="p", name=args.run)''',
    "or_rank_nonzero_ifexp": '''skip_tracking = args.run == "dummy" or ddp_rank != 0
run = DummyRun() if skip_tracking else wandb.init(project="p")''',
    "or_not_master_if": '''offline = not master_process or args.run == "dummy"
if offline:
    run = DummyRun()
else:
    run = wandb.init(project="p")''',
    "and_master_ifexp": '''track = args.run != "dummy" and master_process
run = wandb.init(project="p") if track else DummyRun()''',
}


def _hits(tmp_path, tracker: str) -> dict:
    path = tmp_path / "base_train.py"
    path.write_text(SCRIPT.format(tracker=tracker))
    return shown_findings([str(path)])[0]


@pytest.mark.parametrize("tracker", RANK0_ONLY.values(), ids=RANK0_ONLY.keys())
def test_a_tracker_on_the_main_side_of_a_derived_flag_is_rank0_only(tmp_path, tracker):
    assert "logging-from-all-ranks" not in _hits(tmp_path, tracker)


@pytest.mark.parametrize("tracker", [
    '''use_dummy = args.run == "dummy"
run = DummyRun() if use_dummy else wandb.init(project="p")''',
    '''use_dummy = args.run == "dummy" or not master_process
run = wandb.init(project="p") if use_dummy else DummyRun()''',
], ids=["flag_without_rank", "tracker_on_the_other_side"])
def test_a_tracker_not_confined_to_the_main_process_still_warns(tmp_path, tracker):
    assert "logging-from-all-ranks" in _hits(tmp_path, tracker)
