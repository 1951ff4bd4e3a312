"""A file scanned alone that nothing would read (no checker's trigger word, no entry point) is only syntax-checked
(``source.compiles``: no Python tree built): its outcome must be what parsing it gives."""

from __future__ import annotations

import warnings

import pytest

from troubleshooter.scan import shipped_patterns
from troubleshooter.scan.checkers import all_checkers
from troubleshooter.scan.runner import FileScanner, parse
from troubleshooter.scan.source import compiles


@pytest.fixture(scope="module")
def scanner() -> FileScanner:
    return FileScanner(all_checkers(), shipped_patterns())


# Sources without a trigger word and without an entry point; whether ``ast.parse`` refuses them.
@pytest.mark.parametrize("source, refused", [
    (b"def f(x):\n    return x +\n", True),
    (b"x = (1,\n", True),
    (b"x = 1\0\n", True),  # a null byte
    # the symbol table refuses these, the parser does not: parsed and scanned as usual, no error
    (b"nonlocal x\n", False),
    (b"def f(a, a):\n    return a\n", False),
    (b'PATTERN = "\\d+"\n', False),  # an invalid escape: a parser warning, neither printed nor an error
    (b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n", False),
    (b"def f():\n    return 1\n", False),
], ids=["incomplete", "unclosed", "null-byte", "module-nonlocal", "duplicate-argument", "invalid-escape",
        "latin-1", "plain"])
def test_untriggered_file_alone_reports_what_parsing_reports(scanner, source, refused):
    parsed = parse("lib.py", source)  # what a scan reported before the syntax-check-only path
    assert isinstance(parsed, SyntaxError) is refused
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under python -W error: nothing may be printed nor raised
        outcome = scanner.scan("lib.py", source)
    assert outcome.syntax_error == ({"path": "lib.py", "line": parsed.lineno or 1, "detail": parsed.msg}
                                    if refused else None)
    assert outcome.hits == {} and outcome.internal_errors == []


@pytest.mark.parametrize("source, accepted", [
    (b"x = 1\n", True),
    (b"x = (1,\n", False),
    (b"nonlocal x\n", False),  # refused by the symbol table: "not known", the caller parses
])
def test_compiles_answers_accepted_or_not_known(source, accepted):
    assert compiles(source, "lib.py") is accepted


def test_untriggered_file_alone_builds_no_tree(scanner, monkeypatch):
    """The point of the check: a file no checker reads is not parsed into a tree (the per-file bench's cost)."""
    from troubleshooter.scan import runner

    def refuse(path, data):
        raise AssertionError(f"{path} was parsed into a tree")
    monkeypatch.setattr(runner, "parse", refuse)
    assert scanner.scan("lib.py", b"import math\n\ndef area(r):\n    return math.pi * r * r\n").hits == {}


def test_a_trigger_word_still_gets_the_file_parsed_and_checked(scanner):
    source = (b"import torch\nfrom torch.utils.data import DataLoader\n"
              b"from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
              b"def train(model, data):\n    model = DDP(model)\n    for x in DataLoader(data, shuffle=True):\n"
              b"        model(x).sum().backward()\n")
    assert "missing-distributed-sampler" in scanner.scan("train.py", source).hits
