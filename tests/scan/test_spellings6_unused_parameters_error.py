"""unused-parameters-error (session 6): indexing a parameter TENSOR by the input is not picking a submodule.

``self.heads[task](x)`` runs one entry of a container: the others get no gradient (a confirmed DDP failure).
``self.pose_update_r[idx]`` (pytorch/pytorch#90723: an ``nn.Parameter`` table of per-view poses) gathers rows
of one tensor: the whole parameter is in the graph and gets a gradient, so DDP has nothing to complain about.
"""

from __future__ import annotations

from tests.scan.conftest import scan_ids

ID = "unused-parameters-error"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class Model(nn.Module):
    def __init__(self, views=1000, tasks=("a", "b")):
        super().__init__()
        self.table = {table}
        self.heads = nn.ModuleDict({{t: nn.Linear(3, 3) for t in tasks}})

    def forward(self, idx, points, task):
        rows = self.table[idx]
        return {use}


def main():
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    model = DDP(Model().cuda(), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        idx = torch.randint(0, 1000, (64,), device="cuda")
        opt.zero_grad()
        F.mse_loss(model(idx, torch.randn(64, 3, device="cuda"), "a"), torch.zeros(64, 3, device="cuda")).backward()
        opt.step()
'''


def test_a_parameter_table_gathered_by_input_indices_is_used(tmp_path):
    code = SCRIPT.format(table="nn.Parameter(torch.zeros(views, 3))",
                         use="rows * points + sum(h.weight.sum() for h in self.heads.values())")
    assert ID not in scan_ids(tmp_path, code)


def test_a_head_picked_by_the_input_still_counts_as_sometimes_used(tmp_path):
    code = SCRIPT.format(table="nn.Parameter(torch.zeros(views, 3))", use="self.heads[task](rows * points)")
    assert ID in scan_ids(tmp_path, code)
