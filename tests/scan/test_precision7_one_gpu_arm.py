"""hardcoded-cuda0: GPU 0 chosen only when the process sees one GPU (issue 11, scan-precision7).

With one GPU per task (``srun --gpus-per-task=1``, a per-rank CUDA_VISIBLE_DEVICES) every process's only GPU is
index 0, so ``torch.cuda.set_device(0)`` under ``if torch.cuda.device_count() == 1:`` (mistral-finetune) is this
rank's own GPU, not every rank's GPU 0. Several spellings of the test (``<= 1``, ``< 2``, the ``else`` of ``> 1``,
``not ... > 1``, the count bound to a name) are quiet; GPU 0 pinned in the arm for several GPUs, or under a test
unrelated to the GPU count, still warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

ID = "hardcoded-cuda0"

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def pick_device():
{choose}


def main():
    dist.init_process_group("nccl")
    pick_device()
    local = int(os.environ["LOCAL_RANK"])
    net = DDP(nn.Linear(8, 1).cuda())
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(10):
        loss = net(torch.randn(4, 8).cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''

QUIET = {
    "== 1, early return": ("    if torch.cuda.device_count() == 1:\n        torch.cuda.set_device(0)\n        return\n"
                           "    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))"),
    "<= 1": ("    if torch.cuda.device_count() <= 1:\n        torch.cuda.set_device(0)\n    else:\n"
             "        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))"),
    "< 2, device string": ("    if torch.cuda.device_count() < 2:\n        torch.cuda.set_device('cuda:0')\n    else:\n"
                           "        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))"),
    "else of > 1": ("    if torch.cuda.device_count() > 1:\n        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n"
                    "    else:\n        torch.cuda.set_device(0)"),
    "count bound to a name": ("    visible = torch.cuda.device_count()\n    if visible == 1:\n        torch.cuda.set_device(0)\n"
                              "    else:\n        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))"),
    "not > 1, a device bound": ("    if not torch.cuda.device_count() > 1:\n        dev = 'cuda:0'\n    else:\n"
                                "        dev = f\"cuda:{os.environ['LOCAL_RANK']}\"\n    torch.cuda.set_device(dev)"),
}
LOUD = {
    "GPU 0 in the several-GPU arm": ("    if torch.cuda.device_count() > 1:\n        torch.cuda.set_device(0)"),
    "test unrelated to the GPU count": ("    if os.environ.get('FAST') == '1':\n        torch.cuda.set_device(0)"),
    "no test": "    torch.cuda.set_device(0)",
}


def _warned(tmp_path: Path, choose: str) -> bool:
    path = tmp_path / "train.py"
    path.write_text(TEMPLATE.format(choose=choose))
    return ID in shown_findings([str(path)])[0]


@pytest.mark.parametrize("case", QUIET, ids=list(QUIET))
def test_gpu_zero_when_one_gpu_is_visible_is_quiet(tmp_path, case):
    assert not _warned(tmp_path, QUIET[case])


@pytest.mark.parametrize("case", LOUD, ids=list(LOUD))
def test_gpu_zero_for_every_rank_still_warns(tmp_path, case):
    assert _warned(tmp_path, LOUD[case])
