"""The analysis core: import aliases, name binding, rank-guard recognition."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from troubleshooter.scan.model import ModuleIndex
from troubleshooter.scan import shipped_patterns


def index(src: str) -> ModuleIndex:
    src = textwrap.dedent(src)
    return ModuleIndex(ast.parse(src), src, "t.py", shipped_patterns())


@pytest.mark.parametrize("src", [
    "from torch.nn.parallel import DistributedDataParallel as DDP\nDDP(m)",
    "import torch.nn.parallel as par\npar.DistributedDataParallel(m)",
    "import torch.nn as nn\nnn.parallel.DistributedDataParallel(m)",
    "import torch\ntorch.nn.parallel.DistributedDataParallel(m)",
    "from torch import nn\nnn.parallel.DistributedDataParallel(m)",
    "from torch.nn.parallel import *\nDistributedDataParallel(m)",
])
def test_ddp_spellings_resolve(src):
    assert "torch.nn.parallel.DistributedDataParallel" in index(src).call_names


def test_local_class_shadows_nothing():
    m = index("class DistributedDataParallel:\n    pass\nDistributedDataParallel(m)")
    assert not m.uses_ddp


@pytest.mark.parametrize("test,expect", [
    ("rank == 0", ("rank0", "nonzero")), ("0 == rank", ("rank0", "nonzero")),
    ("dist.get_rank() == 0", ("rank0", "nonzero")), ("is_main_process()", ("rank0", "nonzero")),
    ("args.local_rank in (-1, 0)", ("rank0", "nonzero")), ("local_rank not in [-1, 0]", ("nonzero", "rank0")),
    ("not is_master", ("nonzero", "rank0")), ("rank != 0", ("nonzero", "rank0")), ("rank", ("nonzero", "rank0")),
    ("int(os.environ['RANK']) == 0", ("rank0", "nonzero")), ("trainer.is_global_zero", ("rank0", "nonzero")),
    ("rank == 0 and step % 10 == 0", ("rank0", "rank")), ("rank % 2 == 1", ("rank", "rank")),
    ("args.rank % ngpus_per_node == 0", ("rank0", "nonzero")), ("self.gpu_id == 0", ("rank0", "nonzero")),
    ("utils.is_primary(args)", ("rank0", "nonzero")), ("ddp_rank == 0", ("rank0", "nonzero")),
    ("not args.distributed or args.rank == 0", ("rank0", "rank")),
    ("_LOCAL_RANK >= 0", None), ("self.negative_all_rank", None), ("comm.Get_rank() == 0", ("rank0", "nonzero")),
    ("rank == 1", ("rank", "rank")),
    ("local_rank != -1", None), ("rank is None", None), ("world_size > 1", None), ("args.distributed", None),
])
def test_rank_tests(test, expect):
    m = index("import os\nclass T:\n    def __init__(self):\n        self.gpu_id = int(os.environ['LOCAL_RANK'])")
    assert m.classify(ast.parse(test, mode="eval").body) == expect


def test_early_return_guards_rest_of_function():
    m = index("""
        def log(x):
            if dist.get_rank() != 0:
                return
            print(x)
        def other(x):
            print(x)
    """)
    prints = [c for c in m.calls if c.name == "print"]
    assert [p.rank0 for p in prints] == [True, False]


def test_function_called_only_under_guard_is_rank0():
    m = index("""
        def save(model):
            torch.save(model.state_dict(), "x.pt")
        if rank == 0:
            save(model)
    """)
    assert [c.rank0 for c in m.calls if c.name == "torch.save"] == [True]


def test_binding_follows_last_assignment_in_scope():
    m = index("""
        model = Net()
        def f():
            model = Other()
            use(model)
    """)
    use = next(c for c in m.calls if c.name == "use")
    assert ast.unparse(m.binding("model", use.line, use.func).value) == "Other()"


def test_flags_and_predicates_derived_from_a_rank_are_guards():
    m = index("import os\n"
              "def is_master(args):\n    return args.rank == 0\n"
              "master_process = int(os.environ['RANK']) == 0\n"
              "args.save_logs = args.logs and is_master(args)\n"
              "if args.save_logs:\n    print('a')\n"
              "if master_process:\n    print('b')\n"
              "if is_master(args):\n    print('c')\n"
              "print('d')\n")
    prints = {ast.literal_eval(s.node.args[0]): s.rank0 for s in m.calls if s.name == "print"}
    assert prints == {"a": True, "b": True, "c": True, "d": False}


def test_fast_walk_yields_what_ast_walk_yields_in_the_same_order():
    from troubleshooter.scan.guards import walk
    for path in sorted(Path(__file__).parent.joinpath("corpus").glob("*.py"))[:10]:
        tree = ast.parse(path.read_text())
        assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)], path
