"""logging-from-all-ranks: a checkpoint path kept in an attribute that is set up per rank (issue 11,
scan-precision6).

A save on every rank is a defect only when the ranks write ONE file. Where the path lives in an attribute assigned
from the rank in another method (Lightning-Bolts' SwAV queue: ``self.queue_path = ...("queue" +
str(self.trainer.global_rank) + ".pth")`` in ``on_train_start``, ``torch.save(..., self.queue_path)`` in
``on_train_epoch_end``), each rank writes its own file. The same attribute set without the rank still warns.
"""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

ID = "logging-from-all-ranks"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class QueueKeeper:
    def __init__(self, folder):
        self.folder = folder
        self.rank = dist.get_rank()
        self.queue = torch.zeros(16, 8)
        self.queue_path = "queue"

    def setup(self):
{assign}

    def epoch_end(self):
        torch.save({{"queue": self.queue}}, self.queue_path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    keeper = QueueKeeper("logs")
    keeper.setup()
    for epoch in range(3):
        for step in range(10):
            model(torch.randn(4, 8).cuda()).sum().backward()
            opt.step()
        keeper.epoch_end()


if __name__ == "__main__":
    main()
'''

PER_RANK = (
    '        self.queue_path = os.path.join(self.folder, "queue" + str(dist.get_rank()) + ".pth")',
    '        self.queue_path = os.path.join(self.folder, f"queue{self.rank}.pth")',
    '        self.queue_path = os.path.join(self.folder, "queue%d.pth" % int(os.environ["RANK"]))',
    '        name = "queue_rank{}.pth".format(dist.get_rank())\n        self.queue_path = os.path.join(self.folder, name)',
)


def _warned(tmp_path: Path, assign: str) -> bool:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(assign=assign))
    return ID in shown_findings([str(path)])[0]


def test_a_path_attribute_set_per_rank_elsewhere_is_each_ranks_own_file(tmp_path):
    for assign in PER_RANK:
        assert not _warned(tmp_path, assign), assign


def test_the_same_attribute_set_without_the_rank_still_warns(tmp_path):
    for assign in ('        self.queue_path = os.path.join(self.folder, "queue.pth")',
                   '        self.queue_path = os.path.join(self.folder, f"queue{len(self.queue)}.pth")'):
        assert _warned(tmp_path, assign), assign
