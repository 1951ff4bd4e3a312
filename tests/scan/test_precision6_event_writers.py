"""logging-from-all-ranks on TensorBoard writers built on every rank (issue 11, scan-precision6).

A ``SummaryWriter`` opens this process's own event file (``events.out.tfevents.<time>.<host>.<pid>``): built on
every rank it clashes with nothing; the defect is the ranks WRITING to it (duplicated, interleaved curves in one
run, the construct of deepspeed#296 and fastai2#13). So the warning needs a write that runs on every rank, followed
through the name the writer is bound to, an attribute of the object holding it, or the parameter of a local
function it is handed to. A writer kept in a dict or handed to code the scan cannot see is no evidence (CvT's
``writer_dict`` read by functions that write under ``comm.is_main_process()``).
"""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

ID = "logging-from-all-ranks"

HEAD = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
{tb}
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
'''
IMPORTS = ("from torch.utils.tensorboard import SummaryWriter", "from tensorboardX import SummaryWriter")


def _warned(tmp_path: Path, body: str, tb: str = IMPORTS[0]) -> bool:
    path = tmp_path / "train.py"
    path.write_text(HEAD.format(tb=tb) + body)
    return ID in shown_findings([str(path)])[0]


HANDED_TO_A_FUNCTION = '''
def train_one_epoch(epoch, tb_writer):
    for step in range(10):
        opt.step()
{write}

writer = SummaryWriter("runs/exp")
for epoch in range(3):
    train_one_epoch(epoch, writer)
'''

IN_A_DICT = '''
def train_one_epoch(epoch, writer_dict):
    for step in range(10):
        opt.step()
    if dist.get_rank() == 0:
        writer = writer_dict["writer"]
        writer.add_scalar("train_loss", 1.0, writer_dict["steps"])

writer_dict = {"writer": SummaryWriter(logdir="runs/exp"), "steps": 0}
for epoch in range(3):
    train_one_epoch(epoch, writer_dict)
'''

ON_AN_OBJECT = '''
class Logger:
    def __init__(self, folder):
        self.tb = SummaryWriter(folder)

    def log(self, name, value, step):
{write}

logger = Logger("runs/exp")
for step in range(10):
    opt.step()
    logger.log("loss", 1.0, step)
'''


def test_a_writer_handed_to_a_local_function_is_judged_by_the_writes_there(tmp_path):
    for tb in IMPORTS:
        assert _warned(tmp_path, HANDED_TO_A_FUNCTION.format(write='        tb_writer.add_scalar("loss", 1.0, step)'), tb)
        for guard in ("if dist.get_rank() == 0:", "if local_rank == 0:", "if int(os.environ['RANK']) == 0:"):
            write = f'        {guard}\n            tb_writer.add_scalar("loss", 1.0, step)'
            assert not _warned(tmp_path, HANDED_TO_A_FUNCTION.format(write=write), tb), (tb, guard)


def test_a_writer_kept_in_a_dict_or_never_written_is_no_evidence(tmp_path):
    assert not _warned(tmp_path, IN_A_DICT)
    assert not _warned(tmp_path, 'writer = SummaryWriter("runs/exp")\nfor step in range(10):\n    opt.step()\n')
    assert not _warned(tmp_path, 'writer = SummaryWriter("runs/exp")\nfor step in range(10):\n    opt.step()\n'
                                 'external_logging.attach(writer)\n')


def test_a_writer_on_an_object_written_on_every_rank_still_warns(tmp_path):
    assert _warned(tmp_path, ON_AN_OBJECT.format(write='        self.tb.add_scalar(name, value, step)'))
    assert not _warned(tmp_path, ON_AN_OBJECT.format(
        write='        if dist.get_rank() == 0:\n            self.tb.add_scalar(name, value, step)'))


ONE_OFF = '''
writer = SummaryWriter("runs/exp")
{write}
for step in range(10):
    opt.step()
    if dist.get_rank() == 0:
        writer.add_scalar("loss", 1.0, step)
'''

IN_MAIN = '''
def log_config(writer):
    writer.add_text("config", "lr=0.1", 0)


def main():
    writer = SummaryWriter("runs/exp")
{call}
    for step in range(10):
        opt.step()
        if dist.get_rank() == 0:
            writer.add_scalar("loss", 1.0, step)


if __name__ == "__main__":
    main()
'''


def test_a_one_off_write_on_every_rank_is_a_duplicate_not_a_clash(tmp_path):
    """CDARTS: ``writer.add_text('config', ...)`` once at start-up on every rank, every scalar under the rank test:
    each rank's own event file holds the text once; no curve mixes ranks."""
    for write in ('writer.add_text("config", "lr=0.1", 0)', 'writer.add_hparams({"lr": 0.1}, {"acc": 0.0})'):
        assert not _warned(tmp_path, ONE_OFF.format(write=write)), write
    assert not _warned(tmp_path, IN_MAIN.format(call="    log_config(writer)"))


def test_a_write_repeated_on_every_rank_still_warns(tmp_path):
    assert _warned(tmp_path, ONE_OFF.format(write='for epoch in range(3):\n    writer.add_scalar("epoch", epoch, epoch)'))
    assert _warned(tmp_path, IN_MAIN.format(call="    for epoch in range(3):\n        log_config(writer)"))
