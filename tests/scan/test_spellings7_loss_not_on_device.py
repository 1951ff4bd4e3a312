"""loss-not-on-device (session 9): class weights computed on the CPU before they reach the loss.

Weights are rarely a bare ``torch.tensor(...)``: they are inverse frequencies (``1.0 / torch.tensor(counts)``),
normalised (``w / w.sum()``), cast (``torch.tensor(w).float()``), in a trainer class. Arithmetic over CPU tensors and
numbers, and methods that keep the device, stay on the CPU; moving any part (``.cuda()``, ``.to(device)``) or the loss
is the fix and stays quiet.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "loss-not-on-device"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, local_rank, class_counts):
        self.device = torch.device("cuda", local_rank)
        self.model = DistributedDataParallel(nn.Linear(8, 2).to(self.device), device_ids=[local_rank])
{weights}
        self.criterion = nn.CrossEntropyLoss(weight=weights){loss_move}
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, x, y):
        loss = self.criterion(self.model(x.to(self.device)), y.to(self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    trainer = Trainer(local_rank, [10, 90])
    for _ in range(100):
        trainer.step(torch.randn(8, 8), torch.randint(0, 2, (8,)))


if __name__ == "__main__":
    main()
'''

INVERSE = "        weights = 1.0 / torch.tensor(class_counts, dtype=torch.float)"
NORMALISED = ("        counts = torch.tensor(class_counts, dtype=torch.float)\n"
              "        weights = counts.sum() / counts")
CAST = "        weights = torch.tensor([1.0, 9.0]).float()"
INVERSE_MOVED = "        weights = (1.0 / torch.tensor(class_counts, dtype=torch.float)).to(self.device)"
PART_MOVED = ("        counts = torch.tensor(class_counts, dtype=torch.float).cuda()\n"
              "        weights = counts.sum() / counts")
ON_DEVICE = "        weights = 1.0 / torch.tensor(class_counts, dtype=torch.float, device=self.device)"


@pytest.mark.parametrize("weights", [INVERSE, NORMALISED, CAST], ids=["inverse_frequency", "normalised", "cast"])
def test_weights_computed_on_the_cpu(tmp_path, weights):
    assert ID in scan_ids(tmp_path, SCRIPT.format(weights=weights, loss_move=""))


@pytest.mark.parametrize("weights,loss_move", [(INVERSE_MOVED, ""), (PART_MOVED, ""), (ON_DEVICE, ""),
                                               (INVERSE, ".to(self.device)")],
                         ids=["weights_moved", "counts_moved", "built_on_device", "loss_moved"])
def test_weights_or_loss_on_the_device_are_quiet(tmp_path, weights, loss_move):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(weights=weights, loss_move=loss_move))
