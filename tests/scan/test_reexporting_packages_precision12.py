"""A package's ``__init__.py`` that only re-exports its submodules is a door, not a level: an entry script whose
distributed set-up lives behind one (prismatic-vlms' and OpenVLA's ``scripts/pretrain.py`` -> ``prismatic.overwatch``
-> ``overwatch.py``, where Accelerate's state starts the group) is seen as distributed."""

from __future__ import annotations

import pytest

from troubleshooter.scan import scan_paths

ENTRY = '''import torch
from pkg.overwatch import initialize_overwatch

overwatch = initialize_overwatch(__name__)


def main():
    model = torch.nn.Linear(4, 4).to(overwatch.device)
    model(torch.randn(2, 4, device=overwatch.device)).sum().backward()


if __name__ == "__main__":
    main()
'''
SETUP = '''import os
import torch
import torch.distributed as dist


class Overwatch:
    def __init__(self, name):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)


def initialize_overwatch(name):
    return Overwatch(name)
'''
DOORS = {
    "imports only": "from .overwatch import initialize_overwatch\n",
    "docstring and __all__": ('"""Logging and set-up."""\nfrom .overwatch import initialize_overwatch\n\n'
                              '__all__ = ["initialize_overwatch"]\n'),
}


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
def test_set_up_behind_a_reexporting_package_is_seen(tmp_path, door):
    files = {"scripts/pretrain.py": ENTRY, "pkg/__init__.py": "", "pkg/overwatch/__init__.py": door,
             "pkg/overwatch/overwatch.py": SETUP}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert scan_paths([str(tmp_path / "scripts" / "pretrain.py")]).facts["scan.uses_distributed"] is True
