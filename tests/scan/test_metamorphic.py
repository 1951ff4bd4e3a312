"""Metamorphic tests of the scanner: a meaning-preserving rewrite must not change a verdict.

The rewrites (tests/scan/metamorphic.py) are checked to do what they say on small scripts, and the ones
the scanner is already invariant to are pinned on dev items (the dev buggy scripts and the constructs;
a sample per rewrite, to stay fast). ``bench/scan_metamorphic.py`` measures every rewrite on all of them.
"""

from __future__ import annotations

import ast
from functools import lru_cache

import pytest

from tests.scan.metamorphic import TRANSFORMS, Project, compare, dev_items, scan_project

SCRIPT = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 2).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 2))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
'''


def rewrite(name: str, text: str = SCRIPT) -> Project:
    out = TRANSFORMS[name](Project({"train.py": text}, "train.py"))
    assert out is not None, f"{name} does not apply"
    for body in out.files.values():
        ast.parse(body)
    return out


def test_rewrites_spell_the_same_program_otherwise():
    assert "from torch.distributed import" in rewrite("import_unqualify").source
    assert "init_process_group('nccl')" in rewrite("import_unqualify").source
    assert "torch.nn.parallel.DistributedDataParallel(" in rewrite("import_qualify").source
    assert "from torch import distributed as dist" in rewrite("import_from_style").source
    assert "os.getenv('LOCAL_RANK')" in rewrite("env_getenv").source
    assert "launch_args.local_rank" in rewrite("local_rank_from_argparse").source
    assert "if dist.get_rank() != 0:\n            pass\n        else:" in rewrite("guard_inverted").source
    assert "(is_lead := (dist.get_rank() == 0))" in rewrite("guard_walrus").source
    assert "'epoch {} loss {:.3f}'.format(epoch, loss.item())" in rewrite("fstring_to_format").source
    assert "DistributedSampler(dataset=data)" in rewrite("args_to_keywords").source
    assert "def setup_distributed(local_rank):" in rewrite("setup_to_function").source
    moved = rewrite("setup_to_module")
    assert "from ddp_setup import setup_distributed" in moved.source
    assert "dist.init_process_group('nccl')" in moved.files["ddp_setup.py"]
    assert "class Trainer" in rewrite("loop_in_trainer").source
    renamed = rewrite("rename_synonyms").source
    assert "net = DDP(" in renamed and "def run():" in renamed and "lrank = int(" in renamed


def test_rename_keeps_names_that_carry_meaning_outside_the_script():
    text = ("import torch\nclass Cfg:\n    lr = 0.1\ndef build(rank):\n    return rank\n"
            "def main():\n    rank = 0\n    build(rank=rank)\n    return Cfg.lr\n")
    out = rewrite("rename_all", text).source
    assert "Cfg" not in out and "lr = 0.1" in out and ".lr" in out  # a class attribute keeps its name
    assert "(rank=" in out and "def v" in out  # a keyword's parameter keeps its name; the function is renamed
    assert "import torch" in out


def test_set_up_moved_out_of_a_function_keeps_its_data_flow():
    moved = rewrite("setup_to_function").source
    assert "model, optimizer, sampler, loader = setup_distributed(" in moved or "= setup_distributed(" in moved
    assert "for epoch in range(3)" in moved


# rewrites the scanner is invariant to today (bench/scan_metamorphic.py: 0 verdict changes on dev); a rewrite
# joins this list once a fix makes it invariant
INVARIANT = (
    "identity", "rename_synonyms", "import_from_style", "import_realias", "import_unqualify", "import_qualify",
    "env_getenv", "env_get", "env_subscript", "local_rank_option_spelling", "local_rank_from_argparse", "wrap_main",
    "guard_early_return", "guard_operands_swapped", "fstring_to_format", "args_to_keywords", "args_to_positional",
)
SAMPLE = 8  # items per rewrite: the bench covers all of them


@lru_cache(maxsize=1)
def items():
    return dev_items(("buggy", "construct"))


def sample(name: str):
    chosen = []
    for item in items():
        project = TRANSFORMS[name](item.project)
        if project is not None:
            chosen.append((item, project))
    step = max(1, len(chosen) // SAMPLE)
    return chosen[::step][:SAMPLE]


@pytest.mark.parametrize("name", INVARIANT)
def test_scanner_verdict_is_invariant_under(name):
    changes = []
    for item, project in sample(name):
        change = compare(item, scan_project(item.project), scan_project(project))
        if change.any:
            changes.append(f"{item.name}: lost {sorted(change.lost)} false {sorted(change.gained)}"
                           f"{' no longer distributed' if change.undistributed else ''}")
    assert not changes, "\n".join(changes)
