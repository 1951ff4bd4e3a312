"""Speed-only shortcuts of scan-speed12 change no finding. A directory scan parses a module no check reads the tree of
(no trigger word, no entry point) only when something asks for its tree; until then the distributed path reads its
imports from its bytes (``imports_in_bytes``: every import statement, maybe a docstring line more, never fewer) and
asks for the tree only where an extra import could change the answer."""

from __future__ import annotations

import ast
import gc

import pytest

from troubleshooter.scan import runner, scan_paths, shipped_patterns
from troubleshooter.scan.project import Project, _statement_imports
from troubleshooter.scan.runner import parse
from troubleshooter.scan.source import imports_in_bytes

# source -> True when the bytes name exactly the imports the tree does (False: a docstring line adds one)
READ_EXACTLY = {
    "import a.b as c, d\n": True,
    "from pkg.mod import (x,  # a comment (with parentheses)\n    y,\n)\n": True,
    "from . import x\nfrom .. import y\nfrom ...pkg import z\nfrom .import w\n": True,
    "from .a . b import c\nimport a . b as d\n": True,
    "from pkg \\\n    import name\nimport a, \\\n    b\nfrom pkg import (\\\n    name)\n": True,
    "if x: import a\ntry: import b\nexcept ImportError: pass\nx = 1; import c; from d import e\n": True,
    "import a\r\nfrom b import (c,\r\n    d)\r\n": True,
    "\ufeffimport first\n": True,
    "def f():\n    import inner\n\nclass C:\n    from pkg import member\n": True,
    "match x:\n    case 1:\n        import in_case\n": True,
    "import os  # import sys\nfrom importlib import import_module\nimport_name = 'import x'\n": True,
    "'''Usage:\n    from pkg import helper\n'''\nimport os\n": False,
    "x = 1 + \\\n    2\nimport after_continuation\n": True,
}
UNSURE = {
    "a lone carriage return ends a line": "import a\rimport b\n",
    "a comment's backslash before an import": "x = 1  # note \\\nimport b\n",
    "a name that is not ASCII": "from \uff55tils import x\n",
}


@pytest.mark.parametrize("source", sorted(READ_EXACTLY))
def test_the_bytes_name_every_import_the_tree_holds(source):
    data = source.encode()
    tree = parse("m.py", data)
    exact = set(_statement_imports(tree))
    if "match" in source:  # the statement walk does not enter match cases; the bytes see them (one more)
        exact.add(("in_case", 0))
    read = imports_in_bytes(data)
    assert read is not None and exact <= set(read)
    assert (set(read) == exact) is READ_EXACTLY[source]


@pytest.mark.parametrize("case", sorted(UNSURE))
def test_bytes_the_reading_is_unsure_of_ask_for_a_parse(case):
    assert imports_in_bytes(UNSURE[case].encode()) is None


STARTER = "import torch.distributed as dist\n\ndef setup():\n    dist.init_process_group('nccl')\n"
# module -> its source; every module but the starter has no trigger word (the scan would not parse it at once)
PROJECT = {
    "starter.py": STARTER,
    "pkg/__init__.py": "from starter import setup\n",
    "through_package.py": "import pkg\n",
    "lazy_importer.py": "import sibling\nimport leaf\n\ndef run():\n    from starter import setup\n",
    "documented.py": "'''Example:\n    from starter import setup\n'''\nimport os\n",
    "broken.py": "from starter import setup\ndef (:\n",
    "sibling.py": "import leaf\n",
    "leaf.py": "X = 1\n",
    "user.py": "import lazy_importer\n",
}


def _modules(tmp_path, with_trees: bool):
    modules, trees = [], {}
    for name, text in PROJECT.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        tree = trees[str(path)] = parse(str(path), text.encode())
        if not isinstance(tree, SyntaxError) or not with_trees:
            modules.append((str(path), text.encode(), tree if with_trees or name == "starter.py" else None))
    return modules, trees


def test_a_module_given_without_its_tree_gets_the_answer_its_tree_gives(tmp_path):
    modules, trees = _modules(tmp_path, with_trees=True)
    expected = Project(shipped_patterns()).distributed_path(modules)
    asked: list[str] = []

    def tree_of(path):
        asked.append(path.rpartition("/")[2])
        return trees[path]

    lazy, _ = _modules(tmp_path, with_trees=False)
    project = Project(shipped_patterns())
    assert project.distributed_path(lazy, tree_of) == expected
    on_path = {p.rpartition("/")[2] for p in expected}
    assert on_path == {"starter.py", "__init__.py", "through_package.py", "lazy_importer.py", "sibling.py", "leaf.py"}
    # parsed: the modules whose bytes name the starter or a package importing it (a docstring, a module that does
    # not parse); not the modules the path reaches whose imports are all on it already, nor those off it
    assert sorted(asked) == ["__init__.py", "broken.py", "documented.py", "lazy_importer.py", "through_package.py"]


def test_a_directory_scan_parses_only_the_trees_something_reads(tmp_path, monkeypatch):
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "train.py").write_text("import starter\nfrom torch.utils.data import DataLoader\n\n"
                                       "if __name__ == '__main__':\n    starter.setup()\n    DataLoader([])\n")
    parsed: list[str] = []

    def counted(path, data):
        parsed.append(path.rpartition("/")[2])
        return parse(path, data)

    monkeypatch.setattr(runner, "parse", counted)
    result = scan_paths([str(tmp_path)])
    assert [e["path"].rpartition("/")[2] for e in result.facts["scan.syntax_errors"]] == ["broken.py"]
    assert result.facts["scan.files"] == len(PROJECT) + 1
    assert not {"user.py", "sibling.py", "leaf.py"} & set(parsed)  # syntax-checked only
    assert "train.py" in parsed and "starter.py" in parsed


def _live_trees() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, ast.Module))


def test_a_directory_scan_keeps_no_tree_once_it_returns(tmp_path):
    """No module-level cache holds a tree (a helper package read from disk included): a long session of scans would
    keep them all."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .dist import setup\n")
    (tmp_path / "pkg" / "dist.py").write_text(STARTER)
    (tmp_path / "train.py").write_text("import torch\nfrom pkg import setup\n\n"
                                       "if __name__ == '__main__':\n    setup()\n    torch.distributed.barrier()\n")
    before = _live_trees()
    for _ in range(3):
        scan_paths([str(tmp_path / "train.py")])
    assert _live_trees() == before
