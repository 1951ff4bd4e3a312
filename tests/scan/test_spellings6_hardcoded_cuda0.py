"""hardcoded-cuda0 (session 6): the GPU pinned through a settings dict written in the script.

Scripts keep their settings in a dict literal (``cfg = {"device": "cuda:0", "lr": ...}``) and place the model with
``.to(cfg["device"])`` or a name bound to it: every rank then runs on GPU 0, exactly as with the literal. Quiet when
the dict's entry depends on the rank, when the dict is rebound (its value is not evidently that literal), or when
only rank 0 reads it.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "hardcoded-cuda0"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    cfg = {{"device": {device}, "lr": 0.1, "steps": 10}}
{use}
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    for _ in range(cfg["steps"]):
        opt.zero_grad()
        model(torch.randn(8, 4).to(local_rank)).sum().backward()
        opt.step()


if __name__ == "__main__":
    main()
'''

DIRECT = "    model = DDP(nn.Linear(4, 4).to(cfg['device']), device_ids=[local_rank])"
NAMED = "    dev = cfg['device']\n    model = DDP(nn.Linear(4, 4).to(dev), device_ids=[local_rank])"


@pytest.mark.parametrize("use", [DIRECT, NAMED])
def test_gpu_zero_from_a_settings_dict(tmp_path, use):
    assert ID in scan_ids(tmp_path, SCRIPT.format(device='"cuda:0"', use=use))


@pytest.mark.parametrize("device,use", [
    ('f"cuda:{local_rank}"', DIRECT),
    ('"cpu"', NAMED),
    ('"cuda:0"', "    cfg = load_settings()\n" + DIRECT),  # rebound: no longer evidently the literal
    ('"cuda:0"', "    model = DDP(nn.Linear(4, 4).to(local_rank), device_ids=[local_rank])\n"
                 "    if dist.get_rank() == 0:\n        probe = nn.Linear(4, 4).to(cfg['device'])"),
])
def test_quiet_when_the_entry_is_not_gpu_zero_on_every_rank(tmp_path, device, use):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(device=device, use=use))
