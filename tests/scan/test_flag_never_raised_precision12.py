"""collective-mismatch: an exit under ``if callbacks.stop_training:`` in rank 0's arm skips nothing when nothing ever
raises that flag - every assignment of it, here and in the local module whose class holds it, stores a false literal
(the yolov5 / yolov7 / yolov9 ``train.py`` family: ``Callbacks.__init__`` sets ``self.stop_training = False``, the
early-stopping ``broadcast_object_list`` follows). A flag something sets to True (a callback, ``setattr``) still makes
the exit a skip of the broadcast."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

CALLBACKS = '''class Callbacks:
    def __init__(self):
        self._callbacks = {{"on_train_batch_end": []}}
        self.stop_training = False  # set True to interrupt training

    def run(self, hook, *args):
        for callback in self._callbacks[hook]:
            callback(*args)
{extra}
'''
TRAIN = '''import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from callbacks import Callbacks

RANK = int(os.getenv("RANK", -1))
LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def train(epochs, callbacks):
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[LOCAL_RANK])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    stop = False
    for epoch in range(epochs):
        for step in range(100):
            loss = model(torch.randn(4, 8).cuda()).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if RANK in {{-1, 0}}:
                callbacks.run("on_train_batch_end", step)
                if callbacks.stop_training:
                    return
        if RANK != -1:
            broadcast_list = [stop if RANK == 0 else None]
            dist.broadcast_object_list(broadcast_list, 0)
            stop = broadcast_list[0]
        if stop:
            break


def main():
    torch.cuda.set_device(LOCAL_RANK)
    dist.init_process_group("nccl")
    callbacks = Callbacks()
{raise_here}
    train(10, callbacks)


if __name__ == "__main__":
    main()
'''
CASES = {
    "initialised False, never raised": ("", "", False),
    "lowered again elsewhere": ("\n    def reset(self):\n        self.stop_training = False\n", "", False),
    "raised by a callback method": ("\n    def request_stop(self):\n        self.stop_training = True\n", "", True),
    "raised by the script": ("", "    callbacks.stop_training = os.getenv('STOP') == '1'", True),
    "set by name": ("", "    setattr(callbacks, 'stop_training', bool(os.getenv('STOP')))", True),
}


@pytest.mark.parametrize("extra, raise_here, warns", CASES.values(), ids=CASES.keys())
def test_an_exit_under_a_flag_nothing_raises_skips_nothing(tmp_path, extra, raise_here, warns):
    code = TRAIN.format(raise_here=raise_here)
    assert shows(tmp_path, "collective-mismatch", code, callbacks=CALLBACKS.format(extra=extra)) is warns
