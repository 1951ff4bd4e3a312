"""shuffle-with-sampler: the finding's title names the loader once, whether or not it has a variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from troubleshooter.cli import main

SCRIPT = '''
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
data = list(range(10))
sampler = DistributedSampler(data)
{loader}
'''


@pytest.mark.parametrize("loader, title", [
    ("train_loader = DataLoader(data, sampler=sampler, shuffle=True)",
     "DataLoader train_loader passes shuffle=True together with a sampler"),
    ("for batch in DataLoader(data, sampler=sampler, shuffle=True):\n    pass",
     "A DataLoader passes shuffle=True together with a sampler"),
])
def test_title_names_the_loader_once(tmp_path: Path, loader: str, title: str):
    script, out = tmp_path / "train.py", tmp_path / "r.json"
    script.write_text(SCRIPT.format(loader=loader), encoding="utf-8")
    main(["scan", str(script), "--format", "json", "-o", str(out)])
    finding = next(f for f in json.loads(out.read_text())["findings"] if f["id"] == "shuffle-with-sampler")
    assert finding["title"] == title
    assert "DataLoader DataLoader" not in finding["fix"] and "= DataLoader(data" in finding["fix"]
