"""The arm that runs only when no launcher set the rank is one process (issue 11, scan-precision7).

``elif 'RANK' not in os.environ: device = torch.empty(1).cuda().device; return`` (SparK's dist.initialize), the
``else`` of ``if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:`` (DeiT/MAE's init_distributed_mode),
``os.environ.get("LOCAL_RANK") is None``: without a launcher there is one process, so GPU 0 before set_device
(missing-set-device) and a file written there (logging-from-all-ranks) concern that process alone. The same code in
the launcher's arm, or under a test of an unrelated variable, still warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

DEVICE_TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def initialize():
{arm}
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    return local


def main():
    local = initialize()
    net = DDP(nn.Linear(8, 1).to(f"cuda:{{local}}"), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        loss = net(torch.randn(4, 8, device=f"cuda:{{local}}")).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''

ALONE_ARMS = {
    "RANK not in os.environ": "    if 'RANK' not in os.environ:\n        torch.empty(1).cuda()\n        return 0",
    "elif LOCAL_RANK not in environ": ("    if not torch.cuda.is_available():\n        return None\n"
                                       "    elif 'LOCAL_RANK' not in os.environ:\n        torch.zeros(1).cuda()\n"
                                       "        return 0"),
    "getenv is None": "    if os.getenv('WORLD_SIZE') is None:\n        torch.ones(2).cuda()\n        return 0",
    "else of RANK and WORLD_SIZE present": ("    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:\n"
                                            "        pass\n    else:\n        torch.empty(1).cuda()\n        return 0"),
    "not (RANK in environ)": "    if not ('RANK' in os.environ):\n        torch.empty(1).cuda()\n        return 0",
    "held by a flag": ("    alone = 'RANK' not in os.environ\n    if alone:\n        torch.empty(1).cuda()\n"
                       "        return 0"),
    "walrus": "    if (alone := 'RANK' not in os.environ):\n        torch.empty(1).cuda()\n        return 0",
}
LAUNCHED_ARMS = {
    "the launcher's arm": "    if 'RANK' in os.environ:\n        torch.empty(1).cuda()",
    "an unrelated variable": "    if 'DEBUG' not in os.environ:\n        torch.empty(1).cuda()",
    "no test": "    torch.empty(1).cuda()",
}


def _found(tmp_path: Path, text: str, finding: str) -> bool:
    path = tmp_path / "train.py"
    path.write_text(text)
    return finding in shown_findings([str(path)])[0]


@pytest.mark.parametrize("arm", ALONE_ARMS, ids=list(ALONE_ARMS))
def test_gpu_zero_in_the_no_launcher_arm_is_quiet(tmp_path, arm):
    assert not _found(tmp_path, DEVICE_TEMPLATE.format(arm=ALONE_ARMS[arm]), "missing-set-device")


@pytest.mark.parametrize("arm", LAUNCHED_ARMS, ids=list(LAUNCHED_ARMS))
def test_gpu_zero_before_set_device_on_every_rank_still_warns(tmp_path, arm):
    assert _found(tmp_path, DEVICE_TEMPLATE.format(arm=LAUNCHED_ARMS[arm]), "missing-set-device")


SAVE_TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        loss = net(torch.randn(4, 8).cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
{save}


if __name__ == "__main__":
    main()
'''

SAVES = {
    "RANK not in os.environ": ("    if 'RANK' not in os.environ:\n        torch.save(net.state_dict(), 'last.pt')", False),
    "else of WORLD_SIZE in os.environ": ("    if 'WORLD_SIZE' in os.environ:\n        pass\n    else:\n"
                                         "        torch.save(net.state_dict(), 'last.pt')", False),
    "the launcher's arm": ("    if 'RANK' in os.environ:\n        torch.save(net.state_dict(), 'last.pt')", True),
}


@pytest.mark.parametrize("case", SAVES, ids=list(SAVES))
def test_save_in_the_no_launcher_arm_is_one_writer(tmp_path, case):
    save, loud = SAVES[case]
    assert _found(tmp_path, SAVE_TEMPLATE.format(save=save), "logging-from-all-ranks") is loud
