"""Replay every saved fuzz input (tests/fuzz/corpus/TARGET/*): each must now be handled."""

from __future__ import annotations

import pytest

from tests.fuzz.runner import problem
from tests.fuzz.targets import CORPUS, TARGETS

CASES = sorted((t, p) for t in TARGETS for p in (CORPUS / t).glob("*") if p.is_file())


@pytest.mark.parametrize("name, path", CASES, ids=[f"{t}/{p.name}" for t, p in CASES])
def test_saved_input_is_handled(name: str, path) -> None:
    found = problem(TARGETS[name], path.read_bytes())
    assert found is None, f"{path}: {found}"
