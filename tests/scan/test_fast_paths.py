"""The scanner's fast paths give the answers of their plain versions (the tree walk, the word searches on bytes)."""

from __future__ import annotations

import ast
import sys

import pytest

from troubleshooter.scan import shipped_patterns
from troubleshooter.scan.guards import walk
from troubleshooter.scan.project import WordSearch, _in_code, _start_signs, _starts

# Every construct whose fields are unusual: lists holding None ({**d}, a keyword-only parameter without default),
# identifiers and literals beside nodes, operators, patterns, comprehensions, f-strings, decorators, annotations.
ODD = '''
import os.path as p, sys
from .pkg import (a as b, c)
global_value: "int" = 1
@decorate(x=1)
async def f(pos, /, x: int = 1, *args, k, j=2, **kw) -> dict:
    global g
    async with lock() as (u, v), other:
        d = {**kw, "a": 1, **{}}
        s = {i for i in range(3) if i} | {1}
        y = [*args, -x, not x, x if x else ~x, lambda q=1, *, r: q + r]
        z = f"{x!r:>{j}} {d['a']}" + b"" * 2
        async for item in agen():
            await item
        del d["a"], s
        x += 1; x @= y; x **= 2
        assert x < 1 <= 2 != 3, "message"
        raise ValueError("e") from None
    try:
        pass
    except (KeyError, OSError) as error:
        yield error
    else:
        yield from ()
    finally:
        return {k: v for k, v in kw.items()}
class C(Base, metaclass=Meta):
    attr: list[int]
    def method(self):
        nonlocal_name = self.attr[1:2:3], self.attr[::]
        while True:
            break
        else:
            continue
'''
MATCH = '''
match command.split():
    case [action, *rest] if action:
        pass
    case {"key": value, **others}:
        pass
    case Point(x=0, y=yy) | Point(1, 2) as point:
        pass
    case None | True | "s" | -1 | 1 + 2j:
        pass
    case _:
        pass
'''


def _samples() -> list[ast.AST]:
    trees = [ast.parse(ODD), ast.parse(MATCH), ast.parse("try:\n    pass\nexcept* ValueError:\n    pass\n")]
    if sys.version_info >= (3, 12):
        trees.append(ast.parse("type Alias[T: int, *Ts, **P] = list[T]\ndef g[U](u: U) -> U: return u\n"))
    return trees


@pytest.mark.parametrize("tree", _samples(), ids=["odd", "match", "trystar", "typeparams"][:len(_samples())])
def test_walk_is_ast_walk_node_for_node(tree):
    assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)]
    operators = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    assert [id(n) for n in walk(tree, operators=False)] == [
        id(n) for n in ast.walk(tree) if not isinstance(n, operators)]


def test_walk_of_a_node_built_by_hand_without_its_lists():
    name = ast.Name("is_master", ast.Load())
    assert walk(name, operators=False) == [name]
    call = ast.Call(func=name)  # no ``args``/``keywords`` set
    assert walk(call, operators=False) == [call, name]


def _naive_starts(data: bytes, signs) -> bool:
    return any(all(_in_code(data, word) for word in sign) for sign in signs)


START_TEXTS = [
    b"model = torch.nn.parallel.DistributedDataParallel(model)\n",
    b"# DistributedDataParallel is not used here\nimport torch\n",
    b"from pytorch_lightning import Trainer\n",
    b"sampler = DistributedSamplerWrapper(sampler)\n",
    b"from transformers import AutoModel\nmodel = AutoModel.from_pretrained('x')\n",
    b"from transformers import Seq2SeqTrainer\n",
    b"x = np.array([1])  # ray\nfrom mmengine.runner import Runner\n",
    b"import ray\nfrom ray.train.torch import prepare_model\n",
    b"import ray\n# prepare_model\n",
    b"",
]


@pytest.mark.parametrize("data", START_TEXTS)
def test_start_signs_without_the_implied_ones_decide_as_all_of_them(data):
    P = shipped_patterns()
    full = {(w.encode(),) for w in ("lightning_fabric", "pytorch_lightning", "DistributedSamplerWrapper")}
    every = tuple(sorted(set(_start_signs(P)) | full))
    assert len(_start_signs(P)) < len(every)
    assert _starts(data, _start_signs(P)) == _naive_starts(data, every)


def test_start_signs_keep_no_sign_another_one_implies():
    signs = _start_signs(shipped_patterns())
    for sign in signs:
        for other in signs:
            assert other == sign or not all(any(w in mine for mine in sign) for w in other), (sign, other)


WORDS = (b"is_main", b"is_master", b"is_primary", b"import ray", b"import trl", b"rank", b"__main__", b"force=")


@pytest.mark.parametrize("data", [
    b"", b"is_available()", b"if torch.cuda.is_available() and is_master(args):", b"from ray import tune",
    b"import rayon", b"import tr", b"local_rank", b"x__main__y", b"print(x, force=True)", b"is_mai", b"is_primary",
    b"is_\nmain", b"import  ray",
])
def test_word_search_finds_what_a_search_for_each_word_finds(data):
    assert WordSearch(WORDS).any_in(data) == any(word in data for word in WORDS)


def test_calls_named_keeps_the_order_and_the_answer_of_a_plain_filter():
    from troubleshooter.scan.model import ModuleIndex
    text = ("import torch\nimport torch.distributed as dist\n"
            "def f(x):\n    dist.barrier()\n    y = torch.save(x, 'a')\n    dist.barrier()\n    return g(x)\n"
            "torch.save(1, 'b')\nunknown()(1)\n")
    m = ModuleIndex(ast.parse(text), text, "m.py", shipped_patterns())
    for names in (["torch.save"], ["torch.distributed.barrier", "torch.save"], ("g", "g", "torch.save"),
                  frozenset({"nothing"}), [""], set()):
        assert m.calls_named(names) == [c for c in m.calls if c.name in set(names)], names


def test_file_keys_are_the_real_paths_through_linked_folders_and_files(tmp_path):
    import os
    from troubleshooter.scan.project import FileLookups
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "a.py").write_text("")
    (tmp_path / "linked").symlink_to(tmp_path / "target")
    (tmp_path / "b.py").symlink_to(tmp_path / "target" / "a.py")
    lookups = FileLookups()
    for path in (tmp_path / "linked" / "a.py", tmp_path / "b.py", tmp_path / "linked" / ".." / "linked" / "a.py",
                 tmp_path / "target" / "a.py", tmp_path / "missing" / "c.py", "relative.py", "./x/../y.py"):
        assert lookups.real(str(path)) == os.path.realpath(str(path)), path
