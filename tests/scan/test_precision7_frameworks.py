"""A run set up by mmcv 1.x (issue 11, scan-precision7).

OpenMMLab's code before mmengine, and the research repositories built on it (GroupViT, many detection and
segmentation repos), start the group with ``mmcv.runner.init_dist('pytorch')`` (which also sets the device from
``RANK % device_count``) and wrap the model in ``mmcv.parallel.MMDistributedDataParallel``. No torch.distributed
set-up call of their own: the scan must still know the file runs distributed, and must not ask for a
``set_device`` that ``init_dist`` makes. What mmcv does not do (shard the script's own loader) is still checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

SETUPS = [
    ("from mmcv.runner import init_dist", "init_dist('pytorch')"),
    ("from mmcv.runner import init_dist", "init_dist(args.launcher, **cfg.dist_params)"),
    ("import mmcv.runner", "mmcv.runner.init_dist('pytorch', backend='nccl')"),
    ("from mmcv.runner.dist_utils import init_dist", "init_dist('pytorch')"),
]
WRAPS = [
    ("from mmcv.parallel import MMDistributedDataParallel",
     "MMDistributedDataParallel(model.cuda(), device_ids=[torch.cuda.current_device()], broadcast_buffers=False)"),
    ("from mmcv.parallel import MMDistributedDataParallel as MMDDP",
     "MMDDP(model.cuda(), device_ids=[torch.cuda.current_device()])"),
    ("import mmcv.parallel", "mmcv.parallel.MMDistributedDataParallel(model.cuda())"),
]

TEMPLATE = '''
import argparse
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
{setup_import}
{wrap_import}
{sampler_import}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", default="pytorch")
    args = parser.parse_args()
    cfg = argparse.Namespace(dist_params={{}})
    {setup}
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    loader = DataLoader(data, batch_size=8{sampler})
    model = nn.Linear(8, 1)
    model = {wrap}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        {set_epoch}
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
'''


def _scan(tmp_path: Path, setup, wrap, sharded: bool):
    path = tmp_path / "train.py"
    path.write_text(TEMPLATE.format(
        setup_import=setup[0], setup=setup[1], wrap_import=wrap[0], wrap=wrap[1],
        sampler_import="from torch.utils.data.distributed import DistributedSampler" if sharded else "",
        sampler=", sampler=sampler" if sharded else ", shuffle=True",
        set_epoch="sampler.set_epoch(epoch)" if sharded else "pass"))
    if sharded:
        text = path.read_text().replace("    loader = DataLoader", "    sampler = DistributedSampler(data)\n    loader = DataLoader")
        path.write_text(text)
    return shown_findings([str(path)])


@pytest.mark.parametrize("setup", SETUPS, ids=[s[1] for s in SETUPS])
@pytest.mark.parametrize("wrap", WRAPS, ids=[w[0] for w in WRAPS])
def test_mmcv_setup_makes_the_run_distributed_and_sets_the_device(tmp_path, setup, wrap):
    hits, facts = _scan(tmp_path, setup, wrap, sharded=False)
    assert facts["scan.uses_distributed"] is True
    assert "missing-set-device" not in hits
    assert "missing-distributed-sampler" in hits  # mmcv does not shard the script's own loader


@pytest.mark.parametrize("setup", SETUPS, ids=[s[1] for s in SETUPS])
def test_mmcv_setup_with_a_sharded_loader_is_clean(tmp_path, setup):
    hits, facts = _scan(tmp_path, setup, WRAPS[0], sharded=True)
    assert facts["scan.uses_distributed"] is True
    assert hits == {}, hits


def test_a_script_without_mmcv_set_up_is_not_made_distributed_by_the_import(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import mmcv\nimport torch\ncfg = mmcv.Config.fromfile('c.py')\nprint(torch.zeros(1))\n")
    assert not shown_findings([str(path)])[1]["scan.uses_distributed"]
