"""Frameworks that run the distributed set-up for the script (scan-precision): MosaicML Composer and OpenMMLab's
mmengine Runner. A file that only uses them is distributed, and what they do for it is not flagged."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

COMPOSER = '''
import torch
import torch.nn as nn
{imports}
from torch.utils.data import DataLoader, TensorDataset

def main(model, data):
    {setup}
    loader = DataLoader(data, batch_size=8, sampler=dist.get_sampler(data, shuffle=True))
    trainer = {trainer}(model=model, train_dataloader=loader, max_duration="1ep")
    trainer.fit()

main(nn.Linear(8, 1), TensorDataset(torch.randn(64, 8)))
'''

MMENGINE = '''
import torch
{imports}

def main(model, data):
    runner = {runner}(model=model, work_dir="w", train_dataloader=dict(batch_size=8, dataset=data,
                      sampler=dict(type="DefaultSampler", shuffle=True)), launcher="pytorch")
    runner.train()

main(torch.nn.Linear(8, 1), [])
'''


def _scan(tmp_path: Path, code: str) -> tuple[dict, dict]:
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    hits, facts = shown_findings([str(path)])
    return hits, facts


def test_composer_entries_make_a_file_distributed(tmp_path):
    spellings = [
        ("from composer import Trainer\nfrom composer.utils import dist, get_device",
         "dist.initialize_dist(get_device(None))", "Trainer"),
        ("import composer\nfrom composer.utils import dist", "pass", "composer.Trainer"),
        ("from composer.trainer import Trainer\nfrom composer.utils import dist", "pass", "Trainer"),
    ]
    for imports, setup, trainer in spellings:
        hits, facts = _scan(tmp_path, COMPOSER.format(imports=imports, setup=setup, trainer=trainer))
        assert facts["scan.uses_distributed"] is True, trainer
        assert hits == {}, (trainer, hits)


def test_mmengine_runner_entries_make_a_file_distributed(tmp_path):
    for imports, runner in (("from mmengine.runner import Runner", "Runner"),
                            ("from mmengine.runner import Runner", "Runner.from_cfg"),
                            ("import mmengine.runner", "mmengine.runner.Runner"),
                            ("from mmengine.runner import FlexibleRunner", "FlexibleRunner")):
        hits, facts = _scan(tmp_path, MMENGINE.format(imports=imports, runner=runner))
        assert facts["scan.uses_distributed"] is True, runner
        assert hits == {}, (runner, hits)

