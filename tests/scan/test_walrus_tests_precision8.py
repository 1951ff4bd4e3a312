"""A test that binds its value (``if (lead := rank == 0 and split == "train"):``) means the same as the bare test.

The rank tests already read through an assignment expression; these are the other readers of ``if`` tests: the
literal arguments a call binds (a helper's barrier under ``split == "train"`` is not reached by ``split="dev"``),
an early return on an empty parameter before a collective, and a sampler assigned only as a fallback
(``if sampler is None ...``). Each item keeps its verdict under the rewrite of scan_metamorphic's ``guard_walrus``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.metamorphic import Project, guard_walrus
from tests.scan.quality import BUGGY, CONSTRUCTS, expected_of, shown_findings

ITEMS = [CONSTRUCTS / "rank0_evaluation_of_a_literal_split.py", BUGGY / "bo-ke-llm-internal-medicine-45.py",
         BUGGY / "coqui-ai-Trainer-3.py"]


@pytest.mark.parametrize("item", ITEMS, ids=[p.stem for p in ITEMS])
def test_binding_the_tested_value_keeps_the_verdict(tmp_path, item):
    rewritten = guard_walrus(Project({item.name: item.read_text(encoding="utf-8")}, item.name))
    assert rewritten is not None and ":=" in rewritten.source
    path = tmp_path / item.name
    path.write_text(rewritten.source)
    assert set(shown_findings([str(path)])[0]) == expected_of(item)
